"""Upstream's ``pypto.pypto_core.arith``: pypto's :mod:`pypto.arith` analyzers under the binding's path."""

from pypto.arith import (
    Analyzer,
    CanonicalSimplifier,
    CompareResult,
    ConstIntBound,
    ConstIntBoundAnalyzer,
    ConstraintContext,
    IntSet,
    IntSetAnalyzer,
    ModularSet,
    ModularSetAnalyzer,
    RewriteSimplifier,
    TransitiveComparisonAnalyzer,
    extended_euclidean,
    floordiv,
    floormod,
    fold_const,
    gcd,
    lcm,
)

__all__ = [
    "Analyzer", "CanonicalSimplifier", "CompareResult", "ConstIntBound", "ConstIntBoundAnalyzer", "ConstraintContext",
    "IntSet", "IntSetAnalyzer", "ModularSet", "ModularSetAnalyzer", "RewriteSimplifier",
    "TransitiveComparisonAnalyzer", "extended_euclidean", "floordiv", "floormod", "fold_const", "gcd", "lcm",
]
