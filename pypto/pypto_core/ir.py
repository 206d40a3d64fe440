"""Upstream's ``pypto.pypto_core.ir``: pypto's IR classes under the binding's names.

Nodes, types, enums, the printer, structural equality and serialization are pypto's own. Upstream has
one class per scalar operator (``ir.Add``, ``ir.Neg``, ...); here those are constructors of pypto's
``BinaryExpr`` / ``UnaryExpr`` with that operator, and ``isinstance(e, ir.Add)`` checks the operator.
The lower-case operator helpers (``ir.add(a, b)``) build the same nodes. Binding names that have no
meaning in pypto are stand-ins that raise UnsupportedFeatureError when used.
"""

from __future__ import annotations

from typing import Any

from pypto.ir import (  # noqa: F401 (re-exported)
    ArgDirection,
    AssignStmt,
    BinaryExpr,
    BreakStmt,
    Call,
    ClusterScopeStmt,
    ConstBool,
    ConstFloat,
    ConstInt,
    ContinueStmt,
    EvalStmt,
    Expr,
    ForKind,
    ForStmt,
    Function,
    FunctionType,
    GlobalVar,
    HierarchyScopeStmt,
    IfStmt,
    InCoreScopeStmt,
    IterArg,
    Level,
    MakeTuple,
    MemorySpace,
    MemRef,
    PadValue,
    ParamDirection,
    Program,
    PtrType,
    ReturnStmt,
    Role,
    RuntimeScopeStmt,
    ScalarType,
    ScopeStmt,
    SeqStmts,
    ShapedType,
    Span,
    SpmdScopeStmt,
    Stmt,
    TensorLayout,
    TensorType,
    TensorView,
    TileLayout,
    TileType,
    TileView,
    TupleType,
    Type,
    UnaryExpr,
    UnknownType,
    Var,
    WhileStmt,
    YieldStmt,
    assert_structural_equal,
    structural_equal,
    structural_hash,
)
from pypto.ir.dtypes import DataType
from pypto.ir.enums import AtomicType, CompactMode, CoreType, PipeType, SplitMode
from pypto.ir.expr import BinOp, TupleGetItem, UnOp
from pypto.ir.types import ArrayType
from pypto.pypto_core._ir_ops import BINARY_CLASSES, UNARY_CLASSES, operator_helpers
from pypto.pypto_core._standin import stand_ins

Mem = MemorySpace
TupleGetItemExpr = TupleGetItem
DYNAMIC_DIM = -1  # a dynamic dimension's placeholder value

globals().update(BINARY_CLASSES)
globals().update(UNARY_CLASSES)
globals().update(operator_helpers())

_LAZY = {
    "python_print": ("pypto.ir.printer", "python_print"), "serialize": ("pypto.ir.serialization", "serialize"),
    "deserialize": ("pypto.ir.serialization", "deserialize"),
    "serialize_to_file": ("pypto.ir.serialization", "serialize_to_file"),
    "deserialize_from_file": ("pypto.ir.serialization", "deserialize_from_file"),
    "IRVisitor": ("pypto.ir.visitor", "IRVisitor"), "IRMutator": ("pypto.ir.visitor", "IRMutator"),
    "IRBuilder": ("pypto.ir.builder", "IRBuilder"), "ProgramBuilder": ("pypto.ir.builder", "ProgramBuilder"),
    "get_op": ("pypto.ir.ops.registry", "get_op"), "is_op_registered": ("pypto.ir.ops.registry", "has_op"),
    "register_op_conversion": ("pypto.ir.op_conversion", "register_op_conversion"),
    "CommCtxType": ("pypto.language.distributed.typing.comm_ctx", "CommCtxType"),
    "NotifyOp": ("pypto.language.distributed", "NotifyOp"), "WaitCmp": ("pypto.language.distributed", "WaitCmp"),
    "ReduceOp": ("pypto.language.distributed", "ReduceOp"),
    **{n: ("pypto.pypto_core._ir_helpers", n) for n in (
        "create_op_call", "is_incore_type", "has_op_conversion", "register_op_conversion_custom", "python_print_type",
        "flatten_to_stmts", "collect_def_vars", "find_yield_stmt", "get_last_yield_stmt", "substitute_expr",
        "substitute_stmt")},
}

_STAND_INS = {
    **stand_ins(__name__, "Op IRNode ScalarExprType Submit InlineLanguage InlineStmt ScopeKind ArgEffect "
                "WriteChannel get_op_arg_effect op_has_declared_arg_effects op_has_declared_arg_effect "
                "get_op_write_channel get_op_memory_spec set_call_attrs deduce_call_return_type "
                "register_format_callback "
                "attach_leading_comments ParentStmtAnalysis deep_clone memref_init tensor_view_semantics "
                "level_to_linqu_level Xor",
                "an internal of upstream's C++ IR library with no counterpart in pypto's Python IR"),
    **stand_ins(__name__, "DistributedTensorType WindowBufferType WindowBuffer CommDomainScopeStmt comm_layout",
                "pypto lowers distributed programs from the pld DSL without these IR nodes"),
    **stand_ins(__name__, "PrefetchAsyncContextType AsyncEventType AsyncSessionType",
                "ptoas 0.1.1 has no prefetch instruction"),
    **stand_ins(__name__, "SplitAivScopeStmt", "ptoas 0.1.1 has no cross-core pipes, so no AIV-split region"),
}


def __getattr__(name: str) -> Any:
    target = _LAZY.get(name)
    if target is not None:
        from importlib import import_module

        return getattr(import_module(target[0]), target[1])
    if name in _STAND_INS:
        return _STAND_INS[name]
    raise AttributeError(f"module 'pypto.pypto_core.ir' has no attribute '{name}'")


_ = (BinOp, UnOp, DataType, AtomicType, CompactMode, CoreType, PipeType, SplitMode, ArrayType)
