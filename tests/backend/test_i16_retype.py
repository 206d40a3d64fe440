"""INT16 data through ptoas 0.1.1: its C++ spells i16 tiles with the fallback ``using T = float;``, i16
pointer parameters ``void*`` and their views ``GlobalTensor<float>``; pypto retypes them ``int16_t``."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.backend.i16_retype import retype_cpp

PTO = """func.func @k(%arg0: !pto.ptr<f32>, %arg1: !pto.ptr<i16>, %arg2: i16) {
  %v = pto.make_tensor_view %arg1, shape = [%c16, %c32] strides = [%c32, %c1] : !pto.tensor_view<2xi16>
"""
CPP = """__global__ AICORE void k(__gm__ float* v1, __gm__ void* v2, int32_t v3) {
  using T = float;
  Tile<TileType::Vec, T, 16, 32, BLayout::RowMajor, 16, 32, SLayout::NoneBox, 512, PadValue::Null> v4;
  __gm__ float* v5 = v1 + v9;
  using GT_1 = GlobalTensor<float, GTShape_1, GTStride_1>;
  GT_1 v6 = GT_1(v5, v7, v8);
  __gm__ int32_t* v10 = v2 + v9;
  using GT_2 = GlobalTensor<float, GTShape_2, GTStride_2>;
  GT_2 v11 = GT_2(v10, v7, v8);
}
"""


def test_only_the_i16_parameter_its_offsets_views_and_tiles_are_retyped() -> None:
    out = retype_cpp(CPP, PTO)
    assert "void k(__gm__ float* v1, __gm__ int16_t* v2, int32_t v3)" in out
    assert "using T = int16_t;" in out and "__gm__ int16_t* v10 = v2 + v9;" in out
    assert "using GT_2 = GlobalTensor<int16_t," in out and "using GT_1 = GlobalTensor<float," in out
    assert "__gm__ float* v5 = v1 + v9;" in out


def test_a_unit_without_i16_is_unchanged() -> None:
    assert retype_cpp(CPP, PTO.replace("i16", "i32")) == CPP


SRC = """import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 64], pl.INT16], y: pl.Tensor[[16, 64], pl.INT16], s: pl.Scalar[pl.INT16],
          o: pl.Out[pl.Tensor[[16, 64], pl.INT16]], f: pl.Out[pl.Tensor[[16, 64], pl.FP32]]
          ) -> pl.Tensor[[16, 64], pl.INT16]:
        t = pl.load(x, [0, 0], [16, 64])
        u = pl.load(y, [0, 0], [16, 64])
        r = pl.add(pl.tile.adds(t, s), u)
        o = pl.store(r, [0, 0], o)
        f = pl.store(pl.cast(r, pl.FP32), [0, 0], f)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 64], pl.INT16], y: pl.Tensor[[16, 64], pl.INT16], s: pl.Scalar[pl.INT16],
             o: pl.Out[pl.Tensor[[16, 64], pl.INT16]], f: pl.Out[pl.Tensor[[16, 64], pl.FP32]]
             ) -> pl.Tensor[[16, 64], pl.INT16]:
        o = self.k(x, y, s, o, f)
        return o
"""


@pytest.mark.sim
@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_int16_add_wraps_like_numpy(platform: str, tmp_path: Path) -> None:
    compiled = ir.compile(pl.parse(SRC), output_dir=str(tmp_path), platform=platform)
    cpp = next(Path(compiled.output_dir).rglob("ptoas/*.cpp")).read_text()
    assert "using T = int16_t;" in cpp
    rng = np.random.default_rng(0)
    x = rng.integers(-32768, 32768, (16, 64), dtype=np.int16)
    y = rng.integers(-32768, 32768, (16, 64), dtype=np.int16)
    o, f = np.zeros((16, 64), np.int16), np.zeros((16, 64), np.float32)
    compiled(x, y, np.int16(-7), o, f)
    want = (x.astype(np.int32) - 7 + y).astype(np.int16)  # wraps modulo 2**16, as torch's int16 add
    np.testing.assert_array_equal(o, want)
    np.testing.assert_array_equal(f, want.astype(np.float32))
