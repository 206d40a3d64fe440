"""``pl.reshape`` in the orchestration is a zero-copy view (``ChipTensor::reshape``) that kernels read."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto.runtime import RunConfig


@pl.jit
def plane_plus_one(x: pl.Tensor[[4, 32, 64], pl.FP32], y: pl.Out[pl.Tensor[[64, 64], pl.FP32]]):
    for p in pl.range(2):
        plane = pl.reshape(pl.slice(x, [1, 32, 64], [p + 1, 0, 0]), [32, 64])  # contiguous
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="plus"):
            y[p * 32:p * 32 + 32, :] = pl.add(plane, 1.0)
    return y


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_orchestration_reshape_is_a_view(platform: str) -> None:
    rng = np.random.default_rng(5)
    x = rng.standard_normal((4, 32, 64)).astype(np.float32)
    y = np.zeros((64, 64), np.float32)
    plane_plus_one(x, y, config=RunConfig(platform=platform))
    np.testing.assert_allclose(y, x[1:3].reshape(64, 64) + 1.0, rtol=0, atol=1e-6)
