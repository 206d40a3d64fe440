"""Comparisons of integer expressions from known facts: Var bounds and difference constraints.

A fact ``a - b <= w`` between two Vars comes from a constraint such as ``a < b + 3``; facts chain
(``x <= y``, ``y < z`` give ``x < z``) through shortest paths over the facts.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import IntFlag

from pypto.arith.bounds import NEG_INF, POS_INF, ConstIntBoundAnalyzer
from pypto.ir.expr import BinaryExpr, BinOp, ConstInt, Expr, UnaryExpr, UnOp, Var


class CompareResult(IntFlag):
    """The relation of two expressions, bitwise: EQ=1, LT=2, GT=4 (LE = LT|EQ, ...)."""

    kInconsistent = 0
    kEQ = 1
    kLT = 2
    kLE = 3
    kGT = 4
    kGE = 5
    kNE = 6
    kUnknown = 7


def split(e: Expr) -> tuple[Var | None, int] | None:
    """``e`` as ``var + const`` (var None for a constant), or None when it is not of that form."""
    if isinstance(e, ConstInt):
        return None, e.value
    if isinstance(e, Var):
        return e, 0
    if isinstance(e, BinaryExpr) and e.op in (BinOp.Add, BinOp.Sub):
        a, b = split(e.lhs), split(e.rhs)
        if a is None or b is None or b[0] is not None and (e.op is BinOp.Sub or a[0] is not None):
            return None
        return (a[0] or b[0], a[1] + b[1]) if e.op is BinOp.Add else (a[0], a[1] - b[1])
    if isinstance(e, UnaryExpr) and e.op is UnOp.Cast:
        return split(e.operand)
    return None


def from_interval(lo: int, hi: int) -> CompareResult:
    """The relation of ``d = lhs - rhs`` to 0 given ``lo <= d <= hi``."""
    if lo > hi:
        return CompareResult.kInconsistent
    if lo == hi == 0:
        return CompareResult.kEQ
    if lo > 0:
        return CompareResult.kGT
    if hi < 0:
        return CompareResult.kLT
    if lo == 0:
        return CompareResult.kGE
    if hi == 0:
        return CompareResult.kLE
    return CompareResult.kUnknown


class TransitiveComparisonAnalyzer:
    """``try_compare(a, b)``: the relation of two expressions known from bound Vars and constraints."""

    def __init__(self, bounds: ConstIntBoundAnalyzer | None = None, simplifier: object = None) -> None:
        self.bounds = bounds or ConstIntBoundAnalyzer()
        self.simplifier = simplifier
        self._facts: list[tuple[Var, Var, int]] = []  # (a, b, w): a - b <= w

    def bind(self, var: Var, *args: object, allow_override: bool = False) -> None:
        """``bind(var, expr)`` (an equality fact) or ``bind(var, min, max_exclusive)`` (a range)."""
        if len(args) == 1:
            self._add_relation(var, args[0], BinOp.Eq)  # type: ignore[arg-type]
        else:
            self.bounds.bind(var, int(args[0]), int(args[1]))  # type: ignore[arg-type]

    def unbind(self, var: Var) -> None:
        self.bounds.unbind(var)
        self._facts = [f for f in self._facts if var not in (f[0], f[1])]

    def enter_constraint(self, constraint: Expr) -> Callable[[], None]:
        """Assume ``constraint`` (comparisons joined by ``and``) until the returned undo is called."""
        saved = list(self._facts)
        undo_bounds = self.bounds.enter_constraint(constraint)
        for cond in _conjuncts(constraint):
            if isinstance(cond, BinaryExpr):
                self._add_relation(cond.lhs, cond.rhs, cond.op)

        def undo() -> None:
            self._facts = saved
            undo_bounds()

        return undo

    def _add_relation(self, lhs: Expr, rhs: Expr, op: BinOp) -> None:
        a, b = split(lhs), split(rhs)
        if a is None or b is None or a[0] is None or b[0] is None:
            return
        (x, cx), (y, cy) = a, b  # x + cx  op  y + cy  ->  x - y  op  cy - cx
        k = cy - cx
        upper = {BinOp.Lt: k - 1, BinOp.Le: k, BinOp.Eq: k}.get(op)
        lower = {BinOp.Gt: k + 1, BinOp.Ge: k, BinOp.Eq: k}.get(op)
        if upper is not None:
            self._facts.append((x, y, upper))
        if lower is not None:
            self._facts.append((y, x, -lower))

    def _max_diff(self, x: Var, y: Var, propagate: bool) -> int:
        """The least known upper bound of ``x - y``."""
        b = POS_INF
        bx, by = self.bounds(x), self.bounds(y)
        if bx.max_value != POS_INF and by.min_value != NEG_INF:
            b = bx.max_value - by.min_value
        direct = [w for a, c, w in self._facts if a is x and c is y]
        b = min([b, *direct])
        if not propagate:
            return b
        dist: dict[Var, int] = {x: 0}
        for _ in range(len(self._facts)):  # Bellman-Ford over the facts (graphs here are tiny)
            changed = False
            for a, c, w in self._facts:
                if a in dist and dist[a] + w < dist.get(c, POS_INF):
                    dist[c] = dist[a] + w
                    changed = True
            if not changed:
                break
        return min(b, dist.get(y, POS_INF))

    def try_compare(self, lhs: Expr, rhs: Expr, propagate_inequalities: bool = True) -> CompareResult:
        a, b = split(lhs), split(rhs)
        if a is not None and b is not None and a[0] is b[0]:
            return from_interval(a[1] - b[1], a[1] - b[1])
        if a is not None and b is not None and a[0] is not None and b[0] is not None:
            (x, cx), (y, cy) = a, b
            hi = self._max_diff(x, y, propagate_inequalities)
            lo = -self._max_diff(y, x, propagate_inequalities)
            shift = cx - cy
            return from_interval(lo + shift if lo != NEG_INF else NEG_INF, hi + shift if hi != POS_INF else POS_INF)
        diff = BinaryExpr(BinOp.Sub, lhs, rhs, getattr(lhs, "dtype", None) or lhs.type.dtype)
        if self.simplifier is not None:
            diff = self.simplifier(diff)  # type: ignore[operator]
        r = self.bounds(diff)
        return from_interval(r.min_value, r.max_value)


def _conjuncts(e: Expr) -> list[Expr]:
    if isinstance(e, BinaryExpr) and e.op is BinOp.And:
        return _conjuncts(e.lhs) + _conjuncts(e.rhs)
    return [e]
