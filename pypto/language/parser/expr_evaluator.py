"""Upstream's ``parser.expr_evaluator.ExprEvaluator``: an internal of upstream's frontend, not part of pypto's API.

pypto's frontend is built differently (:mod:`pypto.language.function_parser`); using the name
raises an UnsupportedFeatureError that says so and points at ``pl.function`` / ``pl.parse``.
"""

from pypto.language.unsupported import Unsupported

ExprEvaluator = Unsupported("pypto.language.parser.expr_evaluator.ExprEvaluator", "parser")

__all__ = ["ExprEvaluator"]
