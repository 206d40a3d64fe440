"""Upstream's ``pypto.ir.operators``: Python operators on scalar IR expressions (``a + b``, ``a < b``, ...).

pypto builds scalar arithmetic with :func:`binary` / :func:`unary` (the frontend's ``a + b`` on scalars
lands here); the result dtype follows the operands (an int literal takes the other operand's dtype).
"""

from __future__ import annotations

from pypto.ir.dtypes import DataType
from pypto.ir.expr import COMPARISONS, BinaryExpr, BinOp, ConstFloat, ConstInt, Expr, UnaryExpr, UnOp
from pypto.ir.types import ScalarType
from pypto.span import Span


def _dtype(e: Expr) -> DataType | None:
    t = e.type
    return t.dtype if isinstance(t, ScalarType) else None


def _is_float(dtype: DataType | None) -> bool:
    return dtype is not None and dtype.name.startswith(("FP", "BF", "HF"))


def as_expr(value: int | float | Expr, like: Expr | None = None) -> Expr:
    """An Expr unchanged; an int / float as a constant of ``like``'s dtype (INDEX / FP32 without one)."""
    if isinstance(value, Expr):
        return value
    dtype = _dtype(like) if like is not None else None
    if isinstance(value, float) or _is_float(dtype):
        return ConstFloat(float(value), dtype if _is_float(dtype) else DataType.FP32)
    return ConstInt(int(value), dtype or DataType.INDEX)


def binary(op: BinOp, lhs: int | float | Expr, rhs: int | float | Expr, span: Span | None = None) -> Expr:
    """``lhs <op> rhs`` as a BinaryExpr (BOOL for comparisons, else the left operand's dtype)."""
    a = as_expr(lhs, rhs if isinstance(rhs, Expr) else None)
    b = as_expr(rhs, a)
    dtype = DataType.BOOL if op in COMPARISONS else (_dtype(a) or _dtype(b) or DataType.INDEX)
    return BinaryExpr(op, a, b, dtype, span=span or Span.unknown())


def unary(op: UnOp, operand: Expr, dtype: DataType | None = None, span: Span | None = None) -> Expr:
    return UnaryExpr(op, operand, dtype or _dtype(operand) or DataType.INDEX, span=span or Span.unknown())
