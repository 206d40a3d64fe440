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
from pypto.passes._util import iter_stmts
from pypto.passes.base import Pass
from pypto.span import Span

Finding = tuple[str, Span] | None
Guard = Callable[[Program], Finding]


def _first_stmt(program: Program, pred: Callable[[object], bool], what: str) -> Finding:
    for f in program.functions:
        for s in iter_stmts(f.body):
            if pred(s):
                return what, s.span
    return None


def no_hierarchy_scopes(program: Program) -> Finding:
    return _first_stmt(program, lambda s: isinstance(s, HierarchyScopeStmt),
                       "pl.at(level=...) hierarchy scopes other than CORE_GROUP")


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
OutlineHierarchyScopes = _make("OutlineHierarchyScopes", no_hierarchy_scopes, frozenset({P.HierarchyOutlined}))
OptimizeOrchTensors = _make("OptimizeOrchTensors", nothing)
LowerCompositeOps = _make("LowerCompositeOps", nothing)
FlattenTileNdTo2D = _make("FlattenTileNdTo2D", no_nd_tiles, frozenset({P.TileOps2D}))
LegalizeTileCast = _make("LegalizeTileCast", nothing)
CanonicalizeTileSlice = _make("CanonicalizeTileSlice", nothing)
InsertMxScaleAddr = _make("InsertMxScaleAddr", nothing)
LowerAutoVectorSplit = _make("LowerAutoVectorSplit", nothing)
InjectGMPipeBuffer = _make("InjectGMPipeBuffer", nothing)
SplitVectorKernel = _make("SplitVectorKernel", nothing, frozenset({P.VectorKernelSplit}))
StampTfreeSplit = _make("StampTfreeSplit", nothing)
SkewCrossCorePipeline = _make("SkewCrossCorePipeline", nothing)
LowerPipelineToSlots = _make("LowerPipelineToSlots", nothing)  # PTOAS planner only; LowerPipelineLoops does it
CanonicalizeIOOrder = _make("CanonicalizeIOOrder", nothing)
FoldNoOpReshape = _make("FoldNoOpReshape", nothing)
FuseCreateAssembleToSlice = _make("FuseCreateAssembleToSlice", nothing)
AutoDeriveTaskDependencies = _make("AutoDeriveTaskDependencies", nothing)
ExpandManualPhaseFence = _make("ExpandManualPhaseFence", nothing)
SynthesizeAllReduceSignals = _make("SynthesizeAllReduceSignals", no_distributed)
MaterializeCommDomainScopes = _make("MaterializeCommDomainScopes", no_distributed,
                                    frozenset({P.CommDomainScopesMaterialized}))
LowerHostTensorCollectives = _make("LowerHostTensorCollectives", no_distributed)
ClassifyIterArgCarry = _make("ClassifyIterArgCarry", nothing, frozenset({P.IterArgCarryClassified}))
InsertCommFence = _make("InsertCommFence", no_distributed)
MaterializeValidShapeSymbols = _make("MaterializeValidShapeSymbols", nothing)
