"""Temporaries that live within one op (the broadcast of ``col_expand_mul``, a reduction's scratch) share one
``alloc_tile`` per buffer type: ptoas 0.1.1 gives every alloc_tile bytes of its own, so four pipeline stages
with a scratch each would take four times the on-chip memory."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir

SRC = """import pypto.language as pl

@pl.program
class Scaled:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 1024], pl.FP32], g: pl.Tensor[[1, 1024], pl.FP32],
             out: pl.Out[pl.Tensor[[16, 1024], pl.FP32]]) -> pl.Tensor[[16, 1024], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            for kb in pl.pipeline(8, stage=4):
                k0 = kb * 128
                t = pl.col_expand_mul(x[:, k0 : k0 + 128], g[:, k0 : k0 + 128])
                s = pl.row_sum(t)
                out = pl.assemble(out, pl.row_expand_sub(t, s), [0, k0])
        return out
"""


def test_one_scratch_per_buffer_type(tmp_path: Path) -> None:
    ir.compile(pl.parse(SRC), output_dir=str(tmp_path), skip_ptoas=True)
    (pto,) = tmp_path.glob("kernels/*/*.pto")
    allocs = [line for line in pto.read_text().splitlines() if "= pto.alloc_tile" in line]
    assert sum("%expand_tmp" in a for a in allocs) == 1
    assert sum("%red_tmp" in a for a in allocs) <= 1  # row_sum may pass its own tmp operand
    assert pto.read_text().count("pto.tcolexpand") == 4  # one broadcast per pipeline stage


@pytest.mark.sim
@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_stages_sharing_a_scratch_match_numpy(platform: str, tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    x = rng.standard_normal((16, 1024)).astype(np.float32)
    g = rng.standard_normal((1, 1024)).astype(np.float32)
    out = np.zeros((16, 1024), np.float32)
    ir.compile(pl.parse(SRC), output_dir=str(tmp_path), platform=platform)(x, g, out)
    t = (x * g).reshape(16, 8, 128)
    want = (t - t.sum(2, keepdims=True)).reshape(16, 1024)
    np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-4)
