"""``pl.tensor.dim(t, axis)`` inside a kernel is the extent the tensor's type gives: a constant, or the
dynamic dimension the kernel reads from the tensor it is passed."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.errors import UserError

R = pl.dynamic("R")
COLS = 16


@pl.program
class PairRows:
    @pl.function(type=pl.FunctionType.InCore)
    def twice(self, a: pl.Tensor[[R, COLS], pl.FP32],
              c: pl.Out[pl.Tensor[[R, COLS], pl.FP32]]) -> pl.Tensor[[R, COLS], pl.FP32]:
        rows = pl.tensor.dim(a, 0)
        cols = pl.tensor.dim(a, -1)
        for i in pl.range(0, rows, 2):
            t = pl.load(a, [i, 0], [2, cols], target_memory=pl.MemorySpace.Vec)
            out = pl.store(pl.mul(t, 2.0), [i, 0], c)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[R, COLS], pl.FP32],
             c: pl.Out[pl.Tensor[[R, COLS], pl.FP32]]) -> pl.Tensor[[R, COLS], pl.FP32]:
        return self.twice(a, c)


BAD_AXIS = """
import pypto.language as pl

@pl.program
class BadAxis:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[8, COLS], pl.FP32],
          c: pl.Out[pl.Tensor[[8, COLS], pl.FP32]]) -> pl.Tensor[[8, COLS], pl.FP32]:
        n = pl.tensor.dim(a, 2)  # BAD-AXIS
        t = pl.load(a, [0, 0], [8, COLS], target_memory=pl.MemorySpace.Vec)
        out = pl.store(pl.adds(t, n), [0, 0], c)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[8, COLS], pl.FP32],
             c: pl.Out[pl.Tensor[[8, COLS], pl.FP32]]) -> pl.Tensor[[8, COLS], pl.FP32]:
        return self.k(a, c)
"""


@pytest.mark.parametrize("rows", [32, 128])
def test_a_dynamic_dim_bounds_the_kernel_loop(rows: int, tmp_path: Path) -> None:
    c = ir.compile(PairRows, output_dir=tmp_path / "o", platform="a2a3sim")
    a = np.random.default_rng(rows).random((rows, COLS), dtype=np.float32)
    out = np.zeros_like(a)
    c(a, out)
    np.testing.assert_array_equal(out, a * 2.0)


def test_an_axis_outside_the_rank_is_a_located_error(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="tensor.dim: axis 2 is outside a rank-2 tensor") as e:
        pl.parse(BAD_AXIS, filename="bad_axis.py")
    line = next(i for i, s in enumerate(BAD_AXIS.splitlines(), 1) if "BAD-AXIS" in s)
    assert f"bad_axis.py:{line}:" in str(e.value)
