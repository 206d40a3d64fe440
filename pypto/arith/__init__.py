"""``pypto.arith``: integer arithmetic analysis of IR expressions (TVM-style).

Constant bounds (:class:`ConstIntBoundAnalyzer`), residues (:class:`ModularSetAnalyzer`), symbolic
intervals (:class:`IntSetAnalyzer`), simplification to a canonical linear form that uses known bounds
(:class:`RewriteSimplifier`, :class:`CanonicalSimplifier`), comparisons (:class:`TransitiveComparisonAnalyzer`)
and the :class:`Analyzer` that shares Var facts between them (``bind``, ``constraint_context``, ``can_prove*``).

Floor: above ``ir`` (imports ``ir`` and the ground only).
"""

from pypto.arith.analyzer import Analyzer, ConstraintContext
from pypto.arith.bounds import ConstIntBound, ConstIntBoundAnalyzer, ModularSet, ModularSetAnalyzer
from pypto.arith.intmath import extended_euclidean, floordiv, floormod, fold_const, gcd, lcm
from pypto.arith.intset import IntSet, IntSetAnalyzer
from pypto.arith.simplify import (
    CanonicalSimplifier,
    CompareResult,
    RewriteSimplifier,
    TransitiveComparisonAnalyzer,
)

__all__ = [
    "Analyzer", "CanonicalSimplifier", "CompareResult", "ConstIntBound", "ConstIntBoundAnalyzer", "ConstraintContext",
    "IntSet", "IntSetAnalyzer", "ModularSet", "ModularSetAnalyzer", "RewriteSimplifier",
    "TransitiveComparisonAnalyzer", "extended_euclidean", "floordiv", "floormod", "fold_const", "gcd", "lcm",
]
