"""Rewrite / canonical simplification of integer IR expressions, and the Analyzer that combines the arith tools.

Simplification puts sums into a canonical linear form (constant folded, like terms merged, terms in
a fixed order) and uses the Var bounds it is given: ``x // c`` is 0 and ``x % c`` is ``x`` when
``0 <= x < c``; ``min`` / ``max`` and comparisons fold when the bounds decide them.
"""

from __future__ import annotations

from collections.abc import Callable

from pypto.arith.bounds import ConstIntBoundAnalyzer
from pypto.arith.transitive import CompareResult, TransitiveComparisonAnalyzer  # noqa: F401 (re-exported)
from pypto.ir.dtypes import DataType
from pypto.ir.expr import COMPARISONS, BinaryExpr, BinOp, ConstBool, ConstInt, Expr, UnaryExpr, UnOp, Var
from pypto.ir.fold import fold
from pypto.ir.structural import structural_hash


def _dtype(e: Expr) -> DataType:
    return getattr(e, "dtype", None) or getattr(e.type, "dtype", None) or DataType.INDEX


class _Linear:
    """``sum(coeff * term) + const`` with terms keyed structurally (a Var by identity)."""

    def __init__(self, bounds: ConstIntBoundAnalyzer) -> None:
        self.bounds = bounds

    def terms(self, e: Expr, scale: int, out: dict[object, list], const: list[int]) -> None:
        if isinstance(e, ConstInt):
            const[0] += scale * e.value
        elif isinstance(e, BinaryExpr) and e.op in (BinOp.Add, BinOp.Sub):
            self.terms(e.lhs, scale, out, const)
            self.terms(e.rhs, scale if e.op is BinOp.Add else -scale, out, const)
        elif isinstance(e, BinaryExpr) and e.op is BinOp.Mul and fold(e.rhs) is not None:
            self.terms(e.lhs, scale * fold(e.rhs), out, const)
        elif isinstance(e, BinaryExpr) and e.op is BinOp.Mul and fold(e.lhs) is not None:
            self.terms(e.rhs, scale * fold(e.lhs), out, const)
        elif isinstance(e, UnaryExpr) and e.op is UnOp.Neg:
            self.terms(e.operand, -scale, out, const)
        else:
            key = e if isinstance(e, Var) else ("h", structural_hash(e))
            slot = out.setdefault(key, [e, 0])
            slot[1] += scale

    def build(self, e: Expr, dtype: DataType) -> Expr:
        out: dict[object, list] = {}
        const = [0]
        self.terms(e, 1, out, const)
        items = [(t, c) for t, c in out.values() if c != 0]
        items.sort(key=lambda tc: (0, tc[0].name, tc[0].uid) if isinstance(tc[0], Var) else (1, "", 0))
        acc: Expr | None = None
        for term, coeff in items:
            piece = term if abs(coeff) == 1 else BinaryExpr(BinOp.Mul, term, ConstInt(abs(coeff), dtype), dtype)
            if acc is None:
                acc = piece if coeff > 0 else UnaryExpr(UnOp.Neg, piece, dtype)
            else:
                acc = BinaryExpr(BinOp.Add if coeff > 0 else BinOp.Sub, acc, piece, dtype)
        if acc is None:
            return ConstInt(const[0], dtype)
        if const[0]:
            acc = BinaryExpr(BinOp.Add if const[0] > 0 else BinOp.Sub, acc, ConstInt(abs(const[0]), dtype), dtype)
        return acc


class RewriteSimplifier:
    """``simplifier(expr)``: constant folding, linear canonical form and bound-driven rewrites."""

    def __init__(self, bounds: ConstIntBoundAnalyzer | None = None) -> None:
        self.bounds = bounds or ConstIntBoundAnalyzer()
        self._subst: dict[Var, Expr] = {}

    def update(self, var: Var, new_expr: Expr | None) -> None:
        """Replace ``var`` by ``new_expr`` while simplifying (None forgets it)."""
        if new_expr is None:
            self._subst.pop(var, None)
        else:
            self._subst[var] = new_expr

    def enter_constraint(self, constraint: Expr) -> Callable[[], None]:
        return self.bounds.enter_constraint(constraint)

    def __call__(self, expr: Expr) -> Expr:
        return self._simp(expr)

    def _simp(self, e: Expr) -> Expr:  # noqa: PLR0911
        if isinstance(e, Var):
            return self._subst.get(e, e)
        if isinstance(e, UnaryExpr):
            inner = self._simp(e.operand)
            v = fold(inner)
            if e.op is UnOp.Neg and v is not None:
                return ConstInt(-v, e.dtype)
            return UnaryExpr(e.op, inner, e.dtype, span=e.span)
        if not isinstance(e, BinaryExpr):
            return e
        lhs, rhs = self._simp(e.lhs), self._simp(e.rhs)
        node = BinaryExpr(e.op, lhs, rhs, e.dtype, span=e.span)
        value = fold(node)
        if value is not None:
            return ConstInt(value, e.dtype, span=e.span)
        if e.op in (BinOp.Add, BinOp.Sub, BinOp.Mul):
            return _Linear(self.bounds).build(node, e.dtype)
        if e.op in COMPARISONS:
            return self._compare(node)
        return self._by_bounds(node)

    def _by_bounds(self, e: BinaryExpr) -> Expr:
        a, b = self.bounds(e.lhs), self.bounds(e.rhs)
        c = fold(e.rhs)
        if e.op is BinOp.FloorDiv and c == 1:
            return e.lhs
        if e.op is BinOp.FloorMod and c == 1:
            return ConstInt(0, e.dtype)
        if e.op in (BinOp.FloorDiv, BinOp.FloorMod) and b.is_positive() and a.is_non_negative() \
                and a.max_value < b.min_value:
            return ConstInt(0, e.dtype) if e.op is BinOp.FloorDiv else e.lhs
        if e.op in (BinOp.Min, BinOp.Max):
            if a.max_value <= b.min_value:
                return e.lhs if e.op is BinOp.Min else e.rhs
            if b.max_value <= a.min_value:
                return e.rhs if e.op is BinOp.Min else e.lhs
        return e

    def _compare(self, e: BinaryExpr) -> Expr:
        diff = self._simp(BinaryExpr(BinOp.Sub, e.lhs, e.rhs, _dtype(e.lhs)))
        r = self.bounds(diff)
        lo, hi = r.min_value, r.max_value
        decided = {BinOp.Lt: (hi < 0, lo >= 0), BinOp.Le: (hi <= 0, lo > 0), BinOp.Gt: (lo > 0, hi <= 0),
                   BinOp.Ge: (lo >= 0, hi < 0), BinOp.Eq: (lo == hi == 0, lo > 0 or hi < 0),
                   BinOp.Ne: (lo > 0 or hi < 0, lo == hi == 0)}[e.op]
        if decided[0]:
            return ConstBool(True, span=e.span)
        if decided[1]:
            return ConstBool(False, span=e.span)
        return e


class CanonicalSimplifier(RewriteSimplifier):
    """The canonical (linear) form: like RewriteSimplifier, terms ordered by Var name."""
