"""``pypto.compile_profiling``: upstream's :class:`CompileProfiler`, timing the compile stages.

Floor: above ``passes`` (the report formats of ``report/pipeline_profile.*``); the driver records its
stages (passes with one child per pass, codegen, ptoas) into the innermost active profiler::

    with CompileProfiler() as prof:
        ir.compile(MyProgram)
    print(prof.summary())

While a profiler is active, every compile also writes ``report/pipeline_profile.{txt,json}``
(as ``profiling=True`` or ``PYPTO_COMPILE_PROFILING=1`` do).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pypto.passes.profiling import Stage


@dataclass
class StageRecord:
    """One timed stage: ``name``, ``perf_counter`` start and end, nested ``children``."""

    name: str
    start: float
    end: float = 0.0
    children: list[StageRecord] = field(default_factory=list)

    @property
    def duration(self) -> float:
        """Seconds from start to end (to now while the stage is open)."""
        return max(0.0, (self.end if self.end > 0 else time.perf_counter()) - self.start)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "seconds": round(self.duration, 6), "children": [c.to_dict() for c in self.children]}

    @staticmethod
    def from_dict(stage: dict[str, Any], start: float = 0.0) -> StageRecord:
        """A closed record of a driver stage (``{"name", "seconds", "children"}``)."""
        rec = StageRecord(str(stage["name"]), start, start + float(stage.get("seconds", 0.0)))
        at = start
        for child in stage.get("children", []):
            rec.children.append(StageRecord.from_dict(child, at))
            at = rec.children[-1].end
        return rec


class CompileProfiler:
    """Hierarchical wall-clock profile of compiles; a context manager (thread-local stack, innermost wins)."""

    _local = threading.local()

    def __init__(self) -> None:
        self._roots: list[StageRecord] = []
        self._stack: list[StageRecord] = []
        self._previous: CompileProfiler | None = None
        self._start = self._end = 0.0

    def __enter__(self) -> CompileProfiler:
        self._previous = CompileProfiler.current()
        CompileProfiler._local.active = self
        self._start, self._end = time.perf_counter(), 0.0
        return self

    def __exit__(self, *exc: object) -> None:
        self._end = time.perf_counter()
        CompileProfiler._local.active = self._previous

    @staticmethod
    def current() -> CompileProfiler | None:
        """The innermost active profiler of this thread, or None."""
        return getattr(CompileProfiler._local, "active", None)

    @contextmanager
    def stage(self, name: str) -> Iterator[StageRecord]:
        """Time the ``with`` body as a stage (nested under the enclosing one)."""
        rec = StageRecord(name, time.perf_counter())
        (self._stack[-1].children if self._stack else self._roots).append(rec)
        self._stack.append(rec)
        try:
            yield rec
        finally:
            rec.end = time.perf_counter()
            self._stack.pop()

    def add_stage_record(self, record: StageRecord) -> None:
        """Attach a finished record under the open stage (or as a root)."""
        (self._stack[-1].children if self._stack else self._roots).append(record)

    @property
    def stages(self) -> list[StageRecord]:
        return list(self._roots)

    def total_seconds(self) -> float:
        """Sum of the root stages' durations."""
        return sum(s.duration for s in self._roots)

    def to_dict(self) -> dict[str, Any]:
        return {"total_seconds": round(self.total_seconds(), 6), "stages": [s.to_dict() for s in self._roots]}

    def to_json(self, path: str | None = None, indent: int = 2) -> str:
        """The profile as JSON text, also written to ``path`` when given."""
        text = json.dumps(self.to_dict(), indent=indent)
        if path is not None:
            Path(path).write_text(text + "\n")
        return text

    def summary(self) -> str:
        """The human-readable profile (the text of ``report/pipeline_profile.txt``)."""
        from pypto.passes.profiling import format_profile_txt

        return format_profile_txt([s.to_dict() for s in self._roots])

    def write_report(self, report_dir: str) -> None:
        """Write ``pipeline_profile.txt`` and ``pipeline_profile.json`` into ``report_dir``."""
        from pypto.passes.profiling import format_profile_json

        out = Path(report_dir)
        out.mkdir(parents=True, exist_ok=True)
        (out / "pipeline_profile.txt").write_text(self.summary())
        (out / "pipeline_profile.json").write_text(format_profile_json([s.to_dict() for s in self._roots]))


def get_active_profiler() -> CompileProfiler | None:
    """The innermost active :class:`CompileProfiler` of this thread, or None."""
    return CompileProfiler.current()


def record_compile(stages: list[Stage], name: str = "compile") -> None:
    """Record one compile's driver stages under a ``name`` stage of the active profiler (none: nothing)."""
    prof = get_active_profiler()
    if prof is None:
        return
    start = time.perf_counter() - sum(float(s.get("seconds", 0.0)) for s in stages)
    prof.add_stage_record(StageRecord.from_dict({"name": name, "seconds": sum(float(s.get("seconds", 0.0))
                                                                             for s in stages),
                                                 "children": stages}, start))
