"""Finding the dumps of a ``passes_dump/`` directory: ``00_frontend.py`` then ``NN_after_<Pass>.py``."""

from __future__ import annotations

import re
from pathlib import Path

from pypto.tools.ir_trace.model import Dump, TraceError

_NAME = re.compile(r"^(\d+)_after_([A-Za-z_]\w*)\.py$")


def collect(directory: Path) -> list[Dump]:
    """``00_frontend.py`` then ``01_after_X.py``, ``02_after_Y.py``, ... with no gap or duplicate."""
    d = Path(directory)
    if not d.is_dir():
        raise TraceError(f"input directory does not exist: {d}")
    front = d / "00_frontend.py"
    if not front.is_file():
        raise TraceError(f"{d} has no 00_frontend.py (is it a passes_dump directory?)")
    passes: dict[int, Path] = {}
    for p in sorted(d.glob("*.py")):
        if p.name == front.name:
            continue
        m = _NAME.match(p.name)
        if m is None:
            raise TraceError(f"malformed pass dump name: {p.name} (expected NN_after_<Pass>.py)")
        index = int(m.group(1))
        if index == 0:
            raise TraceError(f"{p.name}: index 00 is reserved for 00_frontend.py")
        if index in passes:
            raise TraceError(f"duplicate pass dump index {index:02d}: {passes[index].name} and {p.name}")
        passes[index] = p
    for expected, index in enumerate(sorted(passes), start=1):
        if index != expected:
            raise TraceError(f"missing pass dump index {expected:02d} (the dumps jump to {passes[index].name})")
    dumps = [Dump(0, "frontend", front, front.read_text(), "")]
    for index in sorted(passes):
        p = passes[index]
        log = p.with_suffix(".log")
        warning = log.read_text().strip() if log.is_file() else ""
        dumps.append(Dump(index, _NAME.match(p.name).group(2), p, p.read_text(), warning))
    return dumps
