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


def affine(e: Any) -> tuple[Any, int, int] | None:
    """``(v, a, b)`` with ``e == a * v + b`` for one Var ``v`` (a != 0), from ``+``, ``-`` and ``*`` by
    constants; None for anything else (two variables, division, a constant)."""
    from pypto.ir.expr import Var

    if isinstance(e, Var):
        return e, 1, 0
    if not isinstance(e, BinaryExpr) or e.op not in (BinOp.Add, BinOp.Sub, BinOp.Mul):
        return None
    lc, rc = fold(e.lhs), fold(e.rhs)
    if e.op is BinOp.Mul:
        inner, k = (affine(e.rhs), lc) if lc is not None else (affine(e.lhs), rc)
        if inner is None or not k:
            return None
        return inner[0], inner[1] * k, inner[2] * k
    if rc is not None:
        inner = affine(e.lhs)
        return None if inner is None else (inner[0], inner[1], inner[2] + (rc if e.op is BinOp.Add else -rc))
    if lc is not None:
        inner = affine(e.rhs)
        if inner is None:
            return None
        sign = 1 if e.op is BinOp.Add else -1
        return inner[0], sign * inner[1], lc + sign * inner[2]
    return None
