"""Pass registry (name -> class, imported lazily), the PassManager and the driver entry point.

Floor: above ``ir``, ``language`` (the round-trip instrument parses printed IR back), ``toolchain``
and ``errors``.
"""

from __future__ import annotations

import importlib
import re
from typing import TYPE_CHECKING, Any

from pypto.passes.pipelines import DEFAULT

if TYPE_CHECKING:
    from pypto.passes.base import Pass

# Passes with a module of their own, ``pypto.passes.<snake_case name>``; every other name of the
# Default pipeline is an identity pass that only guards unsupported constructs (guards.py).
_OWN = ("InlineFunctions", "UnrollLoops", "CtrlFlowTransform", "ConvertToSSA", "Simplify",
        "NormalizeStmtStructure", "FlattenCallExpr", "OutlineIncoreScopes", "OutlineClusterScopes",
        "ConvertTensorToTileOps", "InferTileMemorySpace", "ExpandMixedKernel", "NormalizeReturnOrder",
        "MaterializeTensorStrides", "InitMemRef", "MaterializeSemanticAliases", "MemoryReuse",
        "AllocateMemoryAddr", "DeriveCallDirections", "MaterializeRuntimeScopes", "LowerPipelineLoops",
        "ResolveBackendOpLayouts", "AutoTileMatmulL0", "MaterializeDistTensorCtx", "GatherCarriedReads",
        "HoistKernelReads", "LiftReadLoops", "FlattenTileNdTo2D", "FuseCreateAssembleToSlice",
        "LowerCompositeOps", "HoistScopeGathers", "PeelFirstIterations")
# Modules not named after their pass
_MODULES = {"InitMemRef": "init_memref", "GatherCarriedReads": "_read_gather", "HoistKernelReads": "_kernel_reads",
            "LiftReadLoops": "_read_loops", "FlattenTileNdTo2D": "flatten_tile_nd_to_2d"}


def _snake(name: str) -> str:
    """``ConvertToSSA`` -> ``convert_to_ssa``, ``AutoTileMatmulL0`` -> ``auto_tile_matmul_l0``."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name).lower()


# Upstream pass name -> module
REGISTRY: dict[str, str] = {n: f"pypto.passes.{_MODULES.get(n) or _snake(n)}" for n in _OWN}
REGISTRY.update({n: "pypto.passes.guards" for n in DEFAULT if n not in REGISTRY})


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


def __getattr__(name: str) -> Any:
    lazy = {"PassManager": "pypto.passes.manager", "run_pipeline": "pypto.passes.manager",
            "PipelineResult": "pypto.passes.manager", "PassContext": "pypto.passes.context"}
    if name in lazy:
        return getattr(importlib.import_module(lazy[name]), name)
    module = REGISTRY.get(_camel(name))
    if module is not None and module.endswith("." + name):  # a pass module not imported yet
        return importlib.import_module(module)
    core = importlib.import_module("pypto.pypto_core.passes")
    if name in getattr(core, "_FACTORIES", {}):  # upstream's factory of a pass without a module here
        return core._FACTORIES[name]
    raise AttributeError(f"module 'pypto.passes' has no attribute '{name}'")


__all__ = ["REGISTRY", "PassContext", "PassManager", "PipelineResult", "get_pass", "run_pipeline"]
