"""The PyPTO DSL, imported as ``pl``: decorators, types, control flow, scopes and ops.

Function bodies are parsed from source (never executed) into ``pypto.ir``; ``pl.parse`` reads the
printer's output back with the same frontend. Heavy parts load on first use.

Floor: above ``ir``, ``toolchain`` and the ground; ``pl.jit`` is re-exported from :mod:`pypto.jit`
through ``_LAZY`` (declared upward reach).
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from pypto.ir.dtypes import DataType
from pypto.ir.enums import (
    AtomicType,
    CompactMode,
    ForKind,
    FunctionType,
    Level,
    MemorySpace,
    PadValue,
    PipeType,
    Role,
    ScopeMode,
    SplitMode,
    TensorLayout,
    TileLayout,
)
from pypto.language.dsl import (
    at,
    cluster,
    cond,
    const,
    func_attr,
    manual_scope,
    parallel,
    pipeline,
    range,  # noqa: A004
    scope,
    static_assert,
    static_print,
    unroll,
    while_,
    yield_,
)
from pypto.language.ops import tensor, tile
from pypto.language.types import (
    DynVar,
    InOut,
    MemRef,
    Out,
    Ptr,
    PtrType,
    Scalar,
    TaskId,
    Tensor,
    TensorView,
    Tile,
    TileView,
    Tuple,
    adir,
    dynamic,
)

Mem = MemorySpace
ND, DN, NZ, MX_A_ZZ, MX_B_NN = (TensorLayout.ND, TensorLayout.DN, TensorLayout.NZ, TensorLayout.MX_A_ZZ,
                                TensorLayout.MX_B_NN)
FP4, FP8E4M3FN, FP8E5M2, FP8E8M0 = DataType.FP4, DataType.FP8E4M3FN, DataType.FP8E5M2, DataType.FP8E8M0
FP16, FP32, BF16, HF4, HF8 = DataType.FP16, DataType.FP32, DataType.BF16, DataType.HF4, DataType.HF8
INT4, INT8, INT16, INT32, INT64 = DataType.INT4, DataType.INT8, DataType.INT16, DataType.INT32, DataType.INT64
UINT4, UINT8, UINT16, UINT32, UINT64 = (DataType.UINT4, DataType.UINT8, DataType.UINT16, DataType.UINT32,
                                        DataType.UINT64)
BOOL, INDEX, TASK_ID = DataType.BOOL, DataType.INDEX, DataType.TASK_ID

_LAZY = {
    "function": ("pypto.language.decorators", "function"),
    "program": ("pypto.language.decorators", "program"),
    "inline": ("pypto.language.decorators", "inline"),
    "InlineFunction": ("pypto.language.decorators", "InlineFunction"),
    "parse": ("pypto.language.text", "parse"),
    "loads": ("pypto.language.text", "loads"),
    "parse_program": ("pypto.language.text", "parse_program"),
    "loads_program": ("pypto.language.text", "loads_program"),
    "jit": ("pypto.jit", "jit"),
    "JITFunction": ("pypto.jit", "JITFunction"),
    "RUNTIME": ("pypto.jit", "RUNTIME"),
}


def __getattr__(name: str) -> Any:
    target = _LAZY.get(name)
    if target is not None:
        value = getattr(import_module(target[0]), target[1])
        globals()[name] = value
        return value
    from pypto.language.ops import top_level

    stub = top_level(name)
    if stub is None:
        raise AttributeError(f"module 'pypto.language' has no attribute '{name}'")
    return stub


def __dir__() -> list[str]:
    from pypto.language.ops import PROMOTED, unified_names

    return sorted(set(globals()) | set(_LAZY) | set(PROMOTED) | set(unified_names()))


__all__ = [  # noqa: RUF022
    "function", "program", "inline", "InlineFunction", "parse", "loads", "parse_program", "loads_program",
    "jit", "JITFunction", "RUNTIME", "Tensor", "Tile", "Scalar", "Tuple", "DynVar", "InOut", "Out", "dynamic",
    "MemRef", "TaskId", "Ptr", "PtrType", "TensorView", "TileView", "const", "range", "parallel", "unroll",
    "pipeline", "while_", "yield_", "cond", "static_print", "static_assert", "func_attr", "at", "cluster",
    "scope", "manual_scope", "ScopeMode", "tensor", "tile", "adir", "FunctionType", "ForKind", "AtomicType",
    "Level", "Role", "SplitMode", "MemorySpace", "Mem", "PipeType", "TensorLayout", "TileLayout", "PadValue",
    "CompactMode", "ND", "DN", "NZ", "MX_A_ZZ", "MX_B_NN", "FP4", "FP8E4M3FN", "FP8E5M2", "FP8E8M0", "FP16",
    "FP32", "BF16", "HF4", "HF8", "INT4", "INT8", "INT16", "INT32", "INT64", "UINT4", "UINT8", "UINT16",
    "UINT32", "UINT64", "BOOL", "INDEX", "TASK_ID",
]
