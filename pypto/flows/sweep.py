"""``pypto sweep``: compile (and run) many kernels x platforms x toolchains, fanned out, content-addressed.

Plan: targets -> jobs (:mod:`pypto.flows.sweep_jobs`), keyed by content; ``--shard I/N`` keeps one
slice. Jobs whose key is in the result store are answered from it (``cached: true``); the rest go in
batches to an executor (:mod:`pypto.flows.sweep_exec`: a local process pool or Dask distributed), where
each job runs as a child ``python -m pypto compile|run`` (:mod:`pypto.flows.sweep_task`), or each batch
runs in one container of the pinned image (:mod:`pypto.flows.sweep_container`). Every job yields
exactly one result line; the sweep's exit code is that of its worst status.

The store lives in ``<cache_dir>/sweep`` (``--store`` moves it; it must be a shared filesystem when
workers run on other machines): ``ac/<key>.json`` result records, ``out/<key>/`` the last finished
attempt of each job (its ``artifact/``, ``stdout.txt``, ``stderr.txt``), ``attempts/`` in-flight
attempts. The newest :data:`STORE_KEEP` records are kept; older ones are pruned after a sweep. A
record is served only when it is exactly what a sweep writes (:mod:`pypto.flows.sweep_store`).
"""

from __future__ import annotations

import os
import shutil
import sys
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pypto.errors import UserError
from pypto.flows.sweep_jobs import Job, digest_files, input_digest, job_key, make_jobs, select_shard
from pypto.flows.sweep_store import cached_record
from pypto.flows.sweep_task import EXIT_BY_STATUS, SEVERITY

EXECUTORS = ("local", "dask")
STORE_KEEP = 4096
DEFAULT_CONTAINER_BATCH = 8
SWEEP_LABEL = "io.pypto.sweep"


@dataclass(frozen=True, slots=True)
class SweepOptions:
    """Everything ``pypto sweep`` decides beyond the targets."""

    platforms: tuple[str, ...]
    toolchains: tuple[str, ...]
    runtime: str
    run: bool = False
    executor: str = "local"
    workers: int | None = None
    scheduler: str | None = None
    in_container: bool = False
    batch: int | None = None
    """Jobs per task (per container with ``in_container``); default 1, or 8 in containers."""
    shard: tuple[int, int] | None = None
    no_cache: bool = False
    store: Path | None = None
    timeout: float | None = None
    image: str | None = None

    def batch_size(self) -> int:
        return self.batch or (DEFAULT_CONTAINER_BATCH if self.in_container else 1)


@dataclass
class SweepReport:
    """The result lines of a sweep, in completion order."""

    records: list[dict[str, Any]] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def worst(self) -> str:
        return max((r["status"] for r in self.records), key=SEVERITY.__getitem__, default="ok")

    @property
    def exit_code(self) -> int:
        return EXIT_BY_STATUS[self.worst]

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for r in self.records:
            out[r["status"]] = out.get(r["status"], 0) + 1
        out["cached"] = sum(1 for r in self.records if r["cached"])
        return out


def default_store() -> Path:
    from pypto.toolchain.settings import cache_dir

    return cache_dir() / "sweep"


def _pypto_sources() -> str:
    root = Path(__file__).resolve().parents[1]
    return digest_files([p for p in root.rglob("*.py") if "__pycache__" not in p.parts], root)


def image_group(job: Job) -> tuple[str, str]:
    """Jobs that share an image: one toolchain, one flavor (``sim`` for simulated platforms, else ``hw``)."""
    from pypto.toolchain.platforms import platform_info

    return job.toolchain, "sim" if platform_info(job.platform).simulated else "hw"


def compiler_identity(job: Job, options: SweepOptions, settings: Any) -> str:
    """What compiles a job: the image (id and manifest) in a container, else pypto's sources + manifest."""
    from pypto.toolchain.manifest import load_manifest

    manifest = load_manifest(job.toolchain)
    if options.in_container:
        from pypto.flows.sweep_container import image_for

        return f"image:{image_for(settings, job.toolchain, job.platform, options.image)[1]}:{manifest.sha256}"
    import numpy

    return (f"local:{_pypto_sources()}:{manifest.sha256}:py{sys.version_info[0]}.{sys.version_info[1]}"
            f":numpy{numpy.__version__}")


def plan_sweep(targets: Sequence[str], options: SweepOptions, settings: Any, cwd: Path | None = None) -> list[Job]:
    """The sweep's jobs (this shard only), each with its content key."""
    from dataclasses import replace

    from pypto.toolchain.manifest import load_manifest
    from pypto.toolchain.platforms import platform_info
    from pypto.toolchain.settings import compile_fingerprint

    if options.executor not in EXECUTORS:
        raise UserError(f"--executor '{options.executor}' is not one of {', '.join(EXECUTORS)}")
    for platform in options.platforms:
        platform_info(platform)  # an unknown platform fails here, once, naming the choices
    for toolchain in options.toolchains:
        load_manifest(toolchain)
    jobs = select_shard(make_jobs(targets, options.platforms, options.toolchains, options.runtime, options.run, cwd),
                        options.shard)
    fingerprint = compile_fingerprint()
    identities: dict[tuple[str, str], str] = {}
    inputs: dict[str, str] = {}
    keyed = []
    for job in jobs:
        group = image_group(job)
        if group not in identities:
            identities[group] = compiler_identity(job, options, settings)
        digest = inputs.setdefault(job.file, input_digest(Path(job.file)))
        keyed.append(replace(job, key=job_key(job, identities[group], fingerprint, digest)))
    return keyed


def _batches(jobs: Sequence[Job], size: int) -> list[list[dict[str, Any]]]:
    """Chunks of ``size`` jobs sharing one image (toolchain and flavor): one image per container batch."""
    out: list[list[dict[str, Any]]] = []
    for key in sorted({image_group(j) for j in jobs}):
        group = [j.to_task() for j in jobs if image_group(j) == key]
        out += [group[i:i + size] for i in range(0, len(group), size)]
    return out


def _task_context(options: SweepOptions, store: Path, sweep_id: str, cwd: Path) -> dict[str, Any]:
    return {"store": str(store), "sweep_id": sweep_id, "python": sys.executable, "cwd": str(cwd),
            "timeout": options.timeout, "in_container": options.in_container, "image": options.image,
            "label": SWEEP_LABEL}


def run_sweep(targets: Sequence[str], options: SweepOptions, *, settings: Any = None,
              on_result: Callable[[dict[str, Any]], None] | None = None, on_plan: Callable[[int], None] | None = None,
              client: Any = None, cwd: Path | None = None) -> SweepReport:
    """Run a sweep; every job yields one result line (passed to ``on_result`` as it arrives).

    Args:
        targets: ``FILE[::NAME]`` or directories.
        options: platforms, toolchains, executor, batching, shard, cache.
        settings: resolved settings (default: resolved here).
        on_result: called with each result line in completion order.
        on_plan: called once with the number of jobs, before any runs.
        client: a ``distributed.Client`` to use for ``executor="dask"`` (left open).
        cwd: where relative targets are resolved and the jobs run (default: the working directory).
    """
    from pypto.flows.sweep_exec import reap_attempts, run_dask, run_local

    if settings is None:
        from pypto.toolchain.settings import resolve_settings

        settings = resolve_settings()
    cwd = (cwd or Path.cwd()).resolve()
    start = time.monotonic()
    store = (options.store or default_store()).resolve()
    jobs = plan_sweep(targets, options, settings, cwd)
    if options.executor == "dask" and client is None:
        from pypto.flows.sweep_exec import require_distributed

        require_distributed()  # before any job is answered or run
    report = SweepReport()
    if on_plan is not None:
        on_plan(len(jobs))

    def emit(records: list[dict[str, Any]]) -> None:
        for record in records:
            report.records.append(record)
            if on_result is not None:
                on_result(record)

    todo = []
    for job in jobs:
        hit = None if options.no_cache else cached_record(store, job)
        if hit is not None:
            emit([hit])
        else:
            todo.append(job)
    sweep_id = uuid.uuid4().hex[:12]
    ctx = _task_context(options, store, sweep_id, cwd)
    try:
        batches = _batches(todo, options.batch_size())
        if batches and options.executor == "dask":
            run_dask(batches, ctx, emit, client=client, workers=options.workers, scheduler=options.scheduler)
        elif batches:
            run_local(batches, ctx, options.workers or min(len(batches), os.cpu_count() or 1), emit)
    finally:
        reap_attempts(store, sweep_id)
        if options.in_container:
            from pypto.flows.sweep_container import remove_sweep_containers

            remove_sweep_containers(sweep_id, engine=settings.container_engine)
    _fill_missing(jobs, report, emit)
    prune_store(store)
    report.seconds = time.monotonic() - start
    return report


def _fill_missing(jobs: Sequence[Job], report: SweepReport, emit: Callable[[list[dict[str, Any]]], None]) -> None:
    """A job that somehow got no line gets an internal_error line (every job has exactly one)."""
    from pypto.flows.sweep_exec import failed_records

    seen = {(r["key"]) for r in report.records}
    missing = [j.to_task() for j in jobs if j.key not in seen]
    if missing:
        emit(failed_records(missing, "no result came back for this job (a pypto bug; please report it)"))


def prune_store(store: Path, keep: int = STORE_KEEP) -> int:
    """Drop the least recently used records beyond ``keep`` (and their artifact dirs)."""
    ac = store / "ac"
    if not ac.is_dir():
        return 0
    records = sorted(ac.glob("*.json"), key=lambda p: p.stat().st_mtime, reverse=True)
    for path in records[keep:]:
        path.unlink(missing_ok=True)
        shutil.rmtree(store / "out" / path.stem, ignore_errors=True)
    return max(0, len(records) - keep)

