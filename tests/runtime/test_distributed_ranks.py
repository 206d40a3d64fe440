"""Rank processes: results, per-rank errors, comm timeouts, deadlines, killed ranks, Ctrl-C, no leftovers."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import distkit as dk
import numpy as np
import pytest
import simkit as sk
from rt_marks import needs_gxx

from pypto.errors import UserError
from pypto.runtime import ChipWorker, RunConfig
from pypto.runtime.distributed import (
    CommContext,
    DistributedRunError,
    DistributedTimeoutError,
    RankArena,
    run_ranks,
    shared_array,
    window_layout,
)
from pypto.runtime.native import LoadError, OrchestrationError

pytestmark = [needs_gxx, pytest.mark.sim]

WAIT_BODY = """\
    const ChipTensor& sig = orch_args.tensor(0).ref();
    PTO2_SCOPE() { rt_comm_wait(sig, {0}, 5, CommWaitCmp::EQ); }
"""
BARRIER_BODY = """\
    const ChipTensor& bar = orch_args.tensor(0).ref();
    PTO2_SCOPE() { rt_comm_barrier(bar); }
"""
FAULT_ON_RANK1_BODY = """\
    const ChipTensor& bar = orch_args.tensor(0).ref();
    PTO2_SCOPE() {
        if (rt_comm_rank() == 1) {
            CoreTaskArgs k;
            k.add_inout(bar);
            rt_submit_aiv_task(0, k);
        }
        rt_comm_barrier(bar);
    }
"""


def _no_children_left() -> bool:
    try:
        os.waitpid(-1, os.WNOHANG)
    except ChildProcessError:
        return True
    return False


def test_results_in_rank_order_and_shared_memory() -> None:
    out = shared_array(4, np.int64)

    def fn(rank: int) -> dict:
        out[rank] = rank * 100
        return {"rank": rank, "pid": os.getpid()}

    res = run_ranks(4, fn, timeout_s=10)
    assert [r["rank"] for r in res] == [0, 1, 2, 3]
    assert len({r["pid"] for r in res} | {os.getpid()}) == 5
    assert list(out) == [0, 100, 200, 300]
    assert _no_children_left()


def test_torch_works_in_ranks_after_the_parent_used_its_thread_pool(torch) -> None:
    a = torch.ones(512, 512)
    assert float((a @ a)[0, 0]) == 512.0  # the parent's OpenMP pool is now started

    def fn(rank: int) -> float:
        x = torch.full((512, 512), float(rank + 1))
        return float((x @ x)[0, 0])

    assert run_ranks(2, fn, timeout_s=20) == [512.0, 2048.0]


def test_python_error_in_one_rank_is_named() -> None:
    def fn(rank: int) -> int:
        if rank == 3:
            raise ValueError("boom in rank three")
        return rank

    with pytest.raises(DistributedRunError) as ei:
        run_ranks(4, fn, timeout_s=10, label="boom")
    assert "rank 3: ValueError: boom in rank three" in str(ei.value)
    assert ei.value.ranks == [3] and "Traceback" in ei.value.failures[0].details
    assert _no_children_left()


def test_arguments_are_checked() -> None:
    with pytest.raises(UserError, match="nranks"):
        run_ranks(0, lambda r: r, timeout_s=1)
    with pytest.raises(UserError, match="timeout_s"):
        run_ranks(2, lambda r: r, timeout_s=0)


def test_refuses_to_fork_with_a_live_chip_worker() -> None:
    with ChipWorker(), pytest.raises(UserError, match="ChipWorker"):
        run_ranks(2, lambda r: r, timeout_s=5)


def test_idle_implicit_workers_are_closed_before_forking() -> None:
    from pypto.runtime import worker

    implicit = worker.implicit_worker("a2a3sim", "tensormap_and_ringbuffer")
    assert implicit.initialized
    assert run_ranks(2, lambda r: r, timeout_s=10) == [0, 1]
    assert not implicit.initialized and worker.live_worker_count() == 0


def _sig_arena(nranks: int) -> tuple[RankArena, list[int]]:
    offs, region = window_layout([nranks * 4])
    return RankArena(nranks, region), offs


def test_deadlocked_wait_times_out_naming_rank_cell_and_values(tmp_path: Path) -> None:
    path = dk.artifact(tmp_path, "wait", WAIT_BODY, [dk.window("sig", [2], "int32")])
    arena, offs = _sig_arena(2)
    with arena:
        t0 = time.monotonic()
        with pytest.raises(DistributedRunError) as ei:
            dk.run_program(path, arena, lambda r: (arena.view(r, offs[0], 2, np.int32),), wait_timeout_s=1.0)
        assert time.monotonic() - t0 < 8
    msg = str(ei.value)
    for r in (0, 1):
        assert f"rank {r}: CommTimeoutError" in msg
        assert f"comm WAIT (task 0) on rank {r} timed out after 1000 ms" in msg
    assert "signal cell [0] (byte offset 0 in the rank's window region) expected == 5, last seen 0" in msg
    assert _no_children_left()


def test_barrier_missing_a_rank_names_it(tmp_path: Path) -> None:
    path = dk.artifact(tmp_path, "bar", BARRIER_BODY, [dk.window("bar", [3], "int32")])
    arena, offs = _sig_arena(3)

    def fn(rank: int) -> int:
        if rank != 1:  # rank 1 never arrives
            ctx = CommContext.for_rank(arena, rank, wait_timeout_s=1.0)
            with ChipWorker(comm=ctx) as w:
                w.run(path, arena.view(rank, offs[0], 3, np.int32))
        return rank

    with arena, pytest.raises(DistributedRunError) as ei:
        run_ranks(3, fn, timeout_s=10, arena=arena)
    msg = str(ei.value)
    assert ei.value.ranks == [0, 2]
    assert "rank 0: CommTimeoutError" in msg and "ranks not arrived: 1 (cells seen: 1 0 1)" in msg


def test_a_long_comm_wait_is_not_a_deadlock_of_the_run(tmp_path: Path) -> None:
    notify = """\
    const ChipTensor& sig = orch_args.tensor(0).ref();
    PTO2_SCOPE() { rt_comm_notify(sig, 0, {0}, 5, CommNotifyOp::SET); }
"""
    waiter = dk.artifact(tmp_path, "wait", WAIT_BODY, [dk.window("sig", [2], "int32")])
    notifier = dk.artifact(tmp_path, "notify", notify, [dk.window("sig", [2], "int32")])
    arena, offs = _sig_arena(2)

    def fn(rank: int) -> int:
        cfg = RunConfig(deadlock_timeout_s=0.3)  # shorter than the wait: only the comm timeout governs it
        with ChipWorker(cfg, comm=CommContext.for_rank(arena, rank, wait_timeout_s=10)) as w:
            if rank == 1:
                time.sleep(1.5)
            w.run(waiter if rank == 0 else notifier, arena.view(rank, offs[0], 2, np.int32))
        return rank

    with arena:
        assert run_ranks(2, fn, timeout_s=20, arena=arena) == [0, 1]
        assert arena.view(0, offs[0], 2, np.int32)[0] == 5


def test_deadline_names_the_ranks_still_running_and_their_wait(tmp_path: Path) -> None:
    path = dk.artifact(tmp_path, "wait", WAIT_BODY, [dk.window("sig", [2], "int32")])
    arena, offs = _sig_arena(2)
    with arena:
        t0 = time.monotonic()
        with pytest.raises(DistributedTimeoutError) as ei:
            dk.run_program(path, arena, lambda r: (arena.view(r, offs[0], 2, np.int32),), wait_timeout_s=60,
                           timeout_s=2.0)
        assert time.monotonic() - t0 < 6
    msg = str(ei.value)
    assert "timed out after 2 s; ranks still running: 0, 1" in msg
    assert "rank 1: timeout: still running after 2 s; blocked in comm WAIT (task 0)" in msg
    assert "expected == 5, last seen 0" in msg
    assert _no_children_left()


def test_killed_rank_is_named_and_the_others_are_reaped(tmp_path: Path) -> None:
    path = dk.artifact(tmp_path, "bar", BARRIER_BODY, [dk.window("bar", [4], "int32")])
    arena, offs = _sig_arena(4)

    def fn(rank: int) -> int:
        if rank == 2:
            os.kill(os.getpid(), signal.SIGKILL)
        with ChipWorker(comm=CommContext.for_rank(arena, rank, wait_timeout_s=60)) as w:
            w.run(path, arena.view(rank, offs[0], 4, np.int32))
        return rank

    with arena:
        t0 = time.monotonic()
        with pytest.raises(DistributedRunError) as ei:
            run_ranks(4, fn, timeout_s=30, arena=arena)
        assert time.monotonic() - t0 < 10
    msg = str(ei.value)
    assert "rank 2: killed: terminated by SIGKILL (no result)" in msg
    assert "rank 0: stopped: killed, still running 1 s after rank 2 failed" in msg
    assert _no_children_left()


def test_kernel_fault_in_one_rank(tmp_path: Path) -> None:
    kern = [sk.Kernel(0, "fault_k", "aiv", sk.FAULT_KERNEL)]
    path = dk.artifact(tmp_path, "fault", FAULT_ON_RANK1_BODY, [dk.window("bar", [2], "int32")], kern)
    arena, offs = _sig_arena(2)
    with arena, pytest.raises(DistributedRunError) as ei:
        dk.run_program(path, arena, lambda r: (arena.view(r, offs[0], 2, np.int32),), wait_timeout_s=1.0)
    msg = str(ei.value)
    assert "rank 1: KernelFaultError" in msg and "TASSIGN overflow" in msg


def test_comm_task_without_comm_context(tmp_path: Path) -> None:
    path = dk.artifact(tmp_path, "bar", BARRIER_BODY, [dk.window("bar", [2], "int32")])
    with ChipWorker() as w, pytest.raises(OrchestrationError, match="runs without a comm context"):
        w.run(path, np.zeros(2, np.int32))


def test_signal_outside_the_arena_is_refused(tmp_path: Path) -> None:
    path = dk.artifact(tmp_path, "bar", BARRIER_BODY, [dk.window("bar", [2], "int32")])
    arena, _ = _sig_arena(2)
    with arena, ChipWorker(comm=CommContext.for_rank(arena, 0)) as w:
        with pytest.raises(OrchestrationError, match="must be a window tensor in this rank's region"):
            w.run(path, np.zeros(2, np.int32))
        w.set_comm_context(None)
        with pytest.raises(OrchestrationError, match="without a comm context"):
            w.run(path, arena.view(0, 0, 2, np.int32))


def test_bad_comm_operands_are_named(tmp_path: Path) -> None:
    body = """\
    const ChipTensor& sig = orch_args.tensor(0).ref();
    PTO2_SCOPE() { rt_comm_notify(sig, 5, {0}, 1, CommNotifyOp::SET); }
"""
    path = dk.artifact(tmp_path, "badpeer", body, [dk.window("sig", [2], "int32")])
    arena, _ = _sig_arena(2)
    with arena, ChipWorker(comm=CommContext.for_rank(arena, 1)) as w:
        with pytest.raises(OrchestrationError, match=r"\(NOTIFY\): peer 5 is not a rank of this run \(0..1\)"):
            w.run(path, arena.view(1, 0, 2, np.int32))


def test_orchestration_of_an_older_abi_is_refused(tmp_path: Path) -> None:
    old = """\
struct ChipTaskArgs;
extern "C" __attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs&) {}
extern "C" __attribute__((visibility("default"))) void framework_bind_runtime(void*) {}
"""
    path = sk.write_artifact(tmp_path / "old", "old", old, [], [sk.tensor_param("x", "In", [4])])
    with ChipWorker() as w, pytest.raises(LoadError, match="orchestration ABI 1 or older .* needs ABI 2"):
        w.run(path, np.zeros(4, np.float32))


def test_comm_context_is_checked() -> None:
    with pytest.raises(UserError, match="rank 2 is not in"):
        CommContext(2, 2, 4096, 4096)
    with RankArena(2, 100) as arena:
        assert arena.region_bytes % 4096 == 0
        ctx = CommContext.for_rank(arena, 1)
        assert ctx.peer_address(arena.base + arena.region_bytes + 8, 0) == arena.base + 8
        with pytest.raises(UserError, match="out of range"):
            arena.view(2, 0, 1, np.int32)
        with pytest.raises(UserError, match="do not fit"):
            arena.view(0, arena.region_bytes - 4, 2, np.int32)


def _mapped(base: int) -> bool:
    with open("/proc/self/maps") as f:
        return any(int(line.split("-", 1)[0], 16) == base for line in f)


def test_arena_mappings_are_released() -> None:
    import gc

    arena = RankArena(3, 1 << 20)
    base = arena.base
    assert _mapped(base)
    arena.close()
    assert not _mapped(base) and arena.closed
    with pytest.raises(UserError, match="closed"):
        arena.view(0, 0, 1, np.int32)
    arena = RankArena(2, 1 << 20)
    view = arena.view(1, 0, 4, np.int32)
    arena.close()  # a live view keeps the memory valid ...
    view[:] = 3
    assert _mapped(arena.base)
    del view
    gc.collect()
    assert not _mapped(arena.base)  # ... until it goes


def test_window_layout_pads_to_4k_and_aligns() -> None:
    offs, region = window_layout([10, 5000, 4096])
    assert offs == [0, 4096, 4096 + 5120] and region == 16384
    with pytest.raises(UserError, match="size must be positive"):
        window_layout([0])


SCRIPT = textwrap.dedent("""\
    import os, sys, time
    from pypto.runtime.distributed import run_ranks
    pids = sys.argv[1]
    def fn(rank):
        with open(f"{pids}.{rank}", "w") as f:
            f.write(str(os.getpid()))
        time.sleep(60)
    try:
        run_ranks(3, fn, timeout_s=120)
    except KeyboardInterrupt:
        print("interrupted", flush=True)
        sys.exit(7)
""")


def _start(tmp_path: Path) -> tuple[subprocess.Popen, list[int]]:
    script = tmp_path / "ranks.py"
    script.write_text(SCRIPT)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    # SIGINT at its default in the script, whatever this runner inherited (a shell's background job has
    # it ignored, and Python then installs no KeyboardInterrupt handler)
    proc = subprocess.Popen([sys.executable, str(script), str(tmp_path / "pid")], env=env, stdout=subprocess.PIPE,
                            text=True, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        files = [tmp_path / f"pid.{r}" for r in range(3)]
        if all(f.exists() and f.read_text() for f in files):
            return proc, [int(f.read_text()) for f in files]
        time.sleep(0.05)
    proc.kill()
    raise AssertionError("the ranks did not start")


def _running(pid: int) -> bool:
    """Alive and not a zombie (an orphan's zombie may wait for a reaper that a container lacks)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def _gone(pids: list[int], within: float) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if not [pid for pid in pids if _running(pid)]:
            return True
        time.sleep(0.05)
    return False


def test_sigint_to_the_parent_reaps_every_rank(tmp_path: Path) -> None:
    proc, pids = _start(tmp_path)
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=20)
    assert proc.returncode == 7 and "interrupted" in out
    assert _gone(pids, 5)


def test_a_killed_parent_leaves_no_ranks(tmp_path: Path) -> None:
    proc, pids = _start(tmp_path)
    proc.kill()
    proc.wait(timeout=10)
    assert _gone(pids, 10)  # PR_SET_PDEATHSIG
