"""Source locations: 1-based line and character columns in the user's original file.

Floor: the ground; imports nothing of pypto. ``pypto.ir`` re-exports :class:`Span`.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Span:
    """A region of source text; ``source_text`` optionally carries text not on disk (``pl.parse``)."""

    file: str
    line: int
    col: int
    end_line: int = 0
    end_col: int = 0
    source_text: str | None = None
    source_first_line: int = 1

    @staticmethod
    def unknown() -> Span:
        """The span of compiler-made nodes with no source."""
        return _UNKNOWN

    def is_known(self) -> bool:
        """True when the span points into a real file or text."""
        return self.line > 0

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}" if self.is_known() else "<unknown>"


_UNKNOWN = Span("<unknown>", 0, 0)
