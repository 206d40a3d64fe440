"""The IR: immutable nodes, types, the op registry, printer, structural equality.

Floor: above ``toolchain`` and the ground (``span``, ``diagnostics``, ``errors``). ``ir.compile`` and
``ir.CompiledProgram`` are re-exported from the driver through ``_LAZY`` (declared upward reach),
so that this package imports nothing above it.
"""

from __future__ import annotations

from typing import Any

from pypto.ir.dtypes import DataType
from pypto.ir.enums import (
    ArgDirection,
    ForKind,
    FunctionType,
    Level,
    MemorySpace,
    PadValue,
    ParamDirection,
    Role,
    TensorLayout,
    TileLayout,
)
from pypto.ir.expr import (
    BinaryExpr,
    BinOp,
    Call,
    ConstBool,
    ConstFloat,
    ConstInt,
    Expr,
    GlobalVar,
    IterArg,
    MakeTuple,
    TupleGetItem,
    UnaryExpr,
    UnOp,
    Var,
)
from pypto.ir.function import Function, Program
from pypto.ir.op_conversion import (  # eager: binds ir.op_conversion to the decorator, not the module
    ConversionContext,
    op_conversion,
    register_op_conversion,
)
from pypto.ir.options import (
    BackendType,
    DiagnosticCheck,
    DiagnosticCheckSet,
    DiagnosticPhase,
    MemoryPlanner,
    OptimizationStrategy,
    PassDumpLevel,
    RuntimeKind,
    VerificationLevel,
    VerificationMode,
)
from pypto.ir.stmt import (
    AssignStmt,
    BreakStmt,
    ClusterScopeStmt,
    ContinueStmt,
    EvalStmt,
    ForStmt,
    HierarchyScopeStmt,
    IfStmt,
    InCoreScopeStmt,
    ReturnStmt,
    RuntimeScopeStmt,
    ScopeStmt,
    SeqStmts,
    SpmdScopeStmt,
    Stmt,
    WhileStmt,
    YieldStmt,
)
from pypto.ir.structural import assert_structural_equal, structural_equal, structural_hash
from pypto.ir.types import (
    MemRef,
    PtrType,
    ScalarType,
    ShapedType,
    TensorType,
    TensorView,
    TileType,
    TileView,
    TupleType,
    Type,
    UnknownType,
)
from pypto.span import Span

_LAZY = {
    "compile": ("pypto.jit.distributed.host", "compile"),  # the driver's, or a distributed compile
    "CompiledProgram": ("pypto.compiled", "CompiledProgram"),
    "python_print": ("pypto.ir.printer", "python_print"),
    "serialize": ("pypto.ir.serialization", "serialize"),
    "deserialize": ("pypto.ir.serialization", "deserialize"),
    "serialize_to_file": ("pypto.ir.serialization", "serialize_to_file"),
    "deserialize_from_file": ("pypto.ir.serialization", "deserialize_from_file"),
    "IRVisitor": ("pypto.ir.visitor", "IRVisitor"),
    "IRMutator": ("pypto.ir.visitor", "IRMutator"),
    "IRBuilder": ("pypto.ir.builder", "IRBuilder"),
    "PassManager": ("pypto.passes.manager", "PassManager"),
    "PassContext": ("pypto.passes.context", "PassContext"),
    "make_roundtrip_instrument": ("pypto.passes.instruments", "make_roundtrip_instrument"),
    "make_call": ("pypto.ir.directions", "make_call"),
    "directions": ("pypto.ir.directions", None),
    "op": ("pypto.ir.op", None),
    "operators": ("pypto.ir.operators", None),
}
# call-site direction markers (``ir.scalar_dir`` is ArgDirection.Scalar, named to leave ``scalar`` free)
input, output, output_existing, inout, no_dep, scalar_dir = (  # noqa: A001
    ArgDirection.Input, ArgDirection.Output, ArgDirection.OutputExisting, ArgDirection.InOut, ArgDirection.NoDep,
    ArgDirection.Scalar)


def __getattr__(name: str) -> Any:
    target = _LAZY.get(name)
    if target is None:
        raise AttributeError(f"module 'pypto.ir' has no attribute '{name}'")
    import importlib

    module = importlib.import_module(target[0])
    return module if target[1] is None else getattr(module, target[1])


__all__ = [  # noqa: RUF022
    "DataType", "ArgDirection", "ForKind", "FunctionType", "Level", "MemorySpace", "ParamDirection",
    "PadValue", "Role", "TensorLayout", "TileLayout", "BinaryExpr", "BinOp", "Call", "ConstBool",
    "ConstFloat", "ConstInt", "Expr", "GlobalVar", "IterArg", "MakeTuple", "TupleGetItem", "UnaryExpr",
    "UnOp", "Var", "Function", "Program", "BackendType", "DiagnosticCheck", "DiagnosticPhase",
    "MemoryPlanner", "OptimizationStrategy", "PassDumpLevel", "RuntimeKind", "VerificationLevel", "Span",
    "AssignStmt", "BreakStmt", "ClusterScopeStmt", "ContinueStmt", "EvalStmt", "ForStmt",
    "HierarchyScopeStmt", "IfStmt", "InCoreScopeStmt", "ReturnStmt", "RuntimeScopeStmt", "ScopeStmt", "SpmdScopeStmt",
    "SeqStmts", "Stmt", "WhileStmt", "YieldStmt", "assert_structural_equal", "structural_equal",
    "structural_hash", "MemRef", "PtrType", "ScalarType", "ShapedType", "TensorType", "TensorView",
    "TileType", "TileView", "TupleType", "Type", "UnknownType", "compile", "CompiledProgram",
    "python_print", "serialize", "deserialize", "serialize_to_file", "deserialize_from_file",
    "DiagnosticCheckSet", "VerificationMode", "IRVisitor", "IRMutator", "IRBuilder", "PassManager", "PassContext",
    "make_roundtrip_instrument", "ConversionContext", "op_conversion", "register_op_conversion", "make_call",
    "directions", "op", "operators", "input", "output", "output_existing", "inout", "no_dep", "scalar_dir",
]
