"""Frontend exceptions: pypto's error classes under upstream's names, plus ``concise_error_message``."""

from __future__ import annotations

from typing import Final

from pypto.errors import (
    InternalError,
    InvalidOperationError,
    ParserError,
    ParserSyntaxError,
    ParserTypeError,
    ScopeIsolationError,
    SSAViolationError,
    UndefinedVariableError,
    UnsupportedFeatureError,
    UserError,
)

# Exceptions that mean a bug in pypto rather than in the user's program.
BUG_CLASS_EXCEPTIONS: Final = (InternalError, AssertionError)


def concise_error_message(exc: BaseException, strip_trailing_span: bool = False) -> str:
    """The user-facing message of ``exc``: a pypto error's message without its rendered source
    context and hint; any other exception's first line.

    ``strip_trailing_span`` also drops a trailing ``[file:line:col]`` location from the text (for a
    caller that shows the location separately)."""
    msg = exc.message if isinstance(exc, UserError) else str(exc).split("\n\n", 1)[0]
    msg = msg.strip()
    if strip_trailing_span and msg.endswith("]") and "[" in msg:
        head, _, tail = msg.rpartition("[")
        if tail[:-1].count(":") == 2 and tail[:-1].rsplit(":", 2)[-1].isdigit():
            msg = head.rstrip()
    return msg


__all__ = [
    "BUG_CLASS_EXCEPTIONS", "InvalidOperationError", "ParserError", "ParserSyntaxError", "ParserTypeError",
    "SSAViolationError", "ScopeIsolationError", "UndefinedVariableError", "UnsupportedFeatureError",
    "concise_error_message",
]
