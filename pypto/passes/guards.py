"""Identity passes: upstream passes whose constructs our frontend never produces.

Each one still runs (and produces its dump), but first scans the program for the construct it would
have to transform and raises ``UnsupportedFeatureError`` naming it instead of passing it through.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

from pypto.errors import UnsupportedFeatureError
from pypto.ir.enums import Level
from pypto.ir.function import Program
from pypto.ir.properties import IRProperty
from pypto.ir.stmt import HierarchyScopeStmt
from pypto.ir.types import TileType
from pypto.passes import REGISTRY
from pypto.passes._util import iter_stmts
from pypto.passes.base import Pass
from pypto.span import Span

Finding = tuple[str, Span] | None
Guard = Callable[[Program], Finding]


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


def nothing(program: Program) -> Finding:
    return None


@dataclass(frozen=True)
class GuardPass(Pass):
    """An identity pass with a guard; subclasses set ``name`` and ``guard``."""

    guard: ClassVar[Guard] = nothing

    def run(self, program: Program) -> Program:
        found = type(self).guard(program)
        if found is not None:
            what, span = found
            raise UnsupportedFeatureError(f"{what} are not supported by this pypto (pass {self.name})", span)
        return program


def _make(name: str, guard: Guard, produces: frozenset[IRProperty] = frozenset()) -> type[GuardPass]:
    cls = type(name, (GuardPass,), {"name": name, "guard": staticmethod(guard), "produces": produces,
                                    "__doc__": f"{name}: identity here; guarded by {guard.__name__}."})
    return dataclass(frozen=True)(cls)


P = IRProperty
_GUARDS: dict[str, Guard] = {"OutlineHierarchyScopes": no_hierarchy_scopes,
                             **dict.fromkeys(("SynthesizeAllReduceSignals", "MaterializeCommDomainScopes",
                                              "LowerHostTensorCollectives", "InsertCommFence"), no_distributed)}
_PRODUCES = {"OutlineHierarchyScopes": P.HierarchyOutlined,
             "SplitVectorKernel": P.VectorKernelSplit, "MaterializeCommDomainScopes": P.CommDomainScopesMaterialized,
             "ClassifyIterArgCarry": P.IterArgCarryClassified}

# One class per registry name this module serves (LowerPipelineToSlots: PTOAS planner only; there
# LowerPipelineLoops does its work).
for _name in [n for n, module in REGISTRY.items() if module == __name__]:
    _produces = frozenset({_PRODUCES[_name]} if _name in _PRODUCES else ())
    globals()[_name] = _make(_name, _GUARDS.get(_name, nothing), _produces)


def reject_unsupported(program: Program) -> None:
    """Raise the located UnsupportedFeatureError of the first deferred construct (``system.unsupported``):
    a @pl.program defines even when a function uses what ptoas 0.1.1 cannot express; compiling it fails."""
    from pypto.ir.expr import Call
    from pypto.ir.stmt import EvalStmt

    for f in program.functions:
        for s in iter_stmts(f.body):
            c = s.expr if isinstance(s, EvalStmt) else None
            if isinstance(c, Call) and c.op == "system.unsupported":
                raise UnsupportedFeatureError(str(c.kwargs["message"]), c.span, str(c.kwargs["hint"]) or None)
