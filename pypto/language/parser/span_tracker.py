"""Spans of DSL source: an AST node's position mapped to a :class:`~pypto.span.Span` in its file."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from contextlib import contextmanager

from pypto.span import Span

_ACTIVE: list[dict[int, int]] = []


def ast_column_to_span_column(line: str | None, col_offset: int) -> int:
    """``ast`` column offsets count UTF-8 bytes from 0; spans count characters from 1."""
    if line is None:
        return col_offset + 1
    return len(line.encode("utf-8")[:col_offset].decode("utf-8", errors="ignore")) + 1


@contextmanager
def active_source_map(line_map: dict[int, int]) -> Iterator[dict[int, int]]:
    """Within the block, SpanTrackers built without a map remap lines through ``line_map``
    (parsed line -> line in the original file), e.g. for source re-assembled from pieces."""
    _ACTIVE.append(line_map)
    try:
        yield line_map
    finally:
        _ACTIVE.pop()


class SpanTracker:
    """Makes Spans for nodes of source parsed from ``source_lines``, which start at ``line_offset + 1``
    of ``source_file`` (the offset of a function's source inside its file)."""

    def __init__(self, source_file: str, source_lines: list[str], line_offset: int = 0,
                 col_offset: int = 0, line_map: dict[int, int] | None = None) -> None:
        self.source_file = source_file
        self.source_lines = source_lines
        self.line_offset = line_offset
        self.col_offset = col_offset
        self.line_map = line_map if line_map is not None else (_ACTIVE[-1] if _ACTIVE else None)

    def _line(self, ast_lineno: int) -> int:
        line = ast_lineno + self.line_offset
        return self.line_map.get(line, line) if self.line_map else line

    def _col(self, ast_lineno: int, col: int) -> int:
        text = self.source_lines[ast_lineno - 1] if 0 < ast_lineno <= len(self.source_lines) else None
        return ast_column_to_span_column(text, col) + self.col_offset

    def get_span(self, ast_node: ast.AST | None) -> Span:
        """The node's span (begin and end); ``Span.unknown()`` for None or a node without a position."""
        if ast_node is None or not hasattr(ast_node, "lineno"):
            return Span.unknown()
        end_line = getattr(ast_node, "end_lineno", None) or ast_node.lineno
        end_col = getattr(ast_node, "end_col_offset", None)
        return Span(self.source_file, self._line(ast_node.lineno), self._col(ast_node.lineno, ast_node.col_offset),
                    self._line(end_line), 0 if end_col is None else self._col(end_line, end_col))

    def get_multiline_span(self, start_node: ast.AST, end_node: ast.AST) -> Span:
        """From the start of ``start_node`` to the end of ``end_node``."""
        a, b = self.get_span(start_node), self.get_span(end_node)
        return Span(a.file, a.line, a.col, b.end_line, b.end_col)


__all__ = ["SpanTracker", "active_source_map", "ast_column_to_span_column"]
