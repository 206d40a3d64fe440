"""N-D GM tensors in kernels: viewed as 2-D, N-D windows become row blocks of that view (pto_ndview)."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import UserError
from pypto.runtime import RunConfig


@pl.jit
def into_planes(x: pl.Tensor[[64, 64], pl.FP32], y: pl.Out[pl.Tensor[[2, 64, 64], pl.FP32]]):
    for b in pl.range(2):
        for r in pl.parallel(0, 64, 32):
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="planes"):
                t = pl.add(pl.slice(x, [32, 64], [r, 0]), 1.0)
                y = pl.assemble(y, t, [b, r, 0])  # a 2-D source fills the last two axes
    return y


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_a_2d_tile_stored_into_a_3d_tensor(platform: str) -> None:
    x = np.random.default_rng(7).standard_normal((64, 64)).astype(np.float32)
    y = np.zeros((2, 64, 64), np.float32)
    into_planes(x, y, config=RunConfig(platform=platform))
    np.testing.assert_allclose(y, np.stack([x + 1.0, x + 1.0]), rtol=0, atol=1e-6)


def test_assemble_rejects_a_higher_rank_source() -> None:
    with pytest.raises(UserError, match="source rank 3 > target rank 2"):
        @pl.jit
        def up(x: pl.Tensor[[2, 8, 8], pl.FP32], y: pl.Out[pl.Tensor[[8, 8], pl.FP32]]):
            with pl.at(level=pl.Level.CORE_GROUP):
                y = pl.assemble(y, x, [0, 0])
            return y

        up.lower(np.zeros((2, 8, 8), np.float32), np.zeros((8, 8), np.float32))


@pl.jit
def nd_rows(x: pl.Tensor[[2, 64, 64], pl.FP32], w: pl.Tensor[[1, 64, 32], pl.FP32],
            s: pl.Out[pl.Tensor[[2, 64, 1], pl.FP32]], y: pl.Out[pl.Tensor[[2, 64, 32], pl.FP32]]):
    for b in pl.range(2):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="nd"):
            xb = x[b:b + 1, :, :]                       # a [1, 64, 64] window: a [64, 64] tile
            s = pl.assemble(s, pl.row_sum(pl.mul(xb, xb)), [b, 0, 0])
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="ndmm"):
            y = pl.assemble(y, pl.matmul(x[b:b + 1, :, :], w), [b, 0, 0])  # one [64, 64] x [64, 32] matrix
    return s, y


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_nd_windows_load_as_flat_tiles(platform: str) -> None:
    rng = np.random.default_rng(11)
    x = rng.standard_normal((2, 64, 64)).astype(np.float32)
    w = rng.standard_normal((1, 64, 32)).astype(np.float32)
    s, y = np.zeros((2, 64, 1), np.float32), np.zeros((2, 64, 32), np.float32)
    nd_rows(x, w, s, y, config=RunConfig(platform=platform))
    np.testing.assert_allclose(s, (x * x).sum(-1, keepdims=True), rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(y, x @ w[0], rtol=1e-4, atol=1e-4)


BATCH = pl.dynamic("BATCH")
MID = pl.dynamic("MID")


@pl.jit
def halve_planes(x: pl.Tensor[[BATCH, 16, 32], pl.FP32], y: pl.Out[pl.Tensor[[BATCH, 16, 32], pl.FP32]]):
    """A run-time first dim of a 3-D tensor: its 2-D view has BATCH * 16 rows; every other plane."""
    x.bind_dynamic(0, BATCH)
    y.bind_dynamic(0, BATCH)
    n = pl.tensor.dim(x, 0)
    for g in pl.spmd(n // 2, name_hint="halve"):
        p = g * 2
        y[p : p + 1, :, :] = pl.mul(x[p : p + 1, :, :], 0.5)
    return y


@pytest.mark.parametrize("batch", [4, 6])
def test_a_run_time_first_dim_of_a_3d_tensor(batch: int) -> None:
    x = np.random.default_rng(batch).standard_normal((batch, 16, 32)).astype(np.float32)
    y = np.zeros_like(x)
    halve_planes(x, y, config=RunConfig(platform="a2a3sim"))
    want = np.zeros_like(x)
    want[::2] = x[::2] * 0.5
    np.testing.assert_array_equal(y, want)


def test_a_run_time_middle_dim_is_a_located_error() -> None:
    @pl.jit
    def middle(x: pl.Tensor[[2, MID, 32], pl.FP32], y: pl.Out[pl.Tensor[[2, MID, 32], pl.FP32]]):
        x.bind_dynamic(1, MID)
        y.bind_dynamic(1, MID)
        with pl.at(level=pl.Level.CORE_GROUP):
            y[0:1, 0:8, :] = pl.add(x[0:1, 0:8, :], 1.0)
        return y

    with pytest.raises(UserError, match="rank 3 with dynamic dims after the first"):
        middle(np.zeros((2, 8, 32), np.float32), np.zeros((2, 8, 32), np.float32),
               config=RunConfig(platform="a2a3sim"))
