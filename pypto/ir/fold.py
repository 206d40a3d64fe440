"""Constant folding of integer index arithmetic, shared by the Simplify pass and the PTO codegen."""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

from pypto.ir.expr import BinaryExpr, BinOp, ConstInt, UnaryExpr, UnOp

# integer operators both folders evaluate (a zero divisor is never folded)
INT_FOLD: dict[BinOp, Callable[[int, int], int]] = {
    BinOp.Add: operator.add, BinOp.Sub: operator.sub, BinOp.Mul: operator.mul,
    BinOp.FloorDiv: operator.floordiv, BinOp.FloorMod: operator.mod, BinOp.Min: min, BinOp.Max: max,
}
DIVISIONS = (BinOp.FloorDiv, BinOp.FloorMod)


def fold(e: Any) -> int | None:
    """The value of an integer expression made of constants, else None."""
    if isinstance(e, bool):
        return None
    if isinstance(e, int):
        return e
    if isinstance(e, ConstInt):
        return e.value
    if isinstance(e, UnaryExpr) and e.op is UnOp.Neg:
        v = fold(e.operand)
        return -v if v is not None else None
    if isinstance(e, BinaryExpr) and e.op in INT_FOLD:
        a, b = fold(e.lhs), fold(e.rhs)
        if a is None or b is None or (b == 0 and e.op in DIVISIONS):
            return None
        return INT_FOLD[e.op](a, b)
    return None
