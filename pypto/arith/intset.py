"""Symbolic integer intervals (``IntSet``) of IR expressions."""

from __future__ import annotations

from collections.abc import Callable

from pypto.arith.bounds import NEG_INF, POS_INF, ConstIntBoundAnalyzer
from pypto.ir.dtypes import DataType
from pypto.ir.expr import BinaryExpr, BinOp, ConstInt, Expr, Var
from pypto.ir.fold import fold


class IntSet:
    """The closed interval ``[min_value, max_value]`` of Exprs; None is unbounded on that side."""

    def __init__(self, min_value: Expr | None, max_value: Expr | None) -> None:
        self.min_value = min_value
        self.max_value = max_value

    def is_everything(self) -> bool:
        return self.min_value is None and self.max_value is None

    def is_single_point(self) -> bool:
        return self.min_value is not None and self.min_value is self.max_value

    def is_nothing(self) -> bool:
        lo, hi = fold(self.min_value), fold(self.max_value)
        return lo is not None and hi is not None and lo > hi

    @staticmethod
    def everything() -> IntSet:
        return IntSet(None, None)

    @staticmethod
    def single_point(val: Expr) -> IntSet:
        return IntSet(val, val)

    @staticmethod
    def interval(min_value: Expr, max_value: Expr) -> IntSet:
        return IntSet(min_value, max_value)

    def __repr__(self) -> str:
        return f"IntSet[{self.min_value}, {self.max_value}]"


def _combine(op: BinOp, a: Expr | None, b: Expr | None) -> Expr | None:
    if a is None or b is None:
        return None
    from pypto.arith.simplify import RewriteSimplifier

    return RewriteSimplifier()(BinaryExpr(op, a, b, DataType.INDEX))


class IntSetAnalyzer:
    """``analyzer(expr)`` -> the IntSet of an integer expression, from the sets bound to its Vars."""

    def __init__(self, bounds: ConstIntBoundAnalyzer | None = None) -> None:
        self._vars: dict[Var, IntSet] = {}
        self.bounds = bounds or ConstIntBoundAnalyzer()

    def update(self, var: Var, int_set: IntSet) -> None:
        self._vars[var] = int_set

    def bind(self, var: Var, min_val: Expr, max_val_exclusive: Expr) -> None:
        """``var`` ranges over ``[min_val, max_val_exclusive - 1]``."""
        self._vars[var] = IntSet(min_val, _combine(BinOp.Sub, max_val_exclusive, ConstInt(1)))

    def enter_constraint(self, constraint: Expr) -> Callable[[], None] | None:
        return self.bounds.enter_constraint(constraint)

    def __call__(self, expr: Expr) -> IntSet:  # noqa: PLR0911
        if isinstance(expr, ConstInt):
            return IntSet.single_point(expr)
        if isinstance(expr, Var) and expr in self._vars:
            return self._vars[expr]
        if isinstance(expr, BinaryExpr) and expr.op in (BinOp.Add, BinOp.Sub):
            a, b = self(expr.lhs), self(expr.rhs)
            if expr.op is BinOp.Add:
                return IntSet(_combine(BinOp.Add, a.min_value, b.min_value),
                              _combine(BinOp.Add, a.max_value, b.max_value))
            return IntSet(_combine(BinOp.Sub, a.min_value, b.max_value), _combine(BinOp.Sub, a.max_value, b.min_value))
        if isinstance(expr, BinaryExpr) and expr.op is BinOp.Mul and fold(expr.rhs) is not None:
            a, c = self(expr.lhs), ConstInt(fold(expr.rhs))
            lo, hi = _combine(BinOp.Mul, a.min_value, c), _combine(BinOp.Mul, a.max_value, c)
            return IntSet(lo, hi) if c.value >= 0 else IntSet(hi, lo)
        b = self.bounds(expr)
        return IntSet(None if b.min_value == NEG_INF else ConstInt(b.min_value),
                      None if b.max_value == POS_INF else ConstInt(b.max_value))
