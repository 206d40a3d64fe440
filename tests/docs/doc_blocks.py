"""The runnable code blocks of the documentation site, and the checks on their markup.

A page marks a Python block runnable with the line ``<!-- doctest: run -->`` right above its fence:

    <!-- doctest: run -->
    ```python
    ...
    ```

A block that needs an optional package (an extra such as torch) says so in the marker:
``<!-- doctest: run needs=torch -->``; the suite skips it, naming the package, where that package is
not installed, and runs it everywhere else. The comment renders as nothing in the built site. ``collect(root)`` returns every marked block of
every ``docs/**/*.md`` page (English ``<page>.md`` and Chinese ``<page>.zh.md`` alike) and every
markup problem, each as ``page:line``: a marker that is not directly followed by a `````python``
fence, and a fence that is never closed (which would swallow the rest of the page).
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass
from pathlib import Path

MARKER = "<!-- doctest: run -->"
_MARKER = re.compile(r"^<!-- doctest: run(?: needs=(?P<needs>[A-Za-z_][\w.]*(?:,[A-Za-z_][\w.]*)*))? -->$")
_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")


@dataclass(frozen=True)
class Block:
    """One marked block: where it starts (the fence's line, 1-based) and its dedented source."""

    page: str
    line: int
    code: str
    needs: tuple[str, ...] = ()

    @property
    def id(self) -> str:
        return f"{self.page}:{self.line}"


@dataclass(frozen=True)
class Problem:
    page: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.page}:{self.line}: {self.message}"


def _is_marker(line: str) -> bool:
    return _MARKER.match(line.strip()) is not None


def _needs(line: str) -> tuple[str, ...]:
    """The packages a marker line names after ``needs=`` (comma-separated), in order."""
    m = _MARKER.match(line.strip())
    return tuple(m["needs"].split(",")) if m and m["needs"] else ()


def _lang(info: str) -> str:
    """The language of a fence's info string (```python title="x.py"`` -> ``python``)."""
    words = info.split()
    return words[0] if words else ""


def _closes(line: str, fence: str) -> bool:
    """A closing fence: the opening's character, at least as long, nothing after it."""
    m = _FENCE.match(line)
    return bool(m and m["fence"][0] == fence[0] and len(m["fence"]) >= len(fence) and not m["info"].strip())


def scan(page: str, text: str) -> tuple[list[Block], list[Problem]]:
    """The marked blocks of one page and its markup problems; ``page`` names it in both."""
    lines = text.splitlines()
    blocks: list[Block] = []
    problems: list[Problem] = []
    i = 0
    while i < len(lines):
        if _is_marker(lines[i]):
            m = _FENCE.match(lines[i + 1]) if i + 1 < len(lines) else None
            if m is None or _lang(m["info"]) != "python":
                problems.append(Problem(page, i + 1, f"'{MARKER}' is not directly followed by a ```python fence"))
            i += 1
            continue
        m = _FENCE.match(lines[i])
        if m is None:
            i += 1
            continue
        end = next((j for j in range(i + 1, len(lines)) if _closes(lines[j], m["fence"])), None)
        if end is None:
            problems.append(Problem(page, i + 1, f"the {m['fence']} fence opened here is never closed"))
            break
        if i > 0 and _is_marker(lines[i - 1]) and _lang(m["info"]) == "python":
            body = textwrap.dedent("\n".join(lines[i + 1:end]))
            blocks.append(Block(page, i + 1, body + "\n", _needs(lines[i - 1])))
        i = end + 1
    return blocks, problems


def collect(docs: Path) -> tuple[list[Block], list[Problem]]:
    """Every marked block and every markup problem of the pages under ``docs`` (named ``docs/<page>.md``)."""
    blocks: list[Block] = []
    problems: list[Problem] = []
    for path in sorted(docs.rglob("*.md")):
        b, p = scan(path.relative_to(docs.parent).as_posix(), path.read_text(encoding="utf-8"))
        blocks += b
        problems += p
    return blocks, problems
