"""Diagnostics: severity + span + message, rendered gcc-style with the source line and a caret.

Floor: above ``span`` only.
"""

from __future__ import annotations

import linecache
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pypto.span import Span


class Severity(Enum):
    """How bad a diagnostic is."""

    ERROR = "error"
    WARNING = "warning"
    PERF_HINT = "perf_hint"


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One finding of a verifier or a diagnostic check."""

    severity: Severity
    rule: str
    message: str
    span: Span | None = None
    code: int = 0
    hint: str | None = None

    def render(self) -> str:
        """Render as ``file:line:col: <severity>: <message> [<rule>]`` plus source context."""
        return render_message(self.severity.value, f"{self.message} [{self.rule}]", self.span, self.hint)


def _source_line(span: Span) -> str | None:
    if span.source_text is not None:
        lines = span.source_text.splitlines()
        idx = span.line - span.source_first_line
        return lines[idx] if 0 <= idx < len(lines) else None
    text = linecache.getline(span.file, span.line)
    return text.rstrip("\n") if text else None


def render_message(severity: str, message: str, span: Span | None, hint: str | None = None) -> str:
    """Format one message; the caret marks ``span.col`` (1-based) on the quoted source line."""
    if span is None or not span.is_known():
        out = f"{severity}: {message}"
    else:
        out = f"{span.file}:{span.line}:{span.col}: {severity}: {message}"
        line = _source_line(span)
        if line is not None:
            width = 1
            if span.end_line == span.line and span.end_col > span.col:
                width = span.end_col - span.col
            out += f"\n  {line}\n  {' ' * (span.col - 1)}^{'~' * (width - 1)}"
    if hint:
        out += f"\n  hint: {hint}"
    return out
