"""Per-pass, per-function diffs between consecutive dumps (the page's data)."""

from __future__ import annotations

import difflib
import re
from typing import Any

from pypto.tools.ir_trace.model import Dump

_FUNC = re.compile(r"^\s*def\s+(\w+)\s*\(")


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
