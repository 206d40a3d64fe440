"""Identity passes: upstream passes whose constructs our frontend never produces.

Each one still runs (and produces its dump); one with a guard first scans the program for the construct it
would have to transform and raises ``UnsupportedFeatureError`` naming it instead of passing it through.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pypto.errors import UnsupportedFeatureError
from pypto.ir.enums import Level
from pypto.ir.function import Program
from pypto.ir.properties import IRProperty
from pypto.ir.stmt import EvalStmt, HierarchyScopeStmt
from pypto.ir.types import TileType
from pypto.passes import REGISTRY
from pypto.passes._rewrite import match
from pypto.passes._util import iter_stmts
from pypto.passes.base import Pass
from pypto.span import Span

Finding = tuple[str, Span] | None


def no_hierarchy_scopes(program: Program) -> Finding:
    for f in program.functions:
        for s in iter_stmts(f.body):
            if isinstance(s, HierarchyScopeStmt):
                return "pl.at(level=...) hierarchy scopes other than CORE_GROUP", s.span
    return None


def no_nd_tiles(program: Program) -> Finding:
    for f in program.functions:
        for s in iter_stmts(f.body):
            t = getattr(getattr(s, "var", None), "var_type", None)
            if isinstance(t, TileType) and len(t.shape) > 2:
                return f"tiles of rank {len(t.shape)} (only 1-D/2-D tiles are supported)", s.span
    return None


def no_distributed(program: Program) -> Finding:
    for f in program.functions:
        if f.level is not None and f.level.linqu >= Level.HOST.linqu:
            return f"HOST-level (distributed) function '{f.name}'", f.span
    return None


P = IRProperty
_GUARDS: dict[str, Callable[[Program], Finding]] = {
    "OutlineHierarchyScopes": no_hierarchy_scopes,
    **dict.fromkeys(("SynthesizeAllReduceSignals", "MaterializeCommDomainScopes", "LowerHostTensorCollectives",
                     "InsertCommFence"), no_distributed)}
_PRODUCES = {"OutlineHierarchyScopes": P.HierarchyOutlined,
             "SplitVectorKernel": P.VectorKernelSplit, "MaterializeCommDomainScopes": P.CommDomainScopesMaterialized,
             "ClassifyIterArgCarry": P.IterArgCarryClassified}


@dataclass(frozen=True)
class GuardPass(Pass):
    """An identity pass that first runs the guard of its name (:data:`_GUARDS`), if it has one."""

    def run(self, program: Program) -> Program:
        guard = _GUARDS.get(self.name)
        found = guard(program) if guard is not None else None
        if found is not None:
            what, span = found
            raise UnsupportedFeatureError(f"{what} are not supported by this pypto (pass {self.name})", span)
        return program


# One subclass per registry name this module serves, named after it (LowerPipelineToSlots: PTOAS planner
# only; there LowerPipelineLoops does its work).
for _name in [n for n, module in REGISTRY.items() if module == __name__]:
    _attrs = {"name": _name, "produces": frozenset({_PRODUCES[_name]} if _name in _PRODUCES else ()),
              "__doc__": f"{_name}: an identity pass here, with the guard of its name if it has one."}
    globals()[_name] = dataclass(frozen=True)(type(_name, (GuardPass,), _attrs))


def reject_unsupported(program: Program) -> None:
    """Raise the located UnsupportedFeatureError of the first deferred construct (``system.unsupported``):
    a @pl.program defines even when a function uses what ptoas 0.1.1 cannot express; compiling it fails."""
    for f in program.functions:
        for s in iter_stmts(f.body):
            c = match(s, "system.unsupported") if isinstance(s, EvalStmt) else None
            if c is not None:
                raise UnsupportedFeatureError(str(c.kwargs["message"]), c.span, str(c.kwargs["hint"]) or None)
