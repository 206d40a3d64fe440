"""Mapping ``ast`` positions back to the user's original file (1-based character columns)."""

from __future__ import annotations

import ast
import inspect
import textwrap
from dataclasses import dataclass, field
from typing import Any

from pypto.span import Span


@dataclass(frozen=True)
class Source:
    """Text handed to ``ast.parse`` plus where it sits in the original file.

    ``line_offset`` is added to ast line numbers and ``col_offset`` (the indentation removed by
    dedenting) to every column; ``embed_text`` is set for text that is not on disk (``pl.parse``).
    """

    file: str
    text: str
    line_offset: int = 0
    col_offset: int = 0
    embed_text: bool = False
    lines: list[str] = field(default_factory=list, compare=False, repr=False)

    def __post_init__(self) -> None:
        self.lines.extend(self.text.splitlines())

    @staticmethod
    def from_object(obj: Any) -> Source:
        """The source of a function or class, dedented, with its file line offset."""
        try:
            lines, first = inspect.getsourcelines(obj)
        except (OSError, TypeError) as exc:
            raise TypeError(f"cannot read the source of {getattr(obj, '__qualname__', obj)!r} ({exc}); "
                            "define it in a .py file or use pl.parse(text)") from None
        raw = "".join(lines)
        indent = len(lines[0]) - len(lines[0].lstrip())
        file = inspect.getsourcefile(obj) or "<unknown>"
        return Source(file, textwrap.dedent(raw), max(first - 1, 0), indent)

    def parse(self) -> ast.Module:
        """``ast.parse`` the text; a Python syntax error becomes PythonSyntaxError (a ParserSyntaxError and
        a builtin SyntaxError) with a span."""
        from pypto.errors import PythonSyntaxError

        try:
            return ast.parse(self.text, filename=self.file)
        except SyntaxError as exc:
            span = self._span(exc.lineno or 1, (exc.offset or 1) - 1, None, None, chars=True)
            raise PythonSyntaxError(f"invalid Python syntax: {exc.msg}", span) from None

    def span(self, node: ast.AST) -> Span:
        """The Span of an ast node in the original file."""
        line = getattr(node, "lineno", None)
        if line is None:
            return Span.unknown()
        return self._span(line, node.col_offset, getattr(node, "end_lineno", None),  # type: ignore[attr-defined]
                          getattr(node, "end_col_offset", None))

    def _char_col(self, line: int, byte_col: int) -> int:
        if not 1 <= line <= len(self.lines):
            return byte_col
        return len(self.lines[line - 1].encode()[:byte_col].decode(errors="ignore"))

    def _span(self, line: int, col: int, end_line: int | None, end_col: int | None, chars: bool = False) -> Span:
        c = col if chars else self._char_col(line, col)
        el = end_line or line
        ec = end_col if end_col is not None else col
        ec = ec if chars else self._char_col(el, ec)
        text = self.text if self.embed_text else None
        return Span(self.file, line + self.line_offset, c + self.col_offset + 1, el + self.line_offset,
                    ec + self.col_offset + 1, source_text=text, source_first_line=1 + self.line_offset)

    def comments(self) -> dict[int, str]:
        """Full-line ``#`` comments by (text-relative) line, text after ``# `` kept verbatim."""
        out: dict[int, str] = {}
        for i, line in enumerate(self.lines, 1):
            s = line.lstrip()
            if s.startswith("#"):
                body = s[1:]
                out[i] = body[1:] if body.startswith(" ") else body
        return out
