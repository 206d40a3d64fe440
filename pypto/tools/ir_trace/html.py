"""The self-contained HTML page of a trace (deterministic for identical inputs)."""

from __future__ import annotations

import html
import json
from pathlib import Path

from pypto.tools.ir_trace.diff import build
from pypto.tools.ir_trace.discovery import collect


def render(directory: Path, context: int = 3) -> str:
    """The page for a passes_dump directory (byte-identical for identical inputs)."""
    from pypto.tools._ir_trace_page import PAGE

    data = build(collect(directory), context, Path(directory).name)
    blob = json.dumps(data, sort_keys=True).replace("</", "<\\/")
    return PAGE.replace("__TITLE__", html.escape(f"IR trace: {data['source']}")).replace("__PAYLOAD__", blob)
