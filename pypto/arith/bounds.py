"""Constant integer bounds and modular sets of IR integer expressions (TVM-style arith analyzers)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

from pypto.arith.intmath import gcd
from pypto.ir.dtypes import DataType
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

POS_INF = 2**63 - 1
NEG_INF = -POS_INF


def _sat(v: int) -> int:
    return max(NEG_INF, min(POS_INF, v))


@dataclass(frozen=True)
class ConstIntBound:
    """``min_value <= x <= max_value``; ``POS_INF`` / ``NEG_INF`` stand for unbounded."""

    min_value: int
    max_value: int
    kPosInf: ClassVar[int] = POS_INF  # noqa: N815 (upstream's spelling)
    kNegInf: ClassVar[int] = NEG_INF  # noqa: N815

    def is_const(self) -> bool:
        return self.min_value == self.max_value

    def is_non_negative(self) -> bool:
        return self.min_value >= 0

    def is_positive(self) -> bool:
        return self.min_value > 0

    def is_everything(self) -> bool:
        return self.min_value == NEG_INF and self.max_value == POS_INF

    def __repr__(self) -> str:
        def show(v: int) -> str:
            return "+inf" if v == POS_INF else "-inf" if v == NEG_INF else str(v)

        return f"ConstIntBound[{show(self.min_value)}, {show(self.max_value)}]"


EVERYTHING = ConstIntBound(NEG_INF, POS_INF)


def _mul(a: int, b: int) -> int:
    if 0 in (a, b):
        return 0
    if abs(a) == POS_INF or abs(b) == POS_INF:
        return POS_INF if (a > 0) == (b > 0) else NEG_INF
    return _sat(a * b)


def _add(a: int, b: int) -> int:
    if POS_INF in (a, b) and NEG_INF not in (a, b):
        return POS_INF
    if NEG_INF in (a, b) and POS_INF not in (a, b):
        return NEG_INF
    return _sat(a + b)


class ConstIntBoundAnalyzer:
    """``analyzer(expr)`` -> the ConstIntBound of an integer expression, given the bounds of its Vars."""

    def __init__(self) -> None:
        self._vars: dict[Var, ConstIntBound] = {}

    def bind(self, var: Var, min_val: int, max_val_exclusive: int) -> None:
        self._vars[var] = ConstIntBound(min_val, max_val_exclusive - 1)

    def update(self, var: Var, bound: ConstIntBound) -> None:
        self._vars[var] = bound

    def unbind(self, var: Var) -> None:
        self._vars.pop(var, None)

    def enter_constraint(self, constraint: Expr) -> Callable[[], None]:
        """Tighten Var bounds by ``constraint`` (``v < c``, ``v >= c``, ... and ``and``); returns the undo."""
        saved = dict(self._vars)
        for var, lo, hi in _var_ranges(constraint):
            old = self._vars.get(var, EVERYTHING)
            self._vars[var] = ConstIntBound(max(old.min_value, lo), min(old.max_value, hi))

        def undo() -> None:
            self._vars.clear()
            self._vars.update(saved)

        return undo

    def __call__(self, expr: Expr) -> ConstIntBound:
        return self._bound(expr)

    def _bound(self, e: Expr) -> ConstIntBound:
        if isinstance(e, ConstBool):
            return ConstIntBound(int(e.value), int(e.value))
        if isinstance(e, ConstInt):
            return ConstIntBound(_sat(e.value), _sat(e.value))
        if isinstance(e, ConstFloat):
            return ConstIntBound(_sat(math.floor(e.value)), _sat(math.ceil(e.value)))
        if isinstance(e, Var):
            return self._vars.get(e, dtype_range(getattr(e.type, "dtype", None)))
        if isinstance(e, UnaryExpr):
            return _unary(e, self._bound(e.operand))
        if not isinstance(e, BinaryExpr):
            return EVERYTHING
        if e.op in COMPARISONS or e.op in (BinOp.And, BinOp.Or):
            return ConstIntBound(0, 1)
        return _binary(e.op, self._bound(e.lhs), self._bound(e.rhs))


def dtype_range(dtype: DataType | None) -> ConstIntBound:
    """The values a scalar of ``dtype`` can hold (INDEX: non-negative; BOOL: 0/1; others unbounded)."""
    if dtype is DataType.INDEX:
        return ConstIntBound(0, POS_INF)
    if dtype is DataType.BOOL:
        return ConstIntBound(0, 1)
    name = getattr(dtype, "name", "")
    bits = int(name.lstrip("UINT")) if name.startswith(("INT", "UINT")) and name.lstrip("UINT").isdigit() else 0
    if not bits or bits >= 64:
        return ConstIntBound(0, POS_INF) if name.startswith("UINT") else EVERYTHING
    if name.startswith("UINT"):
        return ConstIntBound(0, 2**bits - 1)
    return ConstIntBound(-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)


def _unary(e: UnaryExpr, a: ConstIntBound) -> ConstIntBound:
    if e.op is UnOp.Neg:
        return ConstIntBound(_mul(a.max_value, -1), _mul(a.min_value, -1))
    if e.op is UnOp.Cast:
        r = dtype_range(e.dtype)
        return ConstIntBound(max(a.min_value, r.min_value), min(a.max_value, r.max_value))
    if e.op is UnOp.Abs:
        lo = 0 if a.min_value <= 0 <= a.max_value else min(abs(a.min_value), abs(a.max_value))
        return ConstIntBound(_sat(lo), _sat(max(abs(a.min_value), abs(a.max_value))))
    return ConstIntBound(0, 1) if e.op is UnOp.Not else EVERYTHING


def _div_corners(a: ConstIntBound, b: ConstIntBound) -> ConstIntBound:
    """Floor division by a divisor range that excludes 0: the extremes sit at the corners."""
    def q(x: int, y: int) -> int:
        if abs(x) == POS_INF:
            return x if y > 0 else -x
        return 0 if abs(y) == POS_INF else x // y

    c = [q(x, y) for x in (a.min_value, a.max_value) for y in (b.min_value, b.max_value)]
    return ConstIntBound(min(c), max(c))


def _pow(a: ConstIntBound, e: int) -> ConstIntBound:
    if e == 0:
        return ConstIntBound(1, 1)

    def p(x: int) -> int:
        if abs(x) >= 2 and e * math.log2(abs(x)) >= 63:
            return POS_INF if x > 0 or e % 2 == 0 else NEG_INF
        return _sat(x**e)

    lo, hi = p(a.min_value), p(a.max_value)
    if a.min_value >= 0:
        return ConstIntBound(lo, hi)
    if e % 2 == 0:
        return ConstIntBound(0 if a.max_value >= 0 else min(lo, hi), max(lo, hi))
    return ConstIntBound(lo, hi)


def _binary(op: BinOp, a: ConstIntBound, b: ConstIntBound) -> ConstIntBound:  # noqa: C901, PLR0911
    if op is BinOp.Add:
        return ConstIntBound(_add(a.min_value, b.min_value), _add(a.max_value, b.max_value))
    if op is BinOp.Sub:
        return ConstIntBound(_add(a.min_value, -b.max_value), _add(a.max_value, -b.min_value))
    if op is BinOp.Mul:
        c = [_mul(x, y) for x in (a.min_value, a.max_value) for y in (b.min_value, b.max_value)]
        return ConstIntBound(min(c), max(c))
    if op is BinOp.Min:
        return ConstIntBound(min(a.min_value, b.min_value), min(a.max_value, b.max_value))
    if op is BinOp.Max:
        return ConstIntBound(max(a.min_value, b.min_value), max(a.max_value, b.max_value))
    if op is BinOp.FloorDiv and (b.min_value > 0 or b.max_value < 0):
        return _div_corners(a, b)
    if op is BinOp.FloorMod and b.is_positive():
        if a.is_non_negative() and a.max_value < b.min_value:
            return a
        return ConstIntBound(0, b.max_value - 1 if b.max_value != POS_INF else POS_INF)
    if op is BinOp.Pow and b.is_const() and b.min_value >= 0:
        return _pow(a, b.min_value)
    if op is BinOp.BitAnd and a.is_non_negative() and b.is_non_negative():
        return ConstIntBound(0, min(a.max_value, b.max_value))
    if op is BinOp.BitShiftRight and a.is_non_negative() and b.is_const() and b.min_value >= 0:
        return ConstIntBound(a.min_value >> b.min_value, a.max_value >> b.min_value if a.max_value != POS_INF
                             else POS_INF)
    return EVERYTHING


def _var_ranges(c: Expr) -> list[tuple[Var, int, int]]:
    """``(var, lo, hi)`` facts of a conjunction of ``var <op> const`` comparisons."""
    if isinstance(c, BinaryExpr) and c.op is BinOp.And:
        return _var_ranges(c.lhs) + _var_ranges(c.rhs)
    if not isinstance(c, BinaryExpr) or c.op not in COMPARISONS:
        return []
    op, lhs, rhs = c.op, c.lhs, c.rhs
    if isinstance(lhs, ConstInt) and isinstance(rhs, Var):
        flip = {BinOp.Lt: BinOp.Gt, BinOp.Le: BinOp.Ge, BinOp.Gt: BinOp.Lt, BinOp.Ge: BinOp.Le}
        op, lhs, rhs = flip.get(op, op), rhs, lhs
    if not (isinstance(lhs, Var) and isinstance(rhs, ConstInt)):
        return []
    v = rhs.value
    table = {BinOp.Lt: (NEG_INF, v - 1), BinOp.Le: (NEG_INF, v), BinOp.Gt: (v + 1, POS_INF),
             BinOp.Ge: (v, POS_INF), BinOp.Eq: (v, v)}
    return [(lhs, *table[op])] if op in table else []


@dataclass(frozen=True)
class ModularSet:
    """The values ``coeff * k + base`` for integer k (coeff 0: exactly ``base``; coeff 1: everything)."""

    coeff: int
    base: int

    def is_exact(self) -> bool:
        return self.coeff == 0

    def is_everything(self) -> bool:
        return self.coeff == 1


def _norm(coeff: int, base: int) -> ModularSet:
    coeff = abs(coeff)
    return ModularSet(coeff, base % coeff if coeff else base)


class ModularSetAnalyzer:
    """``analyzer(expr)`` -> a ModularSet every value of the expression belongs to."""

    def __init__(self) -> None:
        self._vars: dict[Var, ModularSet] = {}

    def update(self, var: Var, info: ModularSet) -> None:
        self._vars[var] = info

    def unbind(self, var: Var) -> None:
        self._vars.pop(var, None)

    def enter_constraint(self, constraint: Expr) -> Callable[[], None] | None:
        return None  # a range constraint says nothing about residues

    def __call__(self, expr: Expr) -> ModularSet:
        return self._mod(expr)

    def _mod(self, e: Expr) -> ModularSet:  # noqa: PLR0911
        if isinstance(e, ConstInt):
            return ModularSet(0, e.value)
        if isinstance(e, Var):
            return self._vars.get(e, ModularSet(1, 0))
        if isinstance(e, UnaryExpr) and e.op is UnOp.Neg:
            a = self._mod(e.operand)
            return _norm(a.coeff, -a.base)
        if not isinstance(e, BinaryExpr):
            return ModularSet(1, 0)
        a, b = self._mod(e.lhs), self._mod(e.rhs)
        if e.op in (BinOp.Add, BinOp.Sub):
            sign = 1 if e.op is BinOp.Add else -1
            return _norm(gcd(a.coeff, b.coeff), a.base + sign * b.base)
        if e.op is BinOp.Mul:
            return _norm(gcd(gcd(a.coeff * b.coeff, a.coeff * b.base), b.coeff * a.base), a.base * b.base)
        if e.op is BinOp.FloorMod and b.is_exact() and b.base > 0:
            g = gcd(a.coeff, b.base)
            return _norm(g, a.base) if g else ModularSet(0, a.base % b.base)
        if e.op is BinOp.FloorDiv and b.is_exact() and b.base > 0 and a.coeff % b.base == 0:
            return _norm(a.coeff // b.base, a.base // b.base) if a.coeff else ModularSet(0, a.base // b.base)
        return ModularSet(1, 0)
