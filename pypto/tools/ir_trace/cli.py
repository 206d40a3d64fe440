"""The ``pypto-ir-trace`` command (``python -m pypto.tools.ir_trace``)."""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

from pypto.tools.ir_trace.html import render
from pypto.tools.ir_trace.model import TraceError

PROG = "pypto-ir-trace"
_DOC = "IR lowering trace: one self-contained HTML page of the per-pass diffs of a ``passes_dump/`` directory."


def write_atomic(path: Path, text: str) -> None:
    """Write via a temporary file in the same directory and rename over ``path``."""
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise TraceError(f"output directory does not exist: {parent}")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _context(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {value}")
    return value


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog=PROG, description=_DOC)
    p.add_argument("passes_dump", type=Path, help="directory with 00_frontend.py and NN_after_<Pass>.py dumps")
    p.add_argument("-o", "--output", type=Path, default=Path("ir_trace.html"), help="HTML to write "
                   "(default: ./ir_trace.html)")
    p.add_argument("--context", type=_context, default=3, help="unchanged lines around each change (default 3)")
    args = p.parse_args(argv)
    try:
        write_atomic(args.output, render(args.passes_dump, args.context))
    except (TraceError, OSError) as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 1
    print(args.output)
    return 0
