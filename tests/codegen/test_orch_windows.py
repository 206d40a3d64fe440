"""A ``tensor.slice`` window passed from an orchestration to a kernel: packed or declared strides.

A window narrower than its parent's rows (``x[0:32, 16:48]`` of a ``[32, 64]`` tensor) has gaps between
its rows; a kernel whose parameter is a dense tensor read it as if packed and computed wrong numbers.
Now that is a located error with the two rewrites, and a parameter declaring the parent's strides
reads the window right. Windows that are one run of their parent (whole rows, one row) pass as before.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.errors import PartialCodegenError


def _program(window: tuple[int, int], offset: tuple[int, int], strided: bool):
    rows, cols = window
    r0, c0 = offset
    if strided:
        @pl.program
        class Windowed:
            @pl.function(type=pl.FunctionType.InCore)
            def k(self, x: pl.Tensor[[rows, cols], pl.FP32, pl.TensorView(stride=[64, 1], layout=pl.TensorLayout.ND)],
                  y: pl.Out[pl.Tensor[[rows, cols], pl.FP32]]) -> pl.Tensor[[rows, cols], pl.FP32]:
                y = pl.store(pl.mul(pl.load(x, [0, 0], [rows, cols]), 3.0), [0, 0], y)
                return y

            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: pl.Tensor[[32, 64], pl.FP32],
                     y: pl.Out[pl.Tensor[[rows, cols], pl.FP32]]) -> pl.Tensor[[rows, cols], pl.FP32]:
                w = pl.slice(x, [rows, cols], [r0, c0])
                y = self.k(w, y)
                return y
        return Windowed

    @pl.program
    class Dense:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[rows, cols], pl.FP32],
              y: pl.Out[pl.Tensor[[rows, cols], pl.FP32]]) -> pl.Tensor[[rows, cols], pl.FP32]:
            y = pl.store(pl.mul(pl.load(x, [0, 0], [rows, cols]), 3.0), [0, 0], y)
            return y

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[32, 64], pl.FP32],
                 y: pl.Out[pl.Tensor[[rows, cols], pl.FP32]]) -> pl.Tensor[[rows, cols], pl.FP32]:
            w = pl.slice(x, [rows, cols], [r0, c0])
            y = self.k(w, y)
            return y
    return Dense


def test_a_gappy_window_to_a_dense_parameter_is_located(tmp_path: Path) -> None:
    with pytest.raises(PartialCodegenError, match=r"argument 'w' of 'k' is a \[32, 32\] window of a \[32, 64\] tensor, whose "
                                        r"rows are 64 elements apart") as e:
        ir.compile(_program((32, 32), (0, 16), strided=False), output_dir=str(tmp_path), skip_ptoas=True)
    assert "test_orch_windows.py:" in str(e.value)  # the call site, file:line:col
    assert "pl.TensorView(stride=[64, 1], layout=pl.TensorLayout.ND)" in str(e.value)


@pytest.mark.sim
@pytest.mark.parametrize(("window", "offset", "strided"), [
    ((32, 32), (0, 16), True),    # gaps between rows: the parameter declares the parent's strides
    ((8, 64), (8, 0), False),     # whole rows: one run of the parent
    ((1, 32), (5, 16), False),    # a single row: one run too
])
def test_windows_reach_the_kernel_right(tmp_path: Path, window, offset, strided) -> None:
    c = ir.compile(_program(window, offset, strided), output_dir=str(tmp_path))
    x = np.random.default_rng(3).random((32, 64), dtype=np.float32)
    y = np.zeros(window, np.float32)
    c(x, y)
    r, q = offset
    np.testing.assert_allclose(y, 3.0 * x[r:r + window[0], q:q + window[1]], rtol=1e-6, atol=0)
