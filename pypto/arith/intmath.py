"""Integer helpers with floor semantics, and constant folding of IR expressions."""

from __future__ import annotations

import math

from pypto.ir.expr import ConstInt, Expr
from pypto.ir.fold import fold


def floordiv(x: int, y: int) -> int:
    """``x // y`` rounded toward negative infinity (ZeroDivisionError for y == 0)."""
    return x // y


def floormod(x: int, y: int) -> int:
    """``x - floordiv(x, y) * y``: takes the sign of ``y``."""
    return x % y


def gcd(a: int, b: int) -> int:
    return math.gcd(a, b)


def lcm(a: int, b: int) -> int:
    return math.lcm(a, b)


def extended_euclidean(a: int, b: int) -> tuple[int, int, int]:
    """``(g, x, y)`` with ``a*x + b*y == g == gcd(a, b)``."""
    x0, x1, y0, y1 = 1, 0, 0, 1
    while b:
        q = a // b
        a, b = b, a - q * b
        x0, x1 = x1, x0 - q * x1
        y0, y1 = y1, y0 - q * y1
    if a < 0:
        a, x0, y0 = -a, -x0, -y0
    return a, x0, y0


def fold_const(expr: Expr) -> Expr | None:
    """The expression folded to a ConstInt when it is integer arithmetic on constants, else None."""
    value = fold(expr)
    if value is None:
        return None
    dtype = getattr(expr, "dtype", None) or getattr(expr.type, "dtype", None)
    return ConstInt(value, dtype, span=expr.span) if dtype is not None else ConstInt(value, span=expr.span)
