"""End to end: sweeps on Dask and on the local pool, the result store, failures as lines, a killed worker.

The kernels are 32x32 adds; the result store is private to each test (the g++ build cache stays shared).
"""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from pypto.cli.main import cli
from pypto.flows.sweep import SweepOptions, run_sweep

pytestmark = [pytest.mark.sim, pytest.mark.slow]
distributed = pytest.importorskip("distributed")
PLATFORMS = ("a2a3sim", "a5sim")


def sweep(*args: str) -> tuple[int, list[dict]]:
    result = CliRunner().invoke(cli, ["sweep", *args])
    lines = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    return result.exit_code, lines


def test_dask_sweep_runs_every_job_then_serves_all_from_the_store(kernels: Path, tmp_path: Path) -> None:
    args = ["kernels", "--platform", "a2a3sim", "--platform", "a5sim", "--executor", "dask", "--workers", "2",
            "--run", "--store", str(tmp_path / "store"), "--results", str(tmp_path / "new" / "results.jsonl")]
    code, first = sweep(*args)
    assert code == 0, first
    assert len(first) == 6 and all(r["status"] == "ok" and not r["cached"] for r in first), first
    assert {(r["target"].split("::")[1], r["platform"]) for r in first} == {
        (k, p) for k in ("sweep_add", "sweep_sub", "sweep_mul") for p in PLATFORMS}
    assert all(r["message"].startswith("passed") for r in first)  # compared with each file's golden
    assert all((Path(r["artifact"]) / "compiled_meta.json").is_file() for r in first)
    assert [json.loads(x) for x in (tmp_path / "new" / "results.jsonl").read_text().splitlines()] == first
    code, again = sweep(*args)
    assert code == 0 and len(again) == 6 and all(r["status"] == "ok" and r["cached"] for r in again), again
    assert {r["key"] for r in again} == {r["key"] for r in first}
    assert not (tmp_path / "store" / "attempts").exists() or not any((tmp_path / "store" / "attempts").iterdir())


def test_editing_a_kernel_reruns_only_its_jobs_and_no_cache_forces(kernels: Path, tmp_path: Path) -> None:
    store = str(tmp_path / "store")
    base = ["kernels/sweep_add.py", "kernels/sweep_mul.py", "--platform", "a5sim", "--store", store]
    assert sweep(*base)[0] == 0
    kernel = kernels / "sweep_mul.py"
    kernel.write_text(kernel.read_text() + "\n# edited\n")
    code, lines = sweep(*base)
    # sweep_add.py does not import the edited file: only sweep_mul's key changes
    assert code == 0 and {r["target"]: r["cached"] for r in lines} == {
        "kernels/sweep_add.py::sweep_add": True, "kernels/sweep_mul.py::sweep_mul": False}
    code, lines = sweep(*base)
    assert [r["cached"] for r in lines] == [True, True]
    code, lines = sweep(*base, "--no-cache")
    assert code == 0 and [r["cached"] for r in lines] == [False, False]


def test_a_file_with_two_kernels_sweeps_each_by_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.sweep.conftest import write_kernels

    monkeypatch.chdir(tmp_path)
    [one] = write_kernels(tmp_path / "k", ops=[("sweep_add", "add", "a + b")])
    [two] = write_kernels(tmp_path / "other", ops=[("sweep_sub", "sub", "a - b")])
    one.write_text(one.read_text() + two.read_text().replace("import numpy as np", "").replace(
        "import pypto.language as pl", "").replace("SHAPES = {", "SHAPES |= {"))
    code, lines = sweep("k", "--platform", "a5sim", "--run", "--store", str(tmp_path / "store"))
    assert code == 0 and sorted(r["target"] for r in lines) == ["k/sweep_add.py::sweep_add", "k/sweep_add.py::sweep_sub"]
    assert all(r["message"].startswith("passed") for r in lines), lines


def test_failures_are_result_lines_with_the_worst_exit_code(kernels: Path, tmp_path: Path) -> None:
    (kernels / "broken.py").write_text("import pypto.language as pl\n\n@pl.jit\ndef broken(a: pl.Tensor):\n"
                                       "    return undefined_name(a)\n")
    code, lines = sweep("kernels/broken.py", "kernels/sweep_add.py", "--platform", "a5sim",
                        "--store", str(tmp_path / "store"), "--workers", "2")
    by_target = {r["target"]: r for r in lines}
    assert code == 3, lines
    assert by_target["kernels/sweep_add.py::sweep_add"]["status"] == "ok"
    bad = by_target["kernels/broken.py::broken"]
    assert bad["status"] == "user_error" and bad["exit_code"] == 3 and bad["message"]


def _busy_worker(client, deadline: float) -> tuple[str, int]:
    """A worker with a task in progress (and its pid), once that task's child process has started."""
    info: dict = {}
    while time.monotonic() < deadline:
        busy = [addr for addr, keys in client.processing().items() if keys]
        info = client.scheduler_info()["workers"]
        if busy:
            pids = client.run(os.getpid, workers=busy[:1])
            time.sleep(1.0)  # let the task start its `python -m pypto run` child
            return busy[0], pids[busy[0]]
        time.sleep(0.1)
    raise AssertionError(f"no worker became busy; workers: {list(info)}")


def test_a_killed_worker_still_leaves_every_job_a_result_line(kernels: Path, tmp_path: Path) -> None:
    from pypto.flows.sweep_exec import _local_cluster

    store = tmp_path / "store"
    options = SweepOptions(platforms=PLATFORMS, toolchains=("0.1.0",), runtime="tensormap_and_ringbuffer", run=True,
                           executor="dask", store=store, no_cache=True)
    cluster = _local_cluster(2)
    client = distributed.Client(cluster)
    try:
        lines: list[dict] = []
        done = threading.Event()
        outcome: dict = {}

        def go() -> None:
            try:
                outcome["report"] = run_sweep(["kernels"], options, on_result=lines.append, client=client)
            finally:
                done.set()

        thread = threading.Thread(target=go, daemon=True)
        thread.start()
        _, pid = _busy_worker(client, time.monotonic() + 60)
        os.kill(pid, signal.SIGKILL)
        assert done.wait(timeout=300), "the sweep did not finish after its worker was killed"
        assert pid not in client.run(os.getpid).values()  # that worker really died (the nanny replaced it)
    finally:
        client.close()
        cluster.close()
    report = outcome["report"]
    assert len(lines) == 6 and len({r["key"] for r in lines}) == 6, lines
    assert all(r["status"] == "ok" for r in lines), lines  # the killed job ran again in a fresh attempt
    assert report.exit_code == 0
    leftovers = store / "attempts"
    assert not leftovers.exists() or not any(leftovers.iterdir())  # dead attempts reaped


def test_loopback_only_and_shut_down(kernels: Path) -> None:
    from pypto.flows.sweep_exec import dask_client

    client, cluster = dask_client(1, None)
    try:
        addresses = [cluster.scheduler_address, *client.scheduler_info()["workers"]]
        assert all(a.startswith("tcp://127.0.0.1:") for a in addresses), addresses
    finally:
        client.close()
        cluster.close()
    assert cluster.status.name == "closed"


def test_a_killed_local_pool_process_is_retried_in_a_fresh_pool(kernels: Path, tmp_path: Path) -> None:
    import psutil

    options = SweepOptions(platforms=("a5sim",), toolchains=("0.1.0",), runtime="tensormap_and_ringbuffer",
                           run=True, executor="local", workers=2, store=tmp_path / "store", no_cache=True)
    lines: list[dict] = []
    outcome: dict = {}
    thread = threading.Thread(target=lambda: outcome.update(report=run_sweep(["kernels"], options,
                                                                             on_result=lines.append)), daemon=True)
    thread.start()
    me, victim, deadline = psutil.Process(), None, time.monotonic() + 60
    while victim is None and time.monotonic() < deadline:
        for child in me.children():
            try:
                if any("pypto" in " ".join(g.cmdline()) for g in child.children()):
                    victim = child  # a pool process with its `python -m pypto run` child under way
                    break
            except psutil.Error:
                continue
        time.sleep(0.1)
    assert victim is not None, "no pool process started a job"
    victim.kill()
    thread.join(timeout=300)
    assert not thread.is_alive()
    assert len(lines) == 3 and {r["status"] for r in lines} == {"ok"}, lines
    assert outcome["report"].exit_code == 0


def test_a_running_scheduler_with_a_separate_worker(kernels: Path, tmp_path: Path) -> None:
    """The multi-machine shape on loopback: `dask scheduler` + `dask worker` processes, `--scheduler ADDR`."""
    import subprocess
    import sys

    file = tmp_path / "scheduler.json"
    scheduler = subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
                                  "--port", "0", "--no-dashboard", "--scheduler-file", str(file)],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    worker = None
    try:
        deadline = time.monotonic() + 60
        while not file.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        address = json.loads(file.read_text())["address"]
        assert address.startswith("tcp://127.0.0.1:")
        worker = subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", address, "--host", "127.0.0.1",
                                   "--nworkers", "1", "--nthreads", "1", "--no-dashboard"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        code, lines = sweep("kernels/sweep_add.py", "kernels/sweep_sub.py", "--platform", "a2a3sim",
                            "--scheduler", address, "--store", str(tmp_path / "store"))
        assert code == 0 and [r["status"] for r in lines] == ["ok", "ok"], lines
    finally:
        for proc in (worker, scheduler):
            if proc is not None:
                proc.terminate()
                try:
                    proc.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
