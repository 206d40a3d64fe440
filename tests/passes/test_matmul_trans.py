"""``pl.matmul(a, b, b_trans=True)`` in a kernel: ptoas 0.1.1 has no transposed matmul, so the operand is
loaded through the transposed GM view (tile.transpose_view, resolved by ResolveBackendOpLayouts)."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto.runtime import RunConfig


@pl.jit
def scores(q: pl.Tensor[[16, 64], pl.FP32], k: pl.Tensor[[128, 64], pl.FP32],
           s: pl.Out[pl.Tensor[[16, 128], pl.FP32]]):
    for sb in pl.parallel(0, 128, 64):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="qk"):
            s = pl.assemble(s, pl.matmul(q, k[sb:sb + 64, :], b_trans=True, out_dtype=pl.FP32), [0, sb])
    return s


def test_no_transposed_matmul_reaches_the_codegen() -> None:
    program = scores.lower(np.zeros((16, 64), np.float32), np.zeros((128, 64), np.float32),
                           np.zeros((16, 128), np.float32))
    text = program.as_python()
    assert "b_trans=True" not in text and "pl.tensor.transpose" in text


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_b_trans_matmul_runs(platform: str) -> None:
    rng = np.random.default_rng(13)
    q = rng.standard_normal((16, 64)).astype(np.float32)
    k = rng.standard_normal((128, 64)).astype(np.float32)
    s = np.zeros((16, 128), np.float32)
    scores(q, k, s, config=RunConfig(platform=platform))
    np.testing.assert_allclose(s, q @ k.T, rtol=1e-4, atol=1e-4)
