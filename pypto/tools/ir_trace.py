"""IR lowering trace: one self-contained HTML page of the per-pass diffs of a ``passes_dump/`` directory.

    pypto-ir-trace <passes_dump> [-o ir_trace.html] [--context N]
    python -m pypto.tools.ir_trace <passes_dump> [-o ir_trace.html] [--context N]

Reads ``00_frontend.py`` and the consecutive ``NN_after_<Pass>.py`` dumps (a gap, a duplicate index or a
malformed name is an error; a sibling ``NN_after_<Pass>.log`` is shown as that pass's warning) and writes a
deterministic page: per-pass +/- counts, changed / no-op filters, side-by-side or stacked diffs per
function, j/k to step through passes, copy a snapshot, light/dark theme, folding. Exit 0 on success, 1 on
an input or I/O error (``pypto-ir-trace: error: ...``), 2 on bad arguments.
"""

from __future__ import annotations

import argparse
import difflib
import html
import json
import os
import re
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PROG = "pypto-ir-trace"
_NAME = re.compile(r"^(\d+)_after_([A-Za-z_]\w*)\.py$")
_FUNC = re.compile(r"^\s*def\s+(\w+)\s*\(")


class TraceError(Exception):
    """Bad input or output: printed as ``pypto-ir-trace: error: <message>``, exit 1."""


@dataclass(frozen=True)
class Dump:
    index: int
    name: str  # "frontend" or the pass name
    path: Path
    text: str
    warning: str


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


def split_functions(text: str) -> dict[str, list[str]]:
    """The dump's lines per function (decorators included); lines before the first one under ``<module>``."""
    lines = text.splitlines()
    out: dict[str, list[str]] = {"<module>": []}
    current = "<module>"
    pending: list[str] = []
    for line in lines:
        m = _FUNC.match(line)
        if line.lstrip().startswith("@pl.function") or (pending and line.lstrip().startswith("@")):
            pending.append(line)
            continue
        if m:
            current = m.group(1)
            out[current] = [*pending, line]
            pending = []
            continue
        if pending:
            out[current].extend(pending)
            pending = []
        out[current].append(line)
    out[current].extend(pending)
    return out


def _hunks(old: list[str], new: list[str], context: int) -> list[dict[str, Any]]:
    hunks = []
    for group in difflib.SequenceMatcher(None, old, new, autojunk=False).get_grouped_opcodes(context):
        rows = []
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                rows += [["=", i1 + k + 1, j1 + k + 1, old[i1 + k]] for k in range(i2 - i1)]
                continue
            rows += [["-", i1 + k + 1, None, old[i1 + k]] for k in range(i2 - i1)]
            rows += [["+", None, j1 + k + 1, new[j1 + k]] for k in range(j2 - j1)]
        hunks.append({"old_start": group[0][1] + 1, "new_start": group[0][3] + 1, "rows": rows})
    return hunks


def diff_pass(before: Dump, after: Dump, context: int) -> dict[str, Any]:
    """Per-function diffs and +/- counts between two consecutive dumps."""
    old_f, new_f = split_functions(before.text), split_functions(after.text)
    functions, added, removed = [], 0, 0
    for name in [*old_f, *(n for n in new_f if n not in old_f)]:
        old, new = old_f.get(name, []), new_f.get(name, [])
        if old == new:
            continue
        hunks = _hunks(old, new, context)
        plus = sum(1 for h in hunks for r in h["rows"] if r[0] == "+")
        minus = sum(1 for h in hunks for r in h["rows"] if r[0] == "-")
        added, removed = added + plus, removed + minus
        status = "added" if name not in old_f else "removed" if name not in new_f else "changed"
        functions.append({"name": name, "status": status, "added": plus, "removed": minus, "hunks": hunks})
    return {"added": added, "removed": removed, "functions": functions}


def build(dumps: list[Dump], context: int, source: str) -> dict[str, Any]:
    passes = []
    for i, d in enumerate(dumps):
        entry: dict[str, Any] = {"index": d.index, "name": d.name, "file": d.path.name, "warning": d.warning,
                                 "snapshot": d.text}
        if i == 0:
            entry.update(added=0, removed=0, changed=True, functions=[])
        else:
            diff = diff_pass(dumps[i - 1], d, context)
            entry.update(diff, changed=bool(diff["functions"]))
        passes.append(entry)
    return {"source": source, "context": context, "passes": passes}


def render(directory: Path, context: int = 3) -> str:
    """The page for a passes_dump directory (byte-identical for identical inputs)."""
    from pypto.tools._ir_trace_page import PAGE

    data = build(collect(directory), context, Path(directory).name)
    blob = json.dumps(data, sort_keys=True).replace("</", "<\\/")
    return PAGE.replace("__TITLE__", html.escape(f"IR trace: {data['source']}")).replace("__PAYLOAD__", blob)


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
    p = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
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


if __name__ == "__main__":
    sys.exit(main())
