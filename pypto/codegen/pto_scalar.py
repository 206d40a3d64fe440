"""Scalar and index arithmetic for PTO kernels, restricted to what ptoas 0.1.1 can lower.

Only ``arith.constant``, ``addi``, ``muli``, ``index_cast`` and ``cmpi`` lower in ptoas 0.1.1.
Integer expressions are constant-folded first; subtraction becomes ``addi`` with a negated operand;
everything else is a compile-time UserError that says to compute the value on the host.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pypto.codegen.emitter import base_name
from pypto.codegen.pto_types import TOOLCHAIN, float_literal
from pypto.codegen.pto_values import Scalar
from pypto.ir.dtypes import bf16_round, f16_exact
from pypto.ir.expr import (
    COMPARISONS,
    BinaryExpr,
    BinOp,
    ConstBool,
    ConstFloat,
    ConstInt,
    Expr,
    UnaryExpr,
    UnOp,
    Var,
)
from pypto.ir.fold import fold
from pypto.ir.stmt import IfStmt, Stmt, YieldStmt, flatten

if TYPE_CHECKING:
    from pypto.errors import UserError

_INT_TYPES = ("index", "i32", "i64", "i16", "i8")
_CMP = {BinOp.Eq: "eq", BinOp.Ne: "ne", BinOp.Lt: "slt", BinOp.Le: "sle", BinOp.Gt: "sgt", BinOp.Ge: "sge"}
_ARITH_NAME = {BinOp.FloorDiv: "arith.floordivsi", BinOp.FloorMod: "arith.remsi", BinOp.FloatDiv: "arith.divf",
               BinOp.Min: "arith.minsi", BinOp.Max: "arith.maxsi", BinOp.BitAnd: "arith.andi",
               BinOp.BitOr: "arith.ori", BinOp.BitXor: "arith.xori", BinOp.BitShiftLeft: "arith.shli",
               BinOp.BitShiftRight: "arith.shrsi", BinOp.Pow: "math.powi", BinOp.And: "arith.andi",
               BinOp.Or: "arith.ori"}
def _const_name(value: Any, ty: str) -> str:
    if ty == "i1":
        return "true" if value else "false"
    if isinstance(value, float) or ty in ("f32", "f16", "bf16"):
        return f"cst_{ty}"
    sign = "n" if value < 0 else ""
    return f"c{sign}{abs(value)}" + ("" if ty == "index" else f"_{ty}")


class ScalarLowering:
    """Mixin of KernelCodegen: constants section, index arithmetic and scalar operands."""

    env: dict
    head: list[str]
    names: Any
    # provided by KernelCodegen, the class this mixin is used in
    op: Callable[[str], None]
    error: Callable[..., UserError]

    def __init__(self) -> None:
        self.consts: dict[tuple[str, str], str] = {}

    def const(self, value: Any, ty: str) -> str:
        """SSA name of an ``arith.constant`` (deduplicated, emitted at the top of the function)."""
        if ty in ("f32", "f16", "bf16"):
            value = self._bf16_constant(float(value)) if ty == "bf16" else float(value)
            lit = float_literal(value, ty)
        elif ty == "i1":
            value = bool(value)
            lit = str(int(value))  # 0.1.1's parser takes `1 : i1`, not `true : i1`
        else:
            value = int(value)
            if ty == "i16" and 2**15 <= value < 2**16:  # a UINT16 constant on its INT16 carrier: same bits
                value -= 2**16
            if ty == "i32" and 2**31 <= value < 2**32:  # a UINT32 constant (i32: arith takes no ui32): same bits
                value -= 2**32
            lit = str(value)
        key = (ty, repr(value))
        if key not in self.consts:
            name = self.names.unique(_const_name(value, ty))
            self.consts[key] = name
            self.head.append(f"%{name} = arith.constant {lit} : {ty}")
        return self.consts[key]

    def _bf16_constant(self, value: float) -> float:
        """A bf16 constant as its exact bf16 value; ptoas 0.1.1 gets it spelled f16, so it must be an f16 too."""
        v = bf16_round(value)
        if math.isfinite(v) and not f16_exact(v):
            raise self.error(f"BF16 constant {value!r} (bf16 value {v!r}) is outside f16's range: {TOOLCHAIN} "
                             "cannot lower bf16, and the f16 it is assembled as cannot hold this value",
                             hint="keep BF16 constants within 6.1e-05 <= |v| <= 65504 (or 0), or apply the "
                                  "constant in FP32 before the cast to BF16")
        return v

    def index(self, d: Any, into: list[str] | None = None) -> str:
        """An ``index`` SSA value for a dim / offset (int or Expr)."""
        return self.value(d, "index", into)

    def _emit(self, text: str, into: list[str] | None) -> None:
        if into is None:
            self.op(text)
        else:
            into.append(text)

    def scalar_operand(self, e: Expr, ty: str) -> str:
        """SSA of a scalar operand converted to MLIR type ``ty`` (constants are re-typed freely)."""
        if isinstance(e, ConstFloat | ConstInt):
            return self.const(e.value, ty)
        return self.value(e, ty)

    def value(self, e: Any, ty: str, into: list[str] | None = None) -> str:
        """Lower a scalar expression to an SSA value of MLIR type ``ty``."""
        folded = fold(e)
        if folded is not None:
            return self.const(folded, ty)
        if isinstance(e, ConstFloat):
            return self.const(e.value, ty)
        if isinstance(e, ConstBool):
            return self.const(e.value, "i1")
        if isinstance(e, Var):
            return self._var(e, ty, into)
        if isinstance(e, BinaryExpr):
            return self._binary(e, ty, into)
        if isinstance(e, UnaryExpr) and e.op is UnOp.Cast and ty in _INT_TYPES and e.dtype.is_int \
                and not getattr(e.operand.type, "dtype", e.dtype).is_float:
            return self.value(e.operand, ty, into)  # an integer widening/narrowing is an index_cast here
        raise self.error(f"scalar expression {e!r} cannot be lowered by {TOOLCHAIN}",
                         hint="compute it on the host and pass it as a kernel argument")

    def scalar_type_of(self, e: Expr) -> str | None:
        v = self.env.get(e) if isinstance(e, Var) else None
        return getattr(v, "ty", None)

    def _var(self, e: Var, ty: str, into: list[str] | None) -> str:
        v = self.env.get(e)
        if v is None or not hasattr(v, "ty") or v.ty == "ptr":
            raise self.error(f"'{e.name}' is not a scalar available in this kernel")
        if v.ty == ty:
            return v.ssa
        if ty == "index" and v.ty in _INT_TYPES or v.ty == "index" and ty in _INT_TYPES:
            out = self.names.unique("idx")
            self._emit(f"%{out} = arith.index_cast %{v.ssa} : {v.ty} to {ty}", into)
            return out
        raise self.error(f"scalar '{e.name}' has type {v.ty} but {ty} is needed here; {TOOLCHAIN} cannot lower "
                         "scalar conversions (arith.extf/truncf/sitofp)",
                         hint=f"pass the value as a {ty} kernel argument")

    def _binary(self, e: BinaryExpr, ty: str, into: list[str] | None) -> str:
        if e.op in COMPARISONS:
            operand_ty = self.scalar_type_of(e.lhs) or self.scalar_type_of(e.rhs) or "index"
            if operand_ty not in _INT_TYPES:
                raise self.error(f"float comparison '{e.op.value}' (arith.cmpf) cannot be lowered by {TOOLCHAIN}",
                                 hint="compare on the host and pass a flag")
            a, b = self.value(e.lhs, operand_ty, into), self.value(e.rhs, operand_ty, into)
            out = self.names.unique("cond")
            self._emit(f"%{out} = arith.cmpi {_CMP[e.op]}, %{a}, %{b} : {operand_ty}", into)
            return out
        if ty in _INT_TYPES and e.op in (BinOp.Min, BinOp.Max):
            return self._min_max(e, ty, into)
        if ty not in _INT_TYPES or e.op not in (BinOp.Add, BinOp.Sub, BinOp.Mul):
            name = _ARITH_NAME.get(e.op, f"arith.{e.op.name.lower()}")
            if ty not in _INT_TYPES:
                name = {BinOp.Add: "arith.addf", BinOp.Sub: "arith.subf", BinOp.Mul: "arith.mulf"}.get(e.op, name)
            raise self.error(f"scalar operation '{e.op.value}' ({name}) cannot be lowered by {TOOLCHAIN}; only "
                             "integer +, -, * and comparisons are supported in kernels",
                             hint="compute the value on the host and pass it as a kernel argument")
        a = self.value(e.lhs, ty, into)
        if e.op is BinOp.Sub:
            rb = fold(e.rhs)
            b = self.const(-rb, ty) if rb is not None else self._neg(self.value(e.rhs, ty, into), ty, into)
            kind = "addi"
        else:
            b = self.value(e.rhs, ty, into)
            kind = "addi" if e.op is BinOp.Add else "muli"
        out = self.names.unique("v")
        self._emit(f"%{out} = arith.{kind} %{a}, %{b} : {ty}", into)
        return out

    def _min_max(self, e: BinaryExpr, ty: str, into: list[str] | None) -> str:
        """Integer ``min`` / ``max`` without arith.minsi/maxsi/select (0.1.1 lowers none of them):
        ``b + (a - b) * index_cast(a < b)`` (``a > b`` for max), computed in ``index``."""
        a, b = self.value(e.lhs, "index", into), self.value(e.rhs, "index", into)
        cond, flag, diff, scaled = (self.names.unique(n) for n in ("cond", "flag", "diff", "scaled"))
        self._emit(f"%{cond} = arith.cmpi {'slt' if e.op is BinOp.Min else 'sgt'}, %{a}, %{b} : index", into)
        self._emit(f"%{flag} = arith.index_cast %{cond} : i1 to index", into)
        self._emit(f"%{diff} = arith.addi %{a}, %{self._neg(b, 'index', into)} : index", into)
        self._emit(f"%{scaled} = arith.muli %{diff}, %{flag} : index", into)
        out = self.names.unique("min" if e.op is BinOp.Min else "max")
        self._emit(f"%{out} = arith.addi %{b}, %{scaled} : index", into)
        if ty == "index":
            return out
        cast = self.names.unique("v")
        self._emit(f"%{cast} = arith.index_cast %{out} : index to {ty}", into)
        return cast

    def _neg(self, ssa: str, ty: str, into: list[str] | None) -> str:
        out = self.names.unique("neg")
        self._emit(f"%{out} = arith.muli %{ssa}, %{self.const(-1, ty)} : {ty}", into)
        return out

    def loop_bound(self, e: Expr) -> str:
        """A loop bound: a constant or an ``index`` value (``index_cast`` bounds break ptoas 0.1.1)."""
        ty = self.scalar_type_of(e)
        if ty is not None and ty != "index":
            raise self.error(f"loop bound '{getattr(e, 'name', e)}' is a {ty} scalar; {TOOLCHAIN} cannot use "
                             "an arith.index_cast result as an scf.for bound",
                             hint="declare the trip count as a pl.INDEX scalar (or use a constant)")
        return self.value(e, "index")

    def select_outer(self, s: IfStmt, cond: str, targets: list) -> int:
        """Integer results both branches take from values defined before the ``if`` (constants,
        parameters) as index arithmetic: ``else + (then - else) * cond``; their targets become None.

        ptoas 0.1.1's emitc stage types a constant as ``int32_t`` and rejects yielding it into an
        ``index`` (or ``i32``) ``scf.if`` result, and it has no legal ``arith.select``. Returns how
        many results were computed so.
        """
        from pypto.passes._util import defined_vars

        pairs = _branch_yields(s)
        inner = set(defined_vars(s))
        done = 0
        for i, (rv, t) in enumerate(zip(s.return_vars, targets, strict=True)):
            if t != "index" or pairs is None or any(isinstance(v, Var) and v in inner for v in pairs[i]):
                continue
            then_v, else_v = (self.value(v, "index") for v in pairs[i])
            flag = self.names.unique("flag")
            self.op(f"%{flag} = arith.index_cast %{cond} : i1 to index")
            neg = self._neg(else_v, "index", None)
            diff = self.names.unique("diff")
            self.op(f"%{diff} = arith.addi %{then_v}, %{neg} : index")
            scaled = self.names.unique("scaled")
            self.op(f"%{scaled} = arith.muli %{diff}, %{flag} : index")
            name = self.names.unique(base_name(rv.name))
            self.op(f"%{name} = arith.addi %{else_v}, %{scaled} : index")
            self.env[rv] = Scalar(name, "index")
            targets[i] = None
            done += 1
        return done


def _last_yield(body: Stmt | None) -> tuple[Expr, ...] | None:
    stmts = flatten(body) if body is not None else []
    return stmts[-1].values if stmts and isinstance(stmts[-1], YieldStmt) else None


def _branch_yields(s: IfStmt) -> list[tuple[Expr, Expr]] | None:
    """Per result: (the then-value, the else-value), or None when a branch does not end in a yield."""
    then_v, else_v = _last_yield(s.then_body), _last_yield(s.else_body)
    if then_v is None or else_v is None or not len(then_v) == len(else_v) == len(s.return_vars):
        return None
    return list(zip(then_v, else_v, strict=True))


def only_yields(s: IfStmt) -> bool:
    """Both branches are a bare yield."""
    return s.else_body is not None and len(flatten(s.then_body)) == len(flatten(s.else_body)) == 1
