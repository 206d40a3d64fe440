"""Pass registry (name -> class, imported lazily), the PassManager and the driver entry point.

Floor: above ``ir``, ``language`` (the round-trip instrument parses printed IR back), ``toolchain``
and ``errors``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pypto.passes.base import Pass

_GUARDS = "pypto.passes.guards"

# Upstream pass name -> module; identity passes that only guard unsupported constructs live in guards.py.
REGISTRY: dict[str, str] = {
    "InlineFunctions": "pypto.passes.inline_functions",
    "UnrollLoops": "pypto.passes.unroll_loops",
    "CtrlFlowTransform": "pypto.passes.ctrl_flow_transform",
    "ConvertToSSA": "pypto.passes.convert_to_ssa",
    "Simplify": "pypto.passes.simplify",
    "NormalizeStmtStructure": "pypto.passes.normalize_stmt_structure",
    "FlattenCallExpr": "pypto.passes.flatten_call_expr",
    "OutlineIncoreScopes": "pypto.passes.outline_incore_scopes",
    "OutlineClusterScopes": "pypto.passes.outline_cluster_scopes",
    "ConvertTensorToTileOps": "pypto.passes.convert_tensor_to_tile_ops",
    "InferTileMemorySpace": "pypto.passes.infer_tile_memory_space",
    "ExpandMixedKernel": "pypto.passes.expand_mixed_kernel",
    "NormalizeReturnOrder": "pypto.passes.normalize_return_order",
    "MaterializeTensorStrides": "pypto.passes.materialize_tensor_strides",
    "InitMemRef": "pypto.passes.init_memref",
    "MaterializeSemanticAliases": "pypto.passes.materialize_semantic_aliases",
    "MemoryReuse": "pypto.passes.memory_reuse",
    "AllocateMemoryAddr": "pypto.passes.allocate_memory_addr",
    "DeriveCallDirections": "pypto.passes.derive_call_directions",
    "MaterializeRuntimeScopes": "pypto.passes.materialize_runtime_scopes",
    "LowerPipelineLoops": "pypto.passes.lower_pipeline_loops",
    "ResolveBackendOpLayouts": "pypto.passes.resolve_backend_op_layouts",
    "AutoTileMatmulL0": "pypto.passes.auto_tile_matmul_l0",
    "MaterializeDistTensorCtx": "pypto.passes.materialize_dist_tensor_ctx",
}
for _name in ("OutlineHierarchyScopes", "OptimizeOrchTensors", "LowerCompositeOps",
              "FlattenTileNdTo2D", "LegalizeTileCast", "CanonicalizeTileSlice",
              "InsertMxScaleAddr", "LowerAutoVectorSplit", "InjectGMPipeBuffer",
              "SplitVectorKernel", "StampTfreeSplit", "SkewCrossCorePipeline", "LowerPipelineToSlots",
              "CanonicalizeIOOrder", "FoldNoOpReshape", "FuseCreateAssembleToSlice",
              "AutoDeriveTaskDependencies", "ExpandManualPhaseFence", "SynthesizeAllReduceSignals",
              "MaterializeCommDomainScopes", "LowerHostTensorCollectives",
              "ClassifyIterArgCarry", "InsertCommFence", "MaterializeValidShapeSymbols"):
    REGISTRY[_name] = _GUARDS


def _camel(name: str) -> str:
    """Registry key for a CamelCase or snake_case pass name (underscores and case ignored)."""
    if name in REGISTRY:
        return name
    flat = name.replace("_", "").lower()
    return next((k for k in REGISTRY if k.lower() == flat), name)


_CLASSES: dict[tuple[str, str], type[Pass]] = {}  # (registry key, module) -> class, filled on first use


def get_pass(name: str) -> type[Pass]:
    """The pass class registered under ``name`` (``ConvertToSSA`` or ``convert_to_ssa``)."""
    key = _camel(name)
    module = REGISTRY.get(key)
    if module is None:
        raise KeyError(f"unknown pass '{name}'; known passes: {', '.join(sorted(REGISTRY))}")
    cls = _CLASSES.get((key, module))
    if cls is None:
        cls = _CLASSES[(key, module)] = getattr(importlib.import_module(module), key)
    return cls


def all_pass_names() -> list[str]:
    return sorted(REGISTRY)


def __getattr__(name: str) -> Any:
    lazy = {"PassManager": "pypto.passes.manager", "run_pipeline": "pypto.passes.manager",
            "PipelineResult": "pypto.passes.manager", "PassContext": "pypto.passes.context"}
    if name in lazy:
        return getattr(importlib.import_module(lazy[name]), name)
    raise AttributeError(f"module 'pypto.passes' has no attribute '{name}'")


__all__ = ["REGISTRY", "PassContext", "PassManager", "PipelineResult", "all_pass_names", "get_pass",
           "run_pipeline"]
