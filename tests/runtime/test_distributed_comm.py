"""Comm tasks on forked ranks against numpy models: put/notify/wait ring, get after a barrier, atomic add."""

from __future__ import annotations

from pathlib import Path

import distkit as dk
import numpy as np
import pytest
import simkit as sk
from rt_marks import needs_gxx

from pypto.runtime.distributed import RankArena, shared_array, window_layout

pytestmark = [needs_gxx, pytest.mark.sim]
L = 64

# Rank r scales x by r+1 into its src window (slowly), puts it into dst of rank r+1, notifies that rank's
# cell [r, 0]; waits for its own cell [r-1, 0], then copies dst out with a kernel; a barrier ends the run.
RING_BODY = """\
    const ChipTensor& sig = orch_args.tensor(0).ref();
    const ChipTensor& src = orch_args.tensor(1).ref();
    const ChipTensor& dst = orch_args.tensor(2).ref();
    const ChipTensor& bar = orch_args.tensor(3).ref();
    const ChipTensor& x = orch_args.tensor(4).ref();
    const ChipTensor& out = orch_args.tensor(5).ref();
    const int32_t r = rt_comm_rank(), n = rt_comm_nranks();
    const int32_t next = (r + 1) % n, prev = (r + n - 1) % n;
    union { float f; uint64_t u; } s{}, one{};
    s.f = float(r + 1);
    one.f = 1.0f;
    PTO2_SCOPE() {
        CoreTaskArgs k0;
        k0.add_input(x);
        k0.add_output(src);
        k0.add_scalar(s.u);
        k0.add_scalar((uint64_t)20000);
        rt_submit_aiv_task(0, k0);
        rt_comm_copy(dst, next, src, COMM_LOCAL);
        rt_comm_notify(sig, next, {uint32_t(r), 0}, 7, CommNotifyOp::SET, CommOrder{{dst}});
        rt_comm_wait(sig, {uint32_t(prev), 0}, 7, CommWaitCmp::EQ, CommOrder{{}, {dst}});
        CoreTaskArgs k1;
        k1.add_input(dst);
        k1.add_output(out);
        k1.add_scalar(one.u);
        k1.add_scalar((uint64_t)0);
        rt_submit_aiv_task(0, k1);
        rt_comm_barrier(bar, CommOrder{{out}});
    }
"""

# Rank r writes x * (r+1) into win after sleeping 10 ms * (r+1), passes a barrier, then reads rank r+1's
# win into out (a remote load: COPY from a peer into a local host tensor).
GET_BODY = """\
    const ChipTensor& win = orch_args.tensor(0).ref();
    const ChipTensor& bar = orch_args.tensor(1).ref();
    const ChipTensor& x = orch_args.tensor(2).ref();
    const ChipTensor& out = orch_args.tensor(3).ref();
    const int32_t r = rt_comm_rank(), n = rt_comm_nranks();
    union { float f; uint64_t u; } s{};
    s.f = float(r + 1);
    PTO2_SCOPE() {
        CoreTaskArgs k0;
        k0.add_input(x);
        k0.add_output(win);
        k0.add_scalar(s.u);
        k0.add_scalar((uint64_t)(10000 * (r + 1)));
        rt_submit_aiv_task(0, k0);
        rt_comm_barrier(bar, CommOrder{{}, {win}});
        rt_comm_copy(out, COMM_LOCAL, win, (r + 1) % n);
    }
"""

# Every rank accumulates its contrib window into rank 0's acc window, then a barrier.
ATOMIC_BODY = """\
    const ChipTensor& acc = orch_args.tensor(0).ref();
    const ChipTensor& contrib = orch_args.tensor(1).ref();
    const ChipTensor& bar = orch_args.tensor(2).ref();
    PTO2_SCOPE() {
        rt_comm_copy(acc, 0, contrib, COMM_LOCAL, CommAtomic::ADD);
        rt_comm_barrier(bar, CommOrder{{acc}});
    }
"""

# K atomic notifies of +1 on rank 0's cell and K atomic f32 adds of ones into rank 0's facc, then a barrier.
CONTENTION_BODY = """\
    const ChipTensor& cnt = orch_args.tensor(0).ref();
    const ChipTensor& facc = orch_args.tensor(1).ref();
    const ChipTensor& ones = orch_args.tensor(2).ref();
    const ChipTensor& bar = orch_args.tensor(3).ref();
    const uint64_t k = orch_args.scalar(0);
    PTO2_SCOPE() {
        for (uint64_t i = 0; i < k; ++i) {
            rt_comm_notify(cnt, 0, {0}, 1, CommNotifyOp::ATOMIC_ADD);
            rt_comm_copy(facc, 0, ones, COMM_LOCAL, CommAtomic::ADD);
        }
        rt_comm_barrier(bar, CommOrder{{cnt, facc}});
    }
"""

SCALE = [sk.Kernel(0, "scale_k", "aiv", dk.SLOW_SCALE_KERNEL)]


def _x(nranks: int) -> np.ndarray:
    x = shared_array((nranks, L), np.float32)
    x[...] = np.random.default_rng(nranks).random((nranks, L), dtype=np.float32)
    return x


@pytest.mark.parametrize("nranks", [2, 4, 8])
def test_put_notify_wait_ring(tmp_path: Path, nranks: int) -> None:
    _ring(tmp_path, nranks, "a2a3sim", "tensormap_and_ringbuffer")


@pytest.mark.parametrize(("platform", "runtime"), [("a2a3sim", "host_build_graph"), ("a5sim", "tensormap_and_ringbuffer"),
                                                   ("a5sim", "host_build_graph")])
def test_ring_on_every_runtime_and_platform(tmp_path: Path, platform: str, runtime: str) -> None:
    _ring(tmp_path, 2, platform, runtime)


def _ring(tmp_path: Path, nranks: int, platform: str, runtime: str) -> None:
    params = [dk.window("sig", [nranks, 1], "int32"), dk.window("src", [L]), dk.window("dst", [L]),
              dk.window("bar", [nranks], "int32"), sk.tensor_param("x", "In", [L]), sk.tensor_param("out", "Out", [L])]
    path = dk.artifact(tmp_path, "ring", RING_BODY, params, SCALE, platform=platform, runtime=runtime)
    offs, region = window_layout([nranks * 4, L * 4, L * 4, nranks * 4])
    x, out = _x(nranks), shared_array((nranks, L), np.float32)
    with RankArena(nranks, region) as arena:
        def args(r: int) -> tuple:
            return (arena.view(r, offs[0], (nranks, 1), np.int32), arena.view(r, offs[1], L, np.float32),
                    arena.view(r, offs[2], L, np.float32), arena.view(r, offs[3], nranks, np.int32), x[r], out[r])

        assert dk.run_program(path, arena, args, platform=platform, runtime=runtime) == list(range(nranks))
        for r in range(nranks):
            prev = (r - 1) % nranks
            np.testing.assert_allclose(out[r], x[prev] * (prev + 1), rtol=1e-6, atol=0)
            sig = arena.view(r, offs[0], nranks, np.int32)
            assert sig[prev] == 7 and sig.sum() == 7  # only the previous rank notified this one
            assert list(arena.view(r, offs[3], nranks, np.int32)) == [1] * nranks  # one barrier generation


@pytest.mark.parametrize("nranks", [2, 4, 8])
def test_get_after_barrier(tmp_path: Path, nranks: int) -> None:
    params = [dk.window("win", [L]), dk.window("bar", [nranks], "int32"), sk.tensor_param("x", "In", [L]),
              sk.tensor_param("out", "Out", [L])]
    path = dk.artifact(tmp_path, "get", GET_BODY, params, SCALE)
    offs, region = window_layout([L * 4, nranks * 4])
    x, out = _x(nranks), shared_array((nranks, L), np.float32)
    with RankArena(nranks, region) as arena:
        dk.run_program(path, arena, lambda r: (arena.view(r, offs[0], L, np.float32),
                                               arena.view(r, offs[1], nranks, np.int32), x[r], out[r]))
        for r in range(nranks):
            nxt = (r + 1) % nranks
            np.testing.assert_allclose(out[r], x[nxt] * (nxt + 1), rtol=1e-6, atol=0)


def test_barrier_is_reusable(tmp_path: Path) -> None:
    nranks = 4
    params = [dk.window("win", [L]), dk.window("bar", [nranks], "int32"), sk.tensor_param("x", "In", [L]),
              sk.tensor_param("out", "Out", [L])]
    path = dk.artifact(tmp_path, "get", GET_BODY, params, SCALE)
    offs, region = window_layout([L * 4, nranks * 4])
    x, out = _x(nranks), shared_array((nranks, L), np.float32)
    with RankArena(nranks, region) as arena:
        dk.run_program(path, arena, lambda r: (arena.view(r, offs[0], L, np.float32),
                                               arena.view(r, offs[1], nranks, np.int32), x[r], out[r]), repeat=3)
        for r in range(nranks):
            assert list(arena.view(r, offs[1], nranks, np.int32)) == [3] * nranks
            np.testing.assert_allclose(out[r], x[(r + 1) % nranks] * ((r + 1) % nranks + 1), rtol=1e-6, atol=0)


ATOMIC_DTYPES = {"fp32": (np.float32, 0.0), "fp16": (np.float16, 1e-3), "bf16": (None, 1e-2),
                 "int32": (np.int32, 0), "int16": (np.int16, 0), "int8": (np.int8, 0)}


@pytest.mark.parametrize(("nranks", "dtype"), [(2, "fp32"), (8, "fp32"), *((4, d) for d in ATOMIC_DTYPES)])
def test_copy_atomic_add(tmp_path: Path, nranks: int, dtype: str) -> None:
    np_dt, rtol = ATOMIC_DTYPES[dtype]
    params = [dk.window("acc", [L], dtype), dk.window("contrib", [L], dtype), dk.window("bar", [nranks], "int32")]
    path = dk.artifact(tmp_path, f"atomic_{dtype}", ATOMIC_BODY, params)
    esize = 2 if np_dt is None else np.dtype(np_dt).itemsize
    offs, region = window_layout([L * esize, L * esize, nranks * 4])
    vals = [(np.arange(L) % 7 + r + 1) * (0.5 if dtype in ("fp16", "bf16", "fp32") else 1) for r in range(nranks)]
    with RankArena(nranks, region) as arena:
        for r in range(nranks):
            _store(arena.view(r, offs[1], L, np_dt or np.uint16), vals[r], np_dt)
            _store(arena.view(r, offs[0], L, np_dt or np.uint16), np.full(L, 1.0), np_dt)
        if np_dt is None:
            dk_args = lambda r: (arena.view(r, offs[0], L, np.uint16), arena.view(r, offs[1], L, np.uint16),  # noqa: E731
                                 arena.view(r, offs[2], nranks, np.int32))
        else:
            dk_args = lambda r: (arena.view(r, offs[0], L, np_dt), arena.view(r, offs[1], L, np_dt),  # noqa: E731
                                 arena.view(r, offs[2], nranks, np.int32))
        dk.run_program(path, arena, dk_args)
        want = 1.0 + np.sum(vals, axis=0)
        got = _load(arena.view(0, offs[0], L, np_dt or np.uint16), np_dt)
        np.testing.assert_allclose(got, want, rtol=rtol, atol=0)
        for r in range(1, nranks):  # only rank 0 was the destination
            np.testing.assert_array_equal(_load(arena.view(r, offs[0], L, np_dt or np.uint16), np_dt), np.ones(L))


def _store(view: np.ndarray, vals: np.ndarray, np_dt: object) -> None:
    if np_dt is None:  # bf16 bits: the upper half of the fp32 pattern (values here are exact in bf16)
        view[:] = (np.asarray(vals, np.float32).view(np.uint32) >> 16).astype(np.uint16)
    else:
        view[:] = np.asarray(vals).astype(np_dt)


def _load(view: np.ndarray, np_dt: object) -> np.ndarray:
    if np_dt is None:
        return (view.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    return view.astype(np.float64)


def test_atomic_contention_from_8_ranks_is_exact(tmp_path: Path) -> None:
    nranks, k = 8, 100
    params = [dk.window("cnt", [1], "int32"), dk.window("facc", [16]), dk.window("ones", [16]),
              dk.window("bar", [nranks], "int32"), {"name": "k", "direction": "In", "shape": None, "dtype": "int64"}]
    path = dk.artifact(tmp_path, "contention", CONTENTION_BODY, params)
    offs, region = window_layout([4, 64, 64, nranks * 4])
    with RankArena(nranks, region) as arena:
        for r in range(nranks):
            arena.view(r, offs[2], 16, np.float32)[:] = 1.0
        dk.run_program(path, arena, lambda r: (arena.view(r, offs[0], 1, np.int32), arena.view(r, offs[1], 16, np.float32),
                                               arena.view(r, offs[2], 16, np.float32),
                                               arena.view(r, offs[3], nranks, np.int32), k))
        assert int(arena.view(0, offs[0], 1, np.int32)[0]) == nranks * k
        np.testing.assert_array_equal(arena.view(0, offs[1], 16, np.float32), np.full(16, nranks * k, np.float32))


def test_dfx_records_of_each_rank_go_to_its_own_directory(tmp_path: Path) -> None:
    import json

    from pypto.runtime import ChipWorker, RunConfig
    from pypto.runtime.distributed import CommContext, run_ranks

    nranks = 2
    params = [dk.window("sig", [nranks, 1], "int32"), dk.window("src", [L]), dk.window("dst", [L]),
              dk.window("bar", [nranks], "int32"), sk.tensor_param("x", "In", [L]), sk.tensor_param("out", "Out", [L])]
    path = dk.artifact(tmp_path, "ring", RING_BODY, params, SCALE)
    offs, region = window_layout([nranks * 4, L * 4, L * 4, nranks * 4])
    x, out = _x(nranks), shared_array((nranks, L), np.float32)
    with RankArena(nranks, region) as arena:
        def fn(r: int) -> list[str]:
            with ChipWorker(RunConfig(enable_dep_gen=True), comm=CommContext.for_rank(arena, r)) as w:
                args = (arena.view(r, offs[0], (nranks, 1), np.int32), arena.view(r, offs[1], L, np.float32),
                        arena.view(r, offs[2], L, np.float32), arena.view(r, offs[3], nranks, np.int32), x[r], out[r])
                w.run(path, *args)
                first = w.last_dfx_dir
                w.run(path, *args)  # a second dispatch of the rank: its own directory
                second = w.last_dfx_dir
                w.set_dfx_location(tmp_path / "dist", f"rank{r}/d7")
                w.run(path, *args)
                return [str(first), str(second), str(w.last_dfx_dir)]

        dirs = run_ranks(nranks, fn, timeout_s=30)
    base = path / "dfx_outputs"
    for r in range(nranks):
        assert dirs[r] == [str(base / f"rank{r}" / "d0"), str(base / f"rank{r}" / "d1"),
                           str(tmp_path / "dist" / "dfx_outputs" / f"rank{r}" / "d7")]
        assert all((Path(d) / "deps.json").is_file() for d in dirs[r])
    tasks = json.loads((Path(dirs[1][0]) / "deps.json").read_text())["tasks"]
    assert [t.get("comm") for t in tasks] == [None, "comm COPY dst rank 0 <- src rank -1", "comm NOTIFY peer 0 cell [1, 0] = 7",
                                              "comm WAIT cell [0, 0] == 7", None, "comm BARRIER"]


def test_bf16_atomic_add_needs_the_a2a3_profile(tmp_path: Path) -> None:
    from pypto.runtime.distributed import DistributedRunError

    nranks = 2
    params = [dk.window("acc", [L], "bf16"), dk.window("contrib", [L], "bf16"), dk.window("bar", [nranks], "int32")]
    path = dk.artifact(tmp_path, "atomic_bf16", ATOMIC_BODY, params, platform="a5sim")
    offs, region = window_layout([L * 2, L * 2, nranks * 4])
    with RankArena(nranks, region) as arena, pytest.raises(DistributedRunError) as ei:
        dk.run_program(path, arena, lambda r: (arena.view(r, offs[0], L, np.uint16), arena.view(r, offs[1], L, np.uint16),
                                               arena.view(r, offs[2], nranks, np.int32)), platform="a5sim")
    assert "rank 0: OrchestrationError" in str(ei.value)
    assert "atomic combine into a BF16 destination needs the Ascend910B (a2a3sim) profile" in str(ei.value)
