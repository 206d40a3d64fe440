"""A FileCheck-lite for pass tests: ``CHECK:``, ``CHECK-NEXT:``, ``CHECK-NOT:`` and ``CHECK-LABEL:`` lines.

Each directive's pattern is a plain substring (a trailing ``$`` anchors it at the line's end). ``CHECK`` and ``CHECK-LABEL`` find the next line holding
it; ``CHECK-NEXT`` must hold on the line right after the previous match; ``CHECK-NOT`` forbids its
pattern between the previous match and the next one.
"""

from __future__ import annotations

import re

_DIRECTIVE = re.compile(r"^\s*#?\s*(CHECK(?:-NEXT|-NOT|-LABEL)?):\s?(.*)$")


def directives(checks: str) -> list[tuple[str, str]]:
    return [(m.group(1), m.group(2).rstrip()) for line in checks.splitlines() if (m := _DIRECTIVE.match(line))]


def filecheck(text: str, checks: str) -> None:
    """Raise AssertionError naming the first directive ``text`` does not satisfy."""
    lines = text.splitlines()
    at, forbidden = -1, []
    for kind, pattern in directives(checks):
        if kind == "CHECK-NOT":
            forbidden.append(pattern)
            continue
        if kind == "CHECK-NEXT":
            found = at + 1 if at + 1 < len(lines) and _holds(pattern, lines[at + 1]) else None
        else:
            found = next((i for i in range(at + 1, len(lines)) if _holds(pattern, lines[i])), None)
        if found is None:
            raise AssertionError(f"{kind}: {pattern!r} not found after line {at + 1} of:\n{text}")
        _check_absent(lines[at + 1:found], forbidden, text)
        at, forbidden = found, []
    _check_absent(lines[at + 1:], forbidden, text)


def _holds(pattern: str, line: str) -> bool:
    if pattern.endswith("$"):
        return line.rstrip().endswith(pattern[:-1])
    return pattern in line


def _check_absent(span: list[str], forbidden: list[str], text: str) -> None:
    for pattern in forbidden:
        bad = next((line for line in span if _holds(pattern, line)), None)
        if bad is not None:
            raise AssertionError(f"CHECK-NOT: {pattern!r} found in {bad!r} of:\n{text}")
