"""C++ expressions, scalars and the few tensor ops an orchestration body may contain."""

from __future__ import annotations

from typing import Any

from pypto.codegen import orch_comm
from pypto.errors import UserError
from pypto.ir.dtypes import DataType
from pypto.ir.expr import (
    BinaryExpr,
    BinOp,
    Call,
    ConstBool,
    ConstFloat,
    ConstInt,
    Expr,
    MakeTuple,
    TupleGetItem,
    UnaryExpr,
    UnOp,
    Var,
)
from pypto.ir.stmt import AssignStmt, Stmt
from pypto.ir.types import ArrayType, ScalarType, TensorType
from pypto.ir.visitor import IRVisitor
from pypto.span import Span

_RT_DTYPE = {
    DataType.FP32: "FLOAT32", DataType.FP16: "FLOAT16", DataType.INT32: "INT32", DataType.INT16: "INT16",
    DataType.INT8: "INT8", DataType.UINT8: "UINT8", DataType.BF16: "BFLOAT16", DataType.INT64: "INT64",
    DataType.UINT64: "UINT64", DataType.UINT16: "UINT16", DataType.UINT32: "UINT32", DataType.BOOL: "BOOL",
    DataType.FP8E4M3FN: "FP8E4M3FN", DataType.FP8E8M0: "FP8E8M0", DataType.FP4: "FP4E2M1",
}
_CPP_OP = {BinOp.Add: "+", BinOp.Sub: "-", BinOp.Mul: "*", BinOp.FloorDiv: "/", BinOp.FloorMod: "%",
           BinOp.FloatDiv: "/", BinOp.Eq: "==", BinOp.Ne: "!=", BinOp.Lt: "<", BinOp.Le: "<=", BinOp.Gt: ">",
           BinOp.Ge: ">=", BinOp.And: "&&", BinOp.Or: "||", BinOp.BitAnd: "&", BinOp.BitOr: "|",
           BinOp.BitXor: "^", BinOp.BitShiftLeft: "<<", BinOp.BitShiftRight: ">>"}
_CPP_UNARY = {UnOp.Neg: "-", UnOp.Not: "!", UnOp.BitNot: "~"}


def runtime_dtype(dt: DataType, span: Span | None = None) -> str:
    """The runtime's ``DataType::`` enumerator for an element type."""
    name = _RT_DTYPE.get(dt)
    if name is None:
        raise UserError(f"dtype {dt.value} has no runtime DataType", span)
    return name


def _float_literal(v: float) -> str:
    text = repr(float(v))
    if text in ("inf", "-inf", "nan"):
        return {"inf": "__builtin_inff()", "-inf": "(-__builtin_inff())", "nan": "__builtin_nanf(\"\")"}[text]
    return text + "f" if ("." in text or "e" in text) else text + ".0f"


class CppExpr:
    """Mixin: ``env`` maps Vars to C++ names; renders scalar expressions and tensor ops."""

    em: Any

    def __init__(self) -> None:
        self.env: dict[Var, str] = {}
        self.tuple_items: dict[Var, list[str]] = {}
        self.yields: list[list[str]] = []

    def expr(self, e: Any) -> str:
        """A C++ expression for an IR scalar/tensor expression."""
        if isinstance(e, bool) or isinstance(e, ConstBool):
            return "true" if getattr(e, "value", e) else "false"
        if isinstance(e, int):
            return str(e)
        if isinstance(e, ConstInt):
            return "PTO2TaskId::invalid()" if e.dtype is DataType.TASK_ID else str(e.value)
        if isinstance(e, ConstFloat):
            return _float_literal(e.value)
        if isinstance(e, Var):
            if e not in self.env:
                raise UserError(f"'{e.name}' is used before it is defined in the orchestration", e.span)
            return self.env[e]
        if isinstance(e, BinaryExpr):
            return self._binary(e)
        if isinstance(e, UnaryExpr):
            return self._unary(e)
        if isinstance(e, TupleGetItem) and e.tuple_value in self.tuple_items:
            return self.tuple_items[e.tuple_value][e.index]  # type: ignore[index]
        raise UserError(f"expression {e!r} cannot be used in orchestration C++", getattr(e, "span", None))

    def _binary(self, e: BinaryExpr) -> str:
        a, b = self.expr(e.lhs), self.expr(e.rhs)
        if e.op in (BinOp.Min, BinOp.Max):
            cmp = "<" if e.op is BinOp.Min else ">"
            return f"(({a}) {cmp} ({b}) ? ({a}) : ({b}))"
        op = _CPP_OP.get(e.op)
        if op is None:
            raise UserError(f"operator '{e.op.value}' is not supported in orchestration code", e.span)
        return f"({a} {op} {b})"

    def _unary(self, e: UnaryExpr) -> str:
        x = self.expr(e.operand)
        if e.op is UnOp.Abs:
            return f"(({x}) < 0 ? -({x}) : ({x}))"
        if e.op is UnOp.Cast:
            return f"(({e.dtype.ctype}){x})"
        return f"({_CPP_UNARY[e.op]}{x})"

    def scalar_arg(self, e: Expr) -> str:
        """A scalar call argument for ``add_scalar`` (floats via ``to_u64``)."""
        t = e.type
        if isinstance(e, ConstFloat) or (isinstance(t, ScalarType) and t.dtype.is_float):
            val = self.expr(e)
            return f"to_u64({val})" if isinstance(e, ConstFloat) else f"to_u64(({t.dtype.ctype}){val})"  # type: ignore[union-attr]
        return f"(uint64_t)({self.expr(e)})"

    def decl_type(self, v: Var) -> str:
        t = v.type
        if isinstance(t, TensorType):
            return "ChipTensor"
        if isinstance(t, ScalarType):
            return "PTO2TaskId" if t.dtype is DataType.TASK_ID else t.dtype.ctype
        return "auto"

    def declare_scalar(self, var: Var, value: Expr) -> None:
        if isinstance(value, Var) and value in self.env and isinstance(var.type, TensorType):
            self.env[var] = self.env[value]
            return
        from pypto.codegen.emitter import base_name

        local = self.em.unique(base_name(var.name))
        self.em.line(f"{self.decl_type(var)} {local} = {self.expr(value)};")
        self.env[var] = local

    def task_id(self, e: Expr) -> str:
        return self.expr(e)

    def dep_sources(self, body: Stmt) -> set[Var]:
        """Call results whose task id is referenced by a later ``deps`` attribute."""
        scan = _DepScan()
        scan.visit(body)
        return scan.dep_vars | {scan.sources[v] for v in scan.dep_vars if v in scan.sources}

    # ------------------------------------------------------------------ tensor ops
    def tensor_op(self, c: Call, var: Var | None) -> None:
        handler = _TENSOR_OPS.get(c.op)  # type: ignore[arg-type]
        if handler is None:
            raise UserError(f"Misplaced tensor op '{c.op_name}' in Orchestration function (should be inside "
                            "InCore block)", c.span)
        handler(self, c, var)

    def _create(self, c: Call, var: Var | None) -> None:
        if var is not None and var not in self.env:
            raise UserError("tensor.create must be directly inside a runtime scope", c.span)

    def _slice(self, c: Call, var: Var | None) -> None:
        from pypto.codegen.emitter import base_name

        src = self.expr(c.args[0])
        name = self.em.unique(base_name(var.name) if var is not None else "view")
        shapes, offs = (self._list(x) for x in (c.args[1], c.args[2]))
        self.em.line(f"uint32_t {name}_shapes[{len(shapes)}] = {{{', '.join(shapes)}}};")
        self.em.line(f"uint32_t {name}_offsets[{len(offs)}] = {{{', '.join(offs)}}};")
        self.em.line(f"ChipTensor {name} = {src}.view({name}_shapes, {name}_offsets);")
        if var is not None:
            self.env[var] = name

    def _reshape(self, c: Call, var: Var | None) -> None:
        """A zero-copy view with the new shape (``ChipTensor::reshape``: a contiguous tensor, row-major)."""
        from pypto.codegen.emitter import base_name

        src = self.expr(c.args[0])
        name = self.em.unique(base_name(var.name) if var is not None else "view")
        shapes = self._list(c.args[1])
        self.em.line(f"uint32_t {name}_shapes[{len(shapes)}] = {{{', '.join(shapes)}}};")
        self.em.line(f"ChipTensor {name} = {src}.reshape({name}_shapes, {len(shapes)});")
        if var is not None:
            self.env[var] = name

    def _transpose(self, c: Call, var: Var | None) -> None:
        self._bind(var, f"{self.expr(c.args[0])}.transpose({self.expr(c.args[1])}, {self.expr(c.args[2])})")

    def _dim(self, c: Call, var: Var | None) -> None:
        t = c.args[0].type
        axis = int(getattr(c.args[1], "value", 0))
        d = t.shape[axis] if isinstance(t, TensorType) else None
        val = str(d) if isinstance(d, int) else f"(int64_t){self.expr(c.args[0])}.shapes[{axis}]"
        self._bind(var, val, "int64_t")

    def _read(self, c: Call, var: Var | None) -> None:
        t = c.args[0].type
        ctype = t.dtype.ctype if isinstance(t, TensorType) else "float"
        idx = self._list(c.args[1])
        name = self.em.unique("idx")
        self.em.line(f"uint32_t {name}[{len(idx)}] = {{{', '.join(idx)}}};")
        self._bind(var, f"get_tensor_data<{ctype}>({self.expr(c.args[0])}, {len(idx)}, {name})", ctype)

    # ------------------------------------------------------------------ arrays
    def _array_create(self, c: Call, var: Var | None) -> None:
        from pypto.codegen.emitter import base_name

        t = c.type
        assert isinstance(t, ArrayType)
        name = self.em.unique(base_name(var.name) if var is not None else "arr")
        if t.dtype is DataType.TASK_ID:
            self.em.line(f"PTO2TaskId {name}[{t.extent}];")
            self.em.line(f"for (int {name}_k = 0; {name}_k < {t.extent}; ++{name}_k) "
                         f"{name}[{name}_k] = PTO2TaskId::invalid();")
        else:
            self.em.line(f"{t.dtype.ctype} {name}[{t.extent}] = {{}};")
        if var is not None:
            self.env[var] = name

    def _array_update(self, c: Call, var: Var | None) -> None:
        """In place: the old array value is dead after its update (the chain is linear)."""
        arr = self.expr(c.args[0])
        self.em.line(f"{arr}[{self.expr(c.args[1])}] = {self.expr(c.args[2])};")
        if var is not None:
            self.env[var] = arr

    def _array_get(self, c: Call, var: Var | None) -> None:
        t = c.args[0].type
        assert isinstance(t, ArrayType)
        ctype = "PTO2TaskId" if t.dtype is DataType.TASK_ID else t.dtype.ctype
        self._bind(var, f"{self.expr(c.args[0])}[{self.expr(c.args[1])}]", ctype)

    def _bind(self, var: Var | None, value: str, ctype: str = "ChipTensor") -> None:
        from pypto.codegen.emitter import base_name

        name = self.em.unique(base_name(var.name) if var is not None else "tmp")
        self.em.line(f"{ctype} {name} = {value};")
        if var is not None:
            self.env[var] = name

    def _list(self, e: Expr) -> list[str]:
        if not isinstance(e, MakeTuple):
            raise UserError(f"expected a list, got {e!r}", e.span)
        return [self.expr(x) for x in e.elements]


class _DepScan(IRVisitor):
    """Task-id Vars referenced by ``deps`` attrs (or stored into arrays) and the calls they come from."""

    def __init__(self) -> None:
        self.dep_vars: set[Var] = set()
        self.sources: dict[Var, Var] = {}

    def visit_Call(self, c: Call) -> None:  # noqa: N802
        for d in call_deps(c):
            if isinstance(d, Var):
                self.dep_vars.add(d)
        self.generic_visit(c)

    def visit_AssignStmt(self, s: AssignStmt) -> None:  # noqa: N802
        if isinstance(s.value, TupleGetItem) and isinstance(s.value.tuple_value, Var):
            self.sources[s.var] = s.value.tuple_value
        v = s.value
        if isinstance(v, Call) and v.op == "array.update_element" and isinstance(v.args[2], Var):
            self.dep_vars.add(v.args[2])  # a task id stored into an array may become a dependency
        self.generic_visit(s)


def call_deps(c: Call) -> list[Expr]:
    """The task ids a call waits for: a submit's ``deps=`` attribute, a ``system.task_dummy``'s operand."""
    if c.op == "system.task_dummy":
        deps = c.args[0]
        return list(deps.elements) if isinstance(deps, MakeTuple) else []
    return list(c.attrs.get("deps") or c.attrs.get("manual_dep_edges") or [])


_TENSOR_OPS = {
    "tensor.create": CppExpr._create,
    "tensor.slice": CppExpr._slice,
    "tensor.reshape": CppExpr._reshape,
    "tensor.transpose": CppExpr._transpose,
    "tensor.dim": CppExpr._dim,
    "tensor.read": CppExpr._read,
    "array.create": CppExpr._array_create,
    "array.update_element": CppExpr._array_update,
    "array.get_element": CppExpr._array_get,
    **orch_comm.OPS,
}
