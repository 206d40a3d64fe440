"""The IR trace's data: one pass dump (:class:`Dump`) and the input error (:class:`IRTraceError`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


class IRTraceError(Exception):
    """Bad input or output: printed as ``pypto-ir-trace: error: <message>``, exit 1."""


TraceError = IRTraceError  # the name this module used before upstream's


@dataclass(frozen=True)
class Dump:
    index: int
    name: str  # "frontend" or the pass name
    path: Path
    text: str
    warning: str


