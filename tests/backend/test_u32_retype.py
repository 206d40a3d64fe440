"""UINT32 tensors through ptoas 0.1.1: its C++ types a ``!pto.ptr<ui32>`` parameter ``int32_t*`` but views
it as ``GlobalTensor<uint32_t>``; pypto retypes the pointer parameters and their offsets ``uint32_t*``."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.backend.u32_retype import retype_cpp

PTO = """func.func @k(%arg0: !pto.ptr<i32>, %arg1: !pto.ptr<ui32>) {
  %v = pto.make_tensor_view %arg1, shape = [%c1, %c32] strides = [%c32, %c1] : !pto.tensor_view<2xui32>
"""
CPP = """__global__ AICORE void k(__gm__ int32_t* v1, __gm__ int32_t* v2) {
  __gm__ int32_t* v5 = v1 + v9;
  using GT_1 = GlobalTensor<int32_t, GTShape_1, GTStride_1>;
  __gm__ int32_t* v10 = v2 + v9;
  using GT_2 = GlobalTensor<uint32_t, GTShape_2, GTStride_2>;
  GT_2 v11 = GT_2(v10, v7, v8);
}
"""


def test_only_the_ui32_parameter_and_its_offsets_are_retyped() -> None:
    out = retype_cpp(CPP, PTO)
    assert "void k(__gm__ int32_t* v1, __gm__ uint32_t* v2)" in out
    assert "__gm__ uint32_t* v10 = v2 + v9;" in out and "__gm__ int32_t* v5 = v1 + v9;" in out


def test_a_unit_without_ui32_is_unchanged() -> None:
    assert retype_cpp(CPP, PTO.replace("ui32", "i32")) == CPP


SRC = """import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[1, 32], pl.UINT32], seq: pl.Out[pl.Tensor[[1, 32], pl.UINT32]],
          o: pl.Out[pl.Tensor[[1, 32], pl.UINT32]]) -> pl.Tensor[[1, 32], pl.UINT32]:
        c = pl.tile.ci(7, [1, 32], dtype=pl.UINT32)
        seq = pl.store(c, [0, 0], seq)
        o = pl.store(pl.add(pl.load(x, [0, 0], [1, 32]), c), [0, 0], o)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[1, 32], pl.UINT32], seq: pl.Out[pl.Tensor[[1, 32], pl.UINT32]],
             o: pl.Out[pl.Tensor[[1, 32], pl.UINT32]]) -> pl.Tensor[[1, 32], pl.UINT32]:
        o = self.k(x, seq, o)
        return o
"""


@pytest.mark.sim
def test_uint32_ci_and_add_match_numpy(tmp_path: Path) -> None:
    x = (np.arange(32, dtype=np.uint32) * np.uint32(140_000_000)).reshape(1, 32)  # past 2**31, wraps past 2**32
    seq, o = np.zeros((1, 32), np.uint32), np.zeros((1, 32), np.uint32)
    ir.compile(pl.parse(SRC), output_dir=str(tmp_path), platform="a2a3sim")(x, seq, o)
    np.testing.assert_array_equal(seq, np.arange(7, 7 + 32, dtype=np.uint32)[None])
    np.testing.assert_array_equal(o, x + seq)


@pytest.mark.sim
def test_a_torch_int32_tensor_carries_uint32_bits(tmp_path: Path, torch) -> None:
    x = torch.tensor([[-1] * 32], dtype=torch.int32)  # 0xFFFFFFFF; PyTorch's uint32 has few ops
    seq, o = torch.zeros((1, 32), dtype=torch.int32), torch.zeros((1, 32), dtype=torch.int32)
    ir.compile(pl.parse(SRC), output_dir=str(tmp_path), platform="a2a3sim")(x, seq, o)
    assert seq[0].tolist() == list(range(7, 39)) and o[0].tolist() == list(range(6, 38))  # wraps past 2**32


def test_a_torch_int16_tensor_is_no_uint32(tmp_path: Path, torch) -> None:
    compiled = ir.compile(pl.parse(SRC), output_dir=str(tmp_path), platform="a2a3sim")
    x = torch.zeros((1, 32), dtype=torch.int16)
    with pytest.raises(TypeError, match="dtype int16 does not match the compiled dtype uint32"):
        compiled(x, torch.zeros((1, 32), dtype=torch.int32), torch.zeros((1, 32), dtype=torch.int32))
