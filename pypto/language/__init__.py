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
    dump_tag,
    func_attr,
    parallel,
    pipeline,
    range,  # noqa: A004
    spmd,
    static_assert,
    static_print,
    unroll,
    while_,
    yield_,
)
from pypto.language.ops import array, comm, tensor, tile
from pypto.language.scope import manual_scope, scope, spmd_submit, submit  # binds pl.scope after the module
from pypto.language.types import (
    Array,
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
    "AUTO": ("pypto.ir.ops.pipe_ops", "AUTO"),
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
    "RUNTIME": ("pypto.language.typing.scalar", "RUNTIME"),
    "optimizations": ("pypto.language.optimizations", None),
    "op": ("pypto.language.op", None),
    "parser": ("pypto.language.parser", None),
    "split": ("pypto.language.optimizations", "split"),
    "cross_core_slot": ("pypto.language.optimizations", "cross_core_slot"),
}


def __getattr__(name: str) -> Any:
    target = _LAZY.get(name)
    if target is not None:
        mod = import_module(target[0])
        value = mod if target[1] is None else getattr(mod, target[1])
        globals()[name] = value
        return value
    from pypto.language.ops import top_level

    stub = top_level(name)
    if stub is not None:
        return stub
    from pypto.language.unsupported import lookup

    missing = lookup("pl", name)  # an upstream name ptoas 0.1.1 cannot express: a stand-in that errors on use
    if missing is None:
        raise AttributeError(f"module 'pypto.language' has no attribute '{name}'")
    return missing


def __dir__() -> list[str]:
    from pypto.language.ops import PROMOTED, unified_names
    from pypto.language.unsupported import names

    return sorted(set(globals()) | set(_LAZY) | set(PROMOTED) | set(unified_names()) | set(names("pl")))


__all__ = [  # noqa: RUF022
    "function", "program", "inline", "InlineFunction", "parse", "loads", "parse_program", "loads_program",
    "jit", "JITFunction", "RUNTIME", "Tensor", "Tile", "Scalar", "Tuple", "DynVar", "InOut", "Out", "dynamic",
    "MemRef", "TaskId", "Ptr", "PtrType", "TensorView", "TileView", "const", "range", "parallel", "unroll",
    "pipeline", "while_", "yield_", "cond", "static_print", "static_assert", "func_attr", "dump_tag", "at", "cluster",
    "scope", "manual_scope", "spmd", "spmd_submit", "submit", "array", "comm", "Array", "ScopeMode", "tensor", "tile", "adir", "FunctionType", "ForKind", "AtomicType",
    "Level", "Role", "SplitMode", "MemorySpace", "Mem", "PipeType", "TensorLayout", "TileLayout", "PadValue",
    "CompactMode", "ND", "DN", "NZ", "MX_A_ZZ", "MX_B_NN", "FP4", "FP8E4M3FN", "FP8E5M2", "FP8E8M0", "FP16",
    "FP32", "BF16", "HF4", "HF8", "INT4", "INT8", "INT16", "INT32", "INT64", "UINT4", "UINT8", "UINT16",
    "UINT32", "UINT64", "BOOL", "INDEX", "TASK_ID",
]
# The rest of upstream's public names: op dispatchers (resolved lazily), and constructs ptoas 0.1.1
# cannot express, which exist so programs import cleanly and fail at compile time with a clear error.
__all__ += [  # noqa: RUF022
    "parser", "IntLike", "split_aiv", "optimizations", "split", "cross_core_slot", "prefetch", "system",
    "add", "sub", "mul", "div", "part_add", "part_mul", "part_max", "part_min", "maximum", "exp", "log",
    "cast", "concat", "reshape", "reinterpret_view", "transpose", "slice", "matmul", "batch_matmul",
    "row_max", "row_sum", "row_min", "row_prod", "col_sum", "col_max", "col_min", "col_prod", "row_argmax",
    "row_argmin", "col_argmax", "col_argmin", "row_expand", "row_expand_add", "row_expand_sub",
    "row_expand_mul", "row_expand_div", "row_expand_max", "row_expand_min", "row_expand_expdif", "col_expand",
    "col_expand_mul", "col_expand_div", "col_expand_sub", "col_expand_add", "col_expand_max",
    "col_expand_min", "col_expand_expdif", "expand_clone", "expands", "neg", "abs", "recip", "read", "write",
    "create_tile", "fillpad", "fillpad_expand", "load", "store", "move", "gatherb", "mgather", "mscatter",
    "sqrt", "rsqrt", "relu", "matmul_acc", "matmul_bias", "matmul_mx", "matmul_mx_acc", "matmul_mx_bias",
    "gemv", "gemv_acc", "gemv_bias", "minimum", "min", "max", "cmp", "cmps", "set_validshape", "rem", "rems",
    "fmod", "fmods", "and_", "ands", "or_", "ors", "xor", "xors", "shl", "shls", "shr", "shrs", "maximums",
    "minimums", "prelu", "not_", "addc", "subc", "addsc", "subsc", "lrelu", "sel", "sels", "tri", "AUTO",
    "tpush_to_aiv", "tpush_to_aic", "aiv_shard", "aic_gather", "tpop_from_aic", "tpop_from_aiv",
    "aic_initialize_pipe", "aiv_initialize_pipe", "reserve_buffer", "import_peer_buffer", "tfree_to_aic",
    "tfree_to_aiv", "assemble", "cos", "gather_row", "mrgsort", "scatter_update", "sin", "sort32",
    "create_tensor", "dim", "full", "no_dep", "dump_tag", "scatter", "arange", "gather", "paged_gather",
    "random", "create_l1", "get_block_idx", "get_block_num", "get_subblock_idx", "MemRefType",
    "PrefetchAsyncContext", "AsyncEvent", "AsyncSession",
]
