"""Compile-profile report formats (``report/pipeline_profile.{txt,json}``, spec §4.6).

A stage is ``{"name": str, "seconds": float, "children": [stage, ...]}`` (:class:`Stage`).
"""

from __future__ import annotations

import json
from typing import TypedDict


class Stage(TypedDict):
    """One timed stage of a compile: its name, its seconds and the stages inside it."""

    name: str
    seconds: float
    children: list[Stage]


def format_duration(seconds: float) -> str:
    """``<n>us`` below 1 ms, ``<n.n>ms`` below 1 s, else ``<n.nnn>s``."""
    if seconds < 1e-3:
        return f"{seconds * 1e6:.0f}us"
    if seconds < 1.0:
        return f"{seconds * 1e3:.1f}ms"
    return f"{seconds:.3f}s"


def _total(stages: list[Stage]) -> float:
    return sum(float(s.get("seconds", 0.0)) for s in stages)


def _lines(stages: list[Stage], depth: int, total: float, out: list[str]) -> None:
    for s in stages:
        secs = float(s.get("seconds", 0.0))
        pct = 100.0 * secs / total if total > 0 else 0.0
        name = "  " * depth + str(s["name"])
        out.append(f"{name:<28}{format_duration(secs):>10}  ({pct:.1f}%)")
        _lines(list(s.get("children", [])), depth + 1, total, out)


def format_profile_txt(stages: list[Stage]) -> str:
    """The human-readable profile: header, total, one line per (nested) stage."""
    total = _total(stages)
    out = ["PyPTO Compile Profile", "=" * 22, f"Total: {format_duration(total)}", ""]
    _lines(stages, 0, total, out)
    return "\n".join(out) + "\n"


def _json_stage(s: Stage) -> Stage:
    return {"name": s["name"], "seconds": round(float(s.get("seconds", 0.0)), 6),
            "children": [_json_stage(c) for c in s.get("children", [])]}


def format_profile_json(stages: list[Stage]) -> str:
    """``{"total_seconds": x, "stages": [...]}`` with 6-decimal seconds, indent 2."""
    doc = {"total_seconds": round(_total(stages), 6), "stages": [_json_stage(s) for s in stages]}
    return json.dumps(doc, indent=2) + "\n"
