"""Index arithmetic for offsets passes compute: constants fold, anything else is an INDEX BinaryExpr."""

from __future__ import annotations

from pypto.ir.dtypes import DataType
from pypto.ir.expr import BinaryExpr, BinOp, ConstInt, Expr, as_int
from pypto.span import Span


def index(v: Expr | int, span: Span) -> Expr:
    return v if isinstance(v, Expr) else ConstInt(v, span=span)


def iadd(a: Expr | int, b: Expr | int, span: Span) -> Expr:
    """``a + b``; 0 operands vanish and two constants fold."""
    x, y = index(a, span), index(b, span)
    if as_int(x) == 0:
        return y
    if as_int(y) == 0:
        return x
    if (u := as_int(x)) is not None and (v := as_int(y)) is not None:
        return ConstInt(u + v, span=span)
    return BinaryExpr(BinOp.Add, x, y, DataType.INDEX, span=span)


def imul(a: Expr | int, k: int, span: Span) -> Expr:
    """``a * k`` for a constant ``k``; constants fold, ``* 1`` vanishes."""
    x = index(a, span)
    if (u := as_int(x)) is not None:
        return ConstInt(u * k, span=span)
    if k == 1:
        return x
    return BinaryExpr(BinOp.Mul, x, ConstInt(k, span=span), DataType.INDEX, span=span)
