"""A kernel loop that writes ``t[r, p]`` at positions ``p`` it reads from an INT32 row of its own tiles is a
gather by index (``pto.tgather``): ``out[0, k] = t[r, pos[0, k]]``. Checked on the simulators against numpy."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.errors import UnsupportedFeatureError

PICK = """import pypto.language as pl

@pl.program
class Pick:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[1, 256], pl.FP32], ids: pl.Tensor[[2, 256], pl.INT32],
             out: pl.Out[pl.Tensor[[1, 32], pl.INT32]], vals: pl.Out[pl.Tensor[[1, 32], pl.FP32]]) -> pl.Tensor[[1, 32], pl.INT32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            cand = pl.adds(ids, 1)
            s = pl.mrgsort(pl.sort32(x, pl.arange(0, [1, 256], dtype=pl.UINT32)), block_len=64)
            pos = pl.gather(s[:, 0:64], mask_pattern=pl.tile.MaskPattern.P1010, output_dtype=pl.INT32)
            picked = pl.create_tensor([1, 32], dtype=pl.INT32)
            again = pl.create_tensor([1, 32], dtype=pl.FP32)
            for k in pl.range(32):
                p = pl.read(pos, [0, k])
                pl.write(picked, [0, k], pl.read(cand, [1, pl.cast(p, target_type=pl.INDEX)]))
                pl.write(again, [0, k], pl.read(x, [0, pl.cast(p, target_type=pl.INDEX)]) * 2.0)
            out[:, :] = picked
            vals[:, :] = again
        return out
"""


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_writes_at_positions_read_from_a_tile_are_a_gather(platform, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    compiled = ir.compile(pl.parse(PICK), platform=platform)
    rng = np.random.default_rng(1)
    x = rng.standard_normal((1, 256)).astype(np.float32)
    ids = rng.integers(0, 10000, (2, 256)).astype(np.int32)
    out, vals = np.zeros((1, 32), np.int32), np.zeros((1, 32), np.float32)
    compiled(x, ids, out, vals)
    top = np.argsort(-x[0, :128], kind="stable")[:32]  # the first merged run: the top 32 of x[0, :128]
    np.testing.assert_array_equal(out[0], ids[1, top] + 1)
    np.testing.assert_array_equal(vals[0], x[0, top] * 2)


def test_positions_of_another_dtype_keep_the_located_read_error(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    src = PICK.replace("output_dtype=pl.INT32", "output_dtype=pl.UINT32")
    with pytest.raises(UnsupportedFeatureError, match="scalar read of 'pos'"):
        ir.compile(pl.parse(src), platform="a2a3sim")


FLAG = """import pypto.language as pl

@pl.program
class Flag:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[2, 64], pl.FP32], out: pl.Out[pl.Tensor[[2, 64], pl.FP32]]) -> pl.Tensor[[2, 64], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            out[0:1, :] = pl.adds(x[0:1, :], 1.0)
            if 3 != 0:
                out[1:2, :] = pl.muls(x[1:2, :], 3.0)
        return out
"""


def test_a_constant_condition_in_a_kernel_reaches_ptoas_as_an_i1_it_parses(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    compiled = ir.compile(pl.parse(FLAG), platform="a2a3sim")
    x = np.random.default_rng(0).standard_normal((2, 64)).astype(np.float32)
    out = np.zeros((2, 64), np.float32)
    compiled(x, out)
    np.testing.assert_allclose(out, np.stack([x[0] + 1, x[1] * 3]), rtol=1e-6)
