"""The DSL frontend's error classes and codes at upstream's path (``parser.diagnostics``).

The classes are pypto's own (:mod:`pypto.errors`): ``except ParserError`` here catches what pypto's
frontend raises, and each is a :class:`~pypto.errors.UserError` carrying a ``file:line:col`` span.

Floor: ``language`` (imports ``errors``).
"""

from pypto.language.parser.diagnostics.error_codes import ErrorCategory, ErrorCode, get_error_code
from pypto.language.parser.diagnostics.exceptions import (
    BUG_CLASS_EXCEPTIONS,
    InvalidOperationError,
    ParserError,
    ParserSyntaxError,
    ParserTypeError,
    ScopeIsolationError,
    SSAViolationError,
    UndefinedVariableError,
    UnsupportedFeatureError,
    concise_error_message,
)
from pypto.language.parser.diagnostics.renderer import ErrorRenderer

__all__ = [
    "BUG_CLASS_EXCEPTIONS", "ErrorCategory", "ErrorCode", "ErrorRenderer", "InvalidOperationError", "ParserError",
    "ParserSyntaxError", "ParserTypeError", "SSAViolationError", "ScopeIsolationError", "UndefinedVariableError",
    "UnsupportedFeatureError", "concise_error_message", "get_error_code",
]
