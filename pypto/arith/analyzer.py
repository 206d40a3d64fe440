"""``Analyzer``: the arith tools sharing one set of Var facts, and ``ConstraintContext``."""

from __future__ import annotations

from typing import Any

from pypto.arith.bounds import ConstIntBoundAnalyzer, ModularSetAnalyzer
from pypto.arith.intset import IntSetAnalyzer
from pypto.arith.simplify import CanonicalSimplifier, RewriteSimplifier
from pypto.arith.transitive import CompareResult, TransitiveComparisonAnalyzer
from pypto.ir.expr import BinaryExpr, BinOp, ConstBool, ConstInt, Expr, Var
from pypto.ir.fold import fold

# the relations (as CompareResult bits) that make each comparison true
_IMPLIED = {BinOp.Lt: CompareResult.kLT, BinOp.Le: CompareResult.kLE, BinOp.Gt: CompareResult.kGT,
            BinOp.Ge: CompareResult.kGE, BinOp.Eq: CompareResult.kEQ, BinOp.Ne: CompareResult.kNE}


class Analyzer:
    """Bounds, modular sets, int sets, simplification and proofs over the same bound Vars."""

    def __init__(self) -> None:
        self.const_int_bound = ConstIntBoundAnalyzer()
        self.modular_set = ModularSetAnalyzer()
        self.rewrite_simplify = RewriteSimplifier(self.const_int_bound)
        self.canonical_simplify = CanonicalSimplifier(self.const_int_bound)
        self.transitive_cmp = TransitiveComparisonAnalyzer(self.const_int_bound, self.rewrite_simplify)
        self.int_set = IntSetAnalyzer(self.const_int_bound)

    def bind(self, var: Var, *args: Any, allow_override: bool = False) -> None:
        """``bind(var, expr)``: var equals expr; ``bind(var, min, max_exclusive)``: var's range."""
        if len(args) == 1:
            expr = args[0]
            self.rewrite_simplify.update(var, expr)
            self.canonical_simplify.update(var, expr)
            self.const_int_bound.update(var, self.const_int_bound(expr))
            self.modular_set.update(var, self.modular_set(expr))
            self.transitive_cmp.bind(var, expr)
            return
        lo, hi = int(args[0]), int(args[1])
        self.const_int_bound.bind(var, lo, hi)
        self.int_set.bind(var, ConstInt(lo), ConstInt(hi))

    def unbind(self, var: Var) -> None:
        self.const_int_bound.unbind(var)
        self.modular_set.unbind(var)
        self.rewrite_simplify.update(var, None)
        self.canonical_simplify.update(var, None)

    def simplify(self, expr: Expr, steps: int = 2) -> Expr:
        for _ in range(max(1, steps)):
            expr = self.canonical_simplify(self.rewrite_simplify(expr))
        return expr

    def can_prove_greater_equal(self, expr: Expr, lower_bound: int) -> bool:
        return self.const_int_bound(self.simplify(expr)).min_value >= lower_bound

    def can_prove_less(self, expr: Expr, upper_bound: int) -> bool:
        return self.const_int_bound(self.simplify(expr)).max_value < upper_bound

    def can_prove_equal(self, lhs: Expr, rhs: Expr) -> bool:
        return fold(self.simplify(BinaryExpr(BinOp.Sub, lhs, rhs, getattr(lhs, "dtype", None) or rhs.type.dtype))) == 0

    def can_prove(self, cond: Expr) -> bool:
        """Simplification decides ``cond``, or (a comparison) the known relations imply it."""
        out = self.simplify(cond)
        if isinstance(out, ConstBool):
            return out.value
        if isinstance(cond, BinaryExpr) and cond.op in _IMPLIED:
            got = self.transitive_cmp.try_compare(cond.lhs, cond.rhs)
            return got != CompareResult.kInconsistent and (got & ~_IMPLIED[cond.op]) == 0
        return False

    def constraint_context(self, constraint: Expr) -> ConstraintContext:
        return ConstraintContext(self, constraint)


class ConstraintContext:
    """``with analyzer.constraint_context(i < n):`` — the facts of ``constraint`` hold inside the block."""

    def __init__(self, analyzer: Analyzer, constraint: Expr) -> None:
        self._undo = analyzer.transitive_cmp.enter_constraint(constraint)  # also tightens the Var bounds

    def exit_scope(self) -> None:
        if self._undo is not None:
            self._undo()
            self._undo = None

    def __enter__(self) -> ConstraintContext:
        return self

    def __exit__(self, *exc: object) -> None:
        self.exit_scope()
