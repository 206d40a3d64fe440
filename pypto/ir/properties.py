"""IR properties: named invariants that passes require, produce or invalidate (spec §3.2, §4.4)."""

from __future__ import annotations

from enum import Enum


class IRProperty(Enum):
    """The 41 upstream IR properties; the verifier checks the ``VERIFIED`` subset."""

    __hash__ = object.__hash__  # members are singletons compared by identity: hash them in C

    SSAForm = "SSAForm"
    TypeChecked = "TypeChecked"
    NoNestedCalls = "NoNestedCalls"
    NormalizedStmtStructure = "NormalizedStmtStructure"
    NoRedundantBlocks = "NoRedundantBlocks"
    SplitIncoreOrch = "SplitIncoreOrch"
    HasMemRefs = "HasMemRefs"
    IncoreTileOps = "IncoreTileOps"
    AllocatedMemoryAddr = "AllocatedMemoryAddr"
    MixedKernelExpanded = "MixedKernelExpanded"
    ClusterOutlined = "ClusterOutlined"
    TileOps2D = "TileOps2D"
    TileMemoryInferred = "TileMemoryInferred"
    BreakContinueValid = "BreakContinueValid"
    UseAfterDef = "UseAfterDef"
    HierarchyOutlined = "HierarchyOutlined"
    StructuredCtrlFlow = "StructuredCtrlFlow"
    VectorKernelSplit = "VectorKernelSplit"
    OutParamNotShadowed = "OutParamNotShadowed"
    NoNestedInCore = "NoNestedInCore"
    InOutUseValid = "InOutUseValid"
    PipelineLoopValid = "PipelineLoopValid"
    PipelineResolved = "PipelineResolved"
    CallDirectionsResolved = "CallDirectionsResolved"
    TileTypeCoherence = "TileTypeCoherence"
    InlineFunctionsEliminated = "InlineFunctionsEliminated"
    OrchestrationReferencesResolved = "OrchestrationReferencesResolved"
    TensorViewCanonical = "TensorViewCanonical"
    ArrayNotEscaped = "ArrayNotEscaped"
    CommDomainScopesMaterialized = "CommDomainScopesMaterialized"
    DistTensorCtxMaterialized = "DistTensorCtxMaterialized"
    RuntimeScopesMaterialized = "RuntimeScopesMaterialized"
    AssignTypeSymmetry = "AssignTypeSymmetry"
    ManualDepsOnSubmitOnly = "ManualDepsOnSubmitOnly"
    ReturnParamsExplicit = "ReturnParamsExplicit"
    UnrollResolved = "UnrollResolved"
    AivSplitValid = "AivSplitValid"
    HardSyncallOccupancyValid = "HardSyncallOccupancyValid"
    IterArgCarryClassified = "IterArgCarryClassified"
    AccToGmStoreValid = "AccToGmStoreValid"
    AtomicAddDtypeValid = "AtomicAddDtypeValid"


P = IRProperty

# Checked at the pipeline input (structural properties any well-formed program has).
STRUCTURAL: frozenset[IRProperty] = frozenset({
    P.TypeChecked, P.BreakContinueValid, P.NoRedundantBlocks, P.InOutUseValid,
    P.ManualDepsOnSubmitOnly, P.AtomicAddDtypeValid, P.UseAfterDef,
})

# Properties the BASIC verification level checks when a pass produces them.
VERIFIED: frozenset[IRProperty] = frozenset({
    P.SSAForm, P.TypeChecked, P.UseAfterDef, P.MixedKernelExpanded, P.AllocatedMemoryAddr,
    P.BreakContinueValid, P.NoRedundantBlocks, P.InOutUseValid, P.CallDirectionsResolved,
    P.ManualDepsOnSubmitOnly, P.ReturnParamsExplicit, P.AivSplitValid, P.HardSyncallOccupancyValid,
    P.IterArgCarryClassified, P.RuntimeScopesMaterialized, P.AccToGmStoreValid,
    P.AtomicAddDtypeValid, P.TileMemoryInferred,
})
