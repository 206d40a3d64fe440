"""A ``pl.Tensor[..., pl.INDEX]`` argument takes 64-bit integer data (INDEX is a signed 64-bit type).

The orchestration below reads the valid extents of a copy from such a tensor; the runtime used to
refuse int64 data for it ("dtype int64 does not match the compiled dtype index"), leaving no dtype
a caller could pass.
"""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir


@pl.program
class _CopyValid:
    @pl.function(type=pl.FunctionType.InCore)
    def copy(self, x: pl.Tensor[[32, 32], pl.FP32], out: pl.Out[pl.Tensor[[32, 32], pl.FP32]],
             rows: pl.Scalar[pl.INDEX], cols: pl.Scalar[pl.INDEX]) -> pl.Tensor[[32, 32], pl.FP32]:
        t = pl.load(x, [0, 0], [32, 32], valid_shape=[rows, cols])
        out = pl.store(t, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[32, 32], pl.FP32], extents: pl.Tensor[[2], pl.INDEX],
             out: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
        rows: pl.Scalar[pl.INDEX] = pl.tensor.read(extents, [0])
        cols: pl.Scalar[pl.INDEX] = pl.tensor.read(extents, [1])
        out = self.copy(x, out, rows, cols)
        return out


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    return ir.compile(_CopyValid, output_dir=str(tmp_path_factory.mktemp("copy_valid")), platform="a2a3sim")


def test_int64_extents_choose_the_copied_block(compiled) -> None:
    x = np.arange(32 * 32, dtype=np.float32).reshape(32, 32)
    out = np.full((32, 32), -1.0, dtype=np.float32)
    compiled(x, np.array([8, 12], dtype=np.int64), out)
    np.testing.assert_array_equal(out[:8, :12], x[:8, :12])


@pytest.mark.parametrize("dtype", [np.int32, np.uint64])
def test_other_element_types_are_refused_by_name(compiled, dtype) -> None:
    x, out = np.zeros((32, 32), np.float32), np.zeros((32, 32), np.float32)
    with pytest.raises(TypeError, match=r"argument 1 \('extents'\): dtype \w+ does not match the compiled dtype index"):
        compiled(x, np.array([8, 12], dtype=dtype), out)
