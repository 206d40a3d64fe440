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
