"""Reading the sweep's result store: a stored record counts only when it is exactly what a sweep writes.

:func:`pypto.flows.sweep_task.finish` writes ``ac/<key>.json`` (through a temporary name) for ``ok`` and
``user_error`` outcomes. A record that is not valid JSON, lacks a field, has a field of the wrong type
or an unknown one, a status that disagrees with its exit code, or another job's key, platform or
toolchain, is a cache miss: the job runs again (and its fresh record replaces the bad one), with a
warning naming the file. So is an ``ok`` record whose artifact directory is gone or empty.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from pypto.flows.sweep_jobs import Job
from pypto.flows.sweep_task import status_of


class StoredRecord(BaseModel):
    """The schema of ``<store>/ac/<key>.json`` (the result line :func:`finish` writes)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    target: str
    platform: str
    toolchain: str
    status: Literal["ok", "user_error"]  # sweep_task.CACHEABLE
    exit_code: int
    message: str
    artifact: str
    cached: Literal[False]
    seconds: float = Field(ge=0)
    key: str = Field(pattern=r"^[0-9a-f]{64}$")

    @model_validator(mode="after")
    def _status_matches_exit_code(self) -> StoredRecord:
        if status_of(self.exit_code) != self.status:
            raise ValueError(f"status '{self.status}' does not go with exit code {self.exit_code}")
        return self


def _problem(path: Path, job: Job, artifact: Path) -> tuple[dict[str, Any] | None, str | None]:
    """(the record, None) when usable; (None, why not) for a damaged one; (None, None) when absent."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None, None
    except (OSError, UnicodeDecodeError) as exc:
        return None, f"unreadable: {exc}"
    try:
        record = StoredRecord.model_validate(json.loads(text))
    except ValueError as exc:  # invalid JSON, or a ValidationError (also a ValueError)
        first = exc.errors()[0] if isinstance(exc, ValidationError) else None
        why = (f"{'.'.join(map(str, first['loc'])) or 'record'}: {first['msg']}" if first else f"not JSON: {exc}")
        return None, f"not a sweep record ({why})"
    for field in ("key", "platform", "toolchain"):
        if getattr(record, field) != getattr(job, field):
            return None, f"its {field} is '{getattr(record, field)}', not this job's '{getattr(job, field)}'"
    if record.status == "ok" and not _has_files(artifact):
        return None, "its artifact directory is missing or empty"
    return record.model_dump(), None


def _has_files(path: Path) -> bool:
    try:
        return any(path.iterdir())
    except OSError:
        return False


def cached_record(store: Path, job: Job) -> dict[str, Any] | None:
    """The stored result of a job, or None (absent, damaged or forged records are misses)."""
    from pypto.toolchain.logging import get_logger

    path = store / "ac" / f"{job.key}.json"
    artifact = store / "out" / job.key / "artifact"
    record, why = _problem(path, job, artifact)
    if record is None:
        if why is not None:
            get_logger("pypto.sweep").warning(f"sweep store: ignoring {path}: {why}; the job runs again",
                                              record=str(path))
        return None
    if not artifact.is_dir():
        return None
    os.utime(path)  # recently used: survives pruning
    return {**record, "target": job.target, "artifact": str(artifact), "cached": True, "seconds": 0.0}
