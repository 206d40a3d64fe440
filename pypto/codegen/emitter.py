"""A text writer shared by the emitters: indented lines and unique, sanitized names."""

from __future__ import annotations

import functools
import re

_BAD = re.compile(r"[^A-Za-z0-9_]")


@functools.lru_cache(maxsize=8192)
def _identifier(hint: str) -> str:
    """``hint`` with every character outside ``[A-Za-z0-9_]`` as ``_``, never empty nor leading with a digit."""
    name = _BAD.sub("_", hint) or "v"
    return f"v{name}" if name[0].isdigit() else name


def base_name(hint: str) -> str:
    """The user-facing part of an IR name hint: ``a__ssa_v0`` -> ``a``, ``t__tile`` -> ``t``."""
    head = hint.split("__", 1)[0] if not hint.startswith("__") else hint.lstrip("_")
    head = _BAD.sub("_", head) or "v"
    return head if not head[0].isdigit() else f"v{head}"


class Emitter:
    """Collects lines at the current indentation and hands out unique identifiers."""

    def __init__(self, indent: str = "  ", level: int = 0) -> None:
        self.lines: list[str] = []
        self._indent = indent
        self.level = level
        self._used: set[str] = set()

    def line(self, text: str = "") -> None:
        """Append one line at the current indentation (blank lines stay empty)."""
        self.lines.append(f"{self._indent * self.level}{text}" if text else "")

    def push(self) -> None:
        self.level += 1

    def pop(self) -> None:
        self.level -= 1

    def unique(self, hint: str) -> str:
        """A fresh identifier derived from ``hint`` (``x``, ``x_1``, ``x_2``, ...)."""
        name = _identifier(hint)
        cand, n = name, 0
        while cand in self._used:
            n += 1
            cand = f"{name}_{n}"
        self._used.add(cand)
        return cand

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"
