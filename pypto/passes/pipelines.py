"""Named pipelines as data: the Default pipeline is the upstream list of 49 pass names (spec §4.2)
plus pypto's own slots (:data:`OWN_SLOTS`)."""

from __future__ import annotations

from pypto.ir.options import MemoryPlanner, OptimizationStrategy

DEFAULT: tuple[str, ...] = (
    "InlineFunctions", "HoistScopeGathers", "UnrollLoops", "CtrlFlowTransform", "ConvertToSSA", "Simplify",
    "NormalizeStmtStructure", "FlattenCallExpr", "OutlineHierarchyScopes", "OutlineIncoreScopes",
    "GatherCarriedReads", "HoistKernelReads", "LiftReadLoops", "OutlineClusterScopes", "ConvertTensorToTileOps", "OptimizeOrchTensors", "LowerCompositeOps",
    "FlattenTileNdTo2D", "LegalizeTileCast", "AutoTileMatmulL0", "PeelFirstIterations",
    "CanonicalizeTileSlice",
    "InferTileMemorySpace", "InsertMxScaleAddr", "ResolveBackendOpLayouts", "LowerAutoVectorSplit",
    "ExpandMixedKernel", "InjectGMPipeBuffer", "SplitVectorKernel", "StampTfreeSplit",
    "NormalizeReturnOrder", "SkewCrossCorePipeline", "LowerPipelineToSlots", "LowerPipelineLoops",
    "CanonicalizeIOOrder", "MaterializeTensorStrides", "InitMemRef", "MaterializeSemanticAliases",
    "MemoryReuse", "AllocateMemoryAddr", "FoldNoOpReshape", "FuseCreateAssembleToSlice",
    "DeriveCallDirections", "AutoDeriveTaskDependencies", "ExpandManualPhaseFence",
    "SynthesizeAllReduceSignals", "MaterializeCommDomainScopes", "LowerHostTensorCollectives",
    "MaterializeDistTensorCtx", "Simplify", "MaterializeRuntimeScopes", "ClassifyIterArgCarry",
    "InsertCommFence", "MaterializeValidShapeSymbols",
)

# Slots upstream does not have: ptoas 0.1.1 has no scalar load from GM, so kernel reads of tensor
# scalars move to the orchestration right after outlining.
# ptoas 0.1.1 has no sub-tile view either, so row gathers into an on-chip operand become GM copies
# in front of the kernel (HoistScopeGathers).
# A loop choosing its accumulator on its first iteration is peeled after AutoTileMatmulL0 tiles its branches
# (PeelFirstIterations): 0.1.1 cannot merge the branches' buffers.
OWN_SLOTS: frozenset[str] = frozenset({"HoistScopeGathers", "GatherCarriedReads", "HoistKernelReads",
                                       "LiftReadLoops", "PeelFirstIterations"})

# Passes a memory planner removes from the pipeline (the planner does that work instead).
PLANNER_DROPS: dict[MemoryPlanner, frozenset[str]] = {
    MemoryPlanner.PYPTO: frozenset(),
    MemoryPlanner.DSA_RP: frozenset({"MemoryReuse"}),
    MemoryPlanner.PTOAS: frozenset({"MemoryReuse", "AllocateMemoryAddr"}),
}


def pass_names(strategy: OptimizationStrategy = OptimizationStrategy.Default,
               planner: MemoryPlanner = MemoryPlanner.PYPTO) -> tuple[str, ...]:
    """The pass names of ``strategy`` under ``planner`` (54 / 53 / 52 for PYPTO / DSA_RP / PTOAS)."""
    if not isinstance(strategy, OptimizationStrategy) or strategy is not OptimizationStrategy.Default:
        raise ValueError(f"Unsupported optimization strategy: {strategy}")
    drops = PLANNER_DROPS[planner]
    return tuple(n for n in DEFAULT if n not in drops)
