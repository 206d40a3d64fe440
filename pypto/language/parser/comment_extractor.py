"""Upstream's ``parser.comment_extractor`` path: comments of DSL source by line (pypto keeps none in IR)."""

from __future__ import annotations

import io
import tokenize


def extract_comments(source: str) -> dict[int, str]:
    """Line number (1-based) -> the text of the ``#`` comment on that line, without the ``#``."""
    out: dict[int, str] = {}
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            out[tok.start[0]] = tok.string[1:].strip()
    return out
