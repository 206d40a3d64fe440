"""Collective helpers of pto_comm_api.h (compositions of comm tasks) on forked ranks against numpy."""

from __future__ import annotations

from pathlib import Path

import distkit as dk
import numpy as np
import pytest
from rt_marks import needs_gxx

from pypto.runtime.distributed import DistributedRunError, RankArena, window_layout

pytestmark = [needs_gxx, pytest.mark.sim]
W = 32  # elements per row

OPS = {"add": (1, np.add), "max": (2, np.maximum), "min": (3, np.minimum), "mul": (4, np.multiply)}
SCALAR = {"name": "op", "direction": "In", "shape": None, "dtype": "int64"}

ALLREDUCE = """\
    const ChipTensor& data = orch_args.tensor(0).ref();
    const ChipTensor& sig = orch_args.tensor(1).ref();
    PTO2_SCOPE() { rt_comm_allreduce(data, sig, CommAtomic(int32_t(orch_args.scalar(0)))); }
"""
REDUCE_SCATTER = ALLREDUCE.replace("rt_comm_allreduce", "rt_comm_reduce_scatter")
BROADCAST = """\
    const ChipTensor& data = orch_args.tensor(0).ref();
    const ChipTensor& sig = orch_args.tensor(1).ref();
    PTO2_SCOPE() { rt_comm_broadcast(data, sig, int32_t(orch_args.scalar(0))); }
"""
ALLGATHER = """\
    const ChipTensor& stage = orch_args.tensor(0).ref();
    const ChipTensor& data = orch_args.tensor(1).ref();
    const ChipTensor& sig = orch_args.tensor(2).ref();
    PTO2_SCOPE() { rt_comm_allgather(stage, data, sig); }
"""
ALL_TO_ALL = ALLGATHER.replace("rt_comm_allgather", "rt_comm_all_to_all")


def _inputs(nranks: int, shape: tuple[int, ...], dtype: type) -> np.ndarray:
    rng = np.random.default_rng(nranks * 7 + len(shape))
    vals = rng.integers(1, 4, size=(nranks, *shape)) * (0.5 if dtype is not np.int32 else 1)
    return vals.astype(dtype)


def _two_windows(nranks: int, shape: tuple[int, ...], dtype: type) -> tuple[RankArena, list[int]]:
    nbytes = int(np.prod(shape)) * np.dtype(dtype).itemsize
    offs, region = window_layout([nbytes, nranks * 4])
    return RankArena(nranks, region), offs


def _run(tmp_path: Path, name: str, body: str, nranks: int, shape: tuple[int, ...], dtype: type, scalar: int,
         repeat: int = 1) -> np.ndarray:
    """Data window (dtype, shape) + signal; returns every rank's data after the run."""
    dts = {np.float32: "fp32", np.float16: "fp16", np.int32: "int32"}
    params = [dk.window("data", list(shape), dts[dtype]), dk.window("sig", [nranks], "int32"), SCALAR]
    path = dk.artifact(tmp_path, name, body, params)
    arena, offs = _two_windows(nranks, shape, dtype)
    x = _inputs(nranks, shape, dtype)
    with arena:
        for r in range(nranks):
            arena.view(r, offs[0], shape, dtype)[...] = x[r]
        dk.run_program(path, arena, lambda r: (arena.view(r, offs[0], shape, dtype),
                                               arena.view(r, offs[1], nranks, np.int32), scalar), repeat=repeat)
        got = np.stack([arena.view(r, offs[0], shape, dtype).copy() for r in range(nranks)])
        assert all(list(arena.view(r, offs[1], nranks, np.int32)) == [2 * repeat] * nranks for r in range(nranks))
    return x, got


@pytest.mark.parametrize(("nranks", "op", "dtype"), [(2, "add", np.float32), (4, "add", np.float32), (8, "add", np.float32),
                                                     (4, "max", np.float32), (4, "min", np.int32),
                                                     (4, "mul", np.float32), (4, "add", np.float16)])
def test_allreduce(tmp_path: Path, nranks: int, op: str, dtype: type) -> None:
    code, fn = OPS[op]
    x, got = _run(tmp_path, f"allreduce_{op}", ALLREDUCE, nranks, (2, W), dtype, code)
    want = fn.reduce(x.astype(np.float64), axis=0)
    for r in range(nranks):
        np.testing.assert_allclose(got[r], want, rtol=1e-3 if dtype is np.float16 else 1e-6, atol=0)


def test_allreduce_twice_reuses_the_signal(tmp_path: Path) -> None:
    x, got = _run(tmp_path, "allreduce_add", ALLREDUCE, 4, (W,), np.float32, 1, repeat=2)
    np.testing.assert_allclose(got, np.broadcast_to(4 * x.sum(axis=0), got.shape), rtol=1e-6, atol=0)


@pytest.mark.parametrize("nranks", [2, 4])
def test_reduce_scatter(tmp_path: Path, nranks: int) -> None:
    x, got = _run(tmp_path, "reduce_scatter", REDUCE_SCATTER, nranks, (nranks, W), np.float32, 1)
    for r in range(nranks):
        np.testing.assert_allclose(got[r, r], x[:, r].sum(axis=0), rtol=1e-6, atol=0)
        for j in set(range(nranks)) - {r}:  # the other rows stay as staged
            np.testing.assert_array_equal(got[r, j], x[r, j])


@pytest.mark.parametrize(("nranks", "root"), [(2, 1), (4, 2), (8, 0)])
def test_broadcast(tmp_path: Path, nranks: int, root: int) -> None:
    x, got = _run(tmp_path, "broadcast", BROADCAST, nranks, (W,), np.float32, root)
    np.testing.assert_array_equal(got, np.broadcast_to(x[root], got.shape))


def _stage_data(tmp_path: Path, name: str, body: str, nranks: int, stage_shape: tuple[int, ...]) -> tuple:
    params = [dk.window("stage", list(stage_shape)), dk.window("data", [nranks, W]), dk.window("sig", [nranks], "int32")]
    path = dk.artifact(tmp_path, name, body, params)
    offs, region = window_layout([int(np.prod(stage_shape)) * 4, nranks * W * 4, nranks * 4])
    x = _inputs(nranks, stage_shape, np.float32)
    with RankArena(nranks, region) as arena:
        for r in range(nranks):
            arena.view(r, offs[0], stage_shape, np.float32)[...] = x[r]
        dk.run_program(path, arena, lambda r: (arena.view(r, offs[0], stage_shape, np.float32),
                                               arena.view(r, offs[1], (nranks, W), np.float32),
                                               arena.view(r, offs[2], nranks, np.int32)))
        got = np.stack([arena.view(r, offs[1], (nranks, W), np.float32).copy() for r in range(nranks)])
    return x, got


@pytest.mark.parametrize("nranks", [2, 4, 8])
def test_allgather(tmp_path: Path, nranks: int) -> None:
    x, got = _stage_data(tmp_path, "allgather", ALLGATHER, nranks, (1, W))
    for r in range(nranks):
        np.testing.assert_array_equal(got[r], x[:, 0, :])


@pytest.mark.parametrize("nranks", [2, 4])
def test_all_to_all(tmp_path: Path, nranks: int) -> None:
    x, got = _stage_data(tmp_path, "all_to_all", ALL_TO_ALL, nranks, (nranks, W))
    for r in range(nranks):
        for src in range(nranks):
            np.testing.assert_array_equal(got[r, src], x[src, r])


def test_collective_argument_errors_are_named(tmp_path: Path) -> None:
    with pytest.raises(DistributedRunError, match="rank 0: OrchestrationError: .*rt_comm_allreduce: op must be"):
        _run(tmp_path, "allreduce_none", ALLREDUCE, 2, (W,), np.float32, 0)
    with pytest.raises(DistributedRunError, match="rt_comm_broadcast: root 5 is not a rank"):
        _run(tmp_path, "broadcast", BROADCAST, 2, (W,), np.float32, 5)
    with pytest.raises(DistributedRunError, match=r"rt_comm_reduce_scatter: data: dim 0 must have one row per rank \(2\)"):
        _run(tmp_path, "reduce_scatter", REDUCE_SCATTER, 2, (3, W), np.float32, 1)
