"""Executors of a sweep: a local process pool, or Dask distributed (a loopback LocalCluster or a scheduler).

Both run :func:`pypto.flows.sweep_task.run_batch` per batch and hand each batch's result lines to a
callback as batches finish. A batch whose worker process dies is retried once (Dask: the scheduler
reschedules it, ``allowed-failures`` = 1; local: a fresh pool); a second death, or any exception out
of the task, becomes ``internal_error`` lines for the batch's jobs, never an exception out of the sweep.
Clusters and pools are shut down on every path.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import shutil
import signal
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any

from pypto.errors import ToolchainError, UserError
from pypto.flows.sweep_task import run_batch

Batch = list[dict[str, Any]]
OnRecords = Callable[[list[dict[str, Any]]], None]
RETRIES = 1
LOOPBACK = "127.0.0.1"


def failed_records(batch: Batch, message: str, status: str = "internal_error") -> list[dict[str, Any]]:
    """Result lines for a batch that produced none (its worker died twice, or the task raised)."""
    from pypto.flows.sweep_task import EXIT_BY_STATUS

    return [{"target": j["target"], "platform": j["platform"], "toolchain": j["toolchain"], "status": status,
             "exit_code": EXIT_BY_STATUS[status], "message": message, "artifact": None, "cached": False,
             "seconds": 0.0, "key": j["key"]} for j in batch]


def run_local(batches: Sequence[Batch], ctx: dict[str, Any], workers: int, on_records: OnRecords) -> None:
    """A process pool on this machine; a broken pool is replaced and its unfinished batches retried once."""
    pending = dict(enumerate(batches))
    tries = dict.fromkeys(pending, 0)
    while pending:
        with ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn")) as pool:
            futures = {pool.submit(run_batch, batch, ctx): i for i, batch in pending.items()}
            for future in as_completed(futures):
                i = futures[future]
                try:
                    records = future.result()
                except BrokenProcessPool:
                    tries[i] += 1
                    if tries[i] <= RETRIES:
                        continue
                    records = failed_records(pending[i], f"the worker process died {tries[i]} times running this job")
                except Exception as exc:  # noqa: BLE001 - a task failure is a result line, not a crashed sweep
                    records = failed_records(pending[i], f"the sweep task failed: {type(exc).__name__}: {exc}")
                del pending[i]
                on_records(records)


def _local_cluster(workers: int) -> Any:
    import dask
    from distributed import LocalCluster

    # a task whose worker dies is rescheduled once; a second death raises KilledWorker
    with dask.config.set({"distributed.scheduler.allowed-failures": RETRIES}):
        return LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, host=LOOPBACK,
                            dashboard_address=None, worker_dashboard_address=None, silence_logs=logging.ERROR)


def require_distributed() -> None:
    """Dask and Dask distributed import here; a UserError saying how to install them otherwise."""
    try:
        import dask  # noqa: F401
        import distributed  # noqa: F401
    except Exception as exc:  # noqa: BLE001 - absent (ImportError) or broken (anything) alike: not usable
        raise UserError(f"--executor dask needs Dask distributed, which cannot be imported here: "
                        f"{type(exc).__name__}: {exc}",
                        hint="pip install 'pypto[sweep]' (or pip install distributed), or use --executor local") \
            from exc


def dask_client(workers: int | None, scheduler: str | None) -> tuple[Any, Any]:
    """(client, cluster or None): a loopback LocalCluster of ``workers`` processes, or the given scheduler."""
    require_distributed()
    from distributed import Client

    if scheduler:
        if not scheduler.startswith(("tcp://", "tls://", "inproc://")):
            raise UserError(f"--scheduler '{scheduler}' is not a scheduler address", hint="example: tcp://10.0.0.5:8786")
        try:
            return Client(scheduler, timeout="20s"), None
        except OSError as exc:
            raise ToolchainError(f"cannot reach the Dask scheduler at {scheduler}: {exc}",
                                 hint="start one with `dask scheduler` and workers with `dask worker ADDRESS`") from exc
    cluster = _local_cluster(workers or 2)
    try:
        return Client(cluster), cluster
    except BaseException:
        cluster.close()
        raise


def run_dask(batches: Sequence[Batch], ctx: dict[str, Any], on_records: OnRecords, *, client: Any = None,
             workers: int | None = None, scheduler: str | None = None) -> None:
    """Submit every batch to Dask (``retries=1``); a KilledWorker or task error is a result line."""
    require_distributed()
    from distributed import as_completed as dask_completed

    own = client is None
    cluster = None
    if own:
        client, cluster = dask_client(workers, scheduler)
    try:
        futures = {}
        for i, batch in enumerate(batches):
            future = client.submit(run_batch, batch, ctx, key=f"pypto-sweep-{ctx['sweep_id']}-{i}", pure=False,
                                   retries=RETRIES)
            futures[future.key] = (future, batch)
        for future in dask_completed([f for f, _ in futures.values()]):
            batch = futures[future.key][1]
            try:
                records = future.result()
            except Exception as exc:  # noqa: BLE001 - KilledWorker and task errors become result lines
                name = type(exc).__name__
                why = "its worker died twice" if name == "KilledWorker" else f"the sweep task failed: {name}: {exc}"
                records = failed_records(batch, why)
            on_records(records)
    finally:
        if own:
            client.close()
            if cluster is not None:
                cluster.close()


def reap_attempts(store: Path, sweep_id: str) -> int:
    """Kill the child processes of dead attempts (recorded ``pid``) and remove their directories."""
    root = store / "attempts" / sweep_id
    if not root.is_dir():
        return 0
    count = 0
    for attempt in sorted(root.iterdir()):
        pid_file = attempt / "pid"
        if pid_file.is_file():
            _kill_if_ours(int(pid_file.read_text().strip() or 0), attempt)
        shutil.rmtree(attempt, ignore_errors=True)
        count += 1
    shutil.rmtree(root, ignore_errors=True)
    return count


def _kill_if_ours(pid: int, attempt: Path) -> None:
    """SIGKILL ``pid`` only when its command line names this attempt dir (pids get reused)."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
    except OSError:
        return
    if pid > 0 and str(attempt) in cmdline:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
