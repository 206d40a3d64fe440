"""matmul_bias under AutoTileMatmulL0 (the bias goes through the Bias table, once per output tile, in
[1, n] windows that fit it), narrowing casts (to INT8, INT16) whose C++ g++ accepts."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from ptocheck import checker, verify

import pypto.language as pl
from pypto import ir
from pypto.backend.kernel_wrapper import preprocess_ptoas


def _bias_src(m: int, k: int, n: int, dt: str, bdt: str) -> str:
    odt = "INT32" if dt == "INT8" else "FP32"
    return f"""import pypto.language as pl

@pl.program
class MB:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[{m}, {k}], pl.{dt}], b: pl.Tensor[[{k}, {n}], pl.{dt}],
             bias: pl.Tensor[[1, {n}], pl.{bdt}],
             out: pl.Out[pl.Tensor[[{m}, {n}], pl.{odt}]]) -> pl.Tensor[[{m}, {n}], pl.{odt}]:
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="mb"):
            a_mat = pl.load(a, [0, 0], [{m}, {k}], target_memory=pl.Mem.Mat)
            b_mat = pl.load(b, [0, 0], [{k}, {n}], target_memory=pl.Mem.Mat)
            bias_mat = pl.load(bias, [0, 0], [1, {n}], target_memory=pl.Mem.Mat)
            c = pl.tile.matmul_bias(a_mat, b_mat, bias_mat)
            out = pl.store(c, [0, 0], out)
        return out
"""


def _compile(src: str, platform: str):
    compiled = ir.compile(pl.parse(src), platform=platform)
    ptos = sorted(Path(compiled.output_dir).glob("ptoas/*.pto"))
    if checker()[0] is not None:
        verify(*ptos)
    return compiled, "".join(p.read_text() for p in ptos)


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_bf16_matmul_bias_tiled_by_the_bias_table(platform, tmp_path, monkeypatch, torch):
    # [64, 512] f32 fits L0C on both, but a [1, 512] f32 bias (2 KiB) does not fit a2a3's 1 KiB Bias table
    monkeypatch.chdir(tmp_path)
    compiled, text = _compile(_bias_src(64, 272, 512, "BF16", "FP32"), platform)
    assert "loc=bias" in text and "pto.tmatmul.bias" in text and "pto.tmatmul.acc" in text
    g = torch.Generator().manual_seed(4)
    a = torch.randn(64, 272, generator=g).to(torch.bfloat16)
    b = torch.randn(272, 512, generator=g).to(torch.bfloat16)
    bias = torch.randn(1, 512, generator=g)
    out = torch.zeros(64, 512)
    compiled(a, b, bias, out)
    want = a.float() @ b.float() + bias
    torch.testing.assert_close(out, want, rtol=1e-4, atol=1e-3)  # bf16 products are exact in f32


def test_int8_matmul_bias_tiled_over_k_adds_the_bias_once(tmp_path, monkeypatch, torch):
    monkeypatch.chdir(tmp_path)
    compiled, text = _compile(_bias_src(32, 512, 256, "INT8", "INT32"), "a2a3sim")
    assert "scf.for" in text  # K is split: [512, 256] int8 exceeds L0B
    g = torch.Generator().manual_seed(5)
    a = torch.randint(-8, 8, (32, 512), dtype=torch.int8, generator=g)
    b = torch.randint(-8, 8, (512, 256), dtype=torch.int8, generator=g)
    bias = torch.randint(-20, 21, (1, 256), dtype=torch.int32, generator=g)
    out = torch.zeros(32, 256, dtype=torch.int32)
    compiled(a, b, bias, out)
    assert torch.equal(out, a.int() @ b.int() + bias)


def _cast_src(dst: str, col_major: bool) -> str:
    body = ("        col: pl.Tile[[16, 1], pl.INT32] = pl.tile.reshape(t, [16, 1])\n"
            f"        nar: pl.Tile[[16, 1], pl.{dst}] = pl.tile.cast(col, target_type=pl.{dst})\n"
            f"        row: pl.Tile[[1, 16], pl.{dst}] = pl.tile.reshape(nar, [1, 16])\n") if col_major else \
        f"        row: pl.Tile[[1, 16], pl.{dst}] = pl.tile.cast(t, target_type=pl.{dst})\n"
    ty = f"pl.Tensor[[1, 16], pl.{dst}]"
    return f"""import pypto.language as pl

@pl.program
class C:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, a: pl.Tensor[[1, 16], pl.INT32], out: pl.Out[{ty}]) -> {ty}:
        t: pl.Tile[[1, 16], pl.INT32] = pl.load(a, [0, 0], [1, 16])
{body}        out = pl.store(row, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[1, 16], pl.INT32], out: pl.Out[{ty}]) -> {ty}:
        return self.kernel(a, out)
"""


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
@pytest.mark.parametrize("col_major", [False, True], ids=["row_major", "col_major"])
@pytest.mark.parametrize("dst", ["INT8", "INT16"])
def test_narrowing_casts_build_and_wrap_like_cpp(platform, col_major, dst, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    compiled, _ = _compile(_cast_src(dst, col_major), platform)
    a = (np.arange(-8, 8, dtype=np.int32) * 5000 + 3).reshape(1, 16)
    out = np.zeros((1, 16), np.dtype(dst.lower()))
    compiled(a, out)
    np.testing.assert_array_equal(out, a.astype(out.dtype))  # two's-complement truncation, as the C++ cast


def test_pointer_offsets_take_the_element_type_of_their_base():
    cpp = ("__global__ AICORE void k(__gm__ int8_t* v1, __gm__ float* v2) {\n"
           "  __gm__ int32_t* v5 = v1 + v4;\n"
           "  __gm__ float* v6 = v2 + v4;\n"
           "  __gm__ int32_t* v7 = v9 + v4;\n}\n")
    text = preprocess_ptoas(cpp)
    assert "__gm__ int8_t* v5 = v1 + v4;" in text and "__gm__ float* v6 = v2 + v4;" in text
    assert "__gm__ int32_t* v7 = v9 + v4;" in text  # an unknown base is left alone


def test_a_bias_stage_in_mat_is_one_nd_row(tmp_path):
    # the Bias table holds one row: the Mat tile staging it is laid out ND (its logical bytes), not in NZ boxes
    # that span 16 rows while ptoas 0.1.1 plans only the row's bytes
    compiled = ir.compile(pl.parse(_bias_src(528, 32, 528, "FP16", "FP32")), output_dir=str(tmp_path),
                          skip_ptoas=True)
    text = "".join(p.read_text() for p in Path(compiled.output_dir).rglob("*.pto"))
    bias_mats = [ln for ln in text.splitlines() if "alloc_tile" in ln and "loc=mat, dtype=f32, rows=1" in ln]
    assert bias_mats and all("blayout=row_major, slayout=none_box" in ln for ln in bias_mats)
    operands = [ln for ln in text.splitlines() if "alloc_tile" in ln and "loc=mat, dtype=f16" in ln]
    assert operands and all("blayout=col_major, slayout=row_major" in ln for ln in operands)  # still NZ


@pytest.mark.sim
@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
@pytest.mark.parametrize("planner", ["PYPTO", "DSA_RP"])
def test_a_bias_grid_with_peeled_row_and_column_matches_torch(platform, planner, tmp_path, torch):
    # 528 x 528 leaves a peeled last column (and, on a5, row) of tiles: more Mat tiles for ptoas to place beside
    # the bias stages, which overlapped an NZ-boxed bias before
    from pypto.ir import MemoryPlanner

    compiled = ir.compile(pl.parse(_bias_src(528, 32, 528, "FP16", "FP32")), output_dir=str(tmp_path),
                          platform=platform, memory_planner=getattr(MemoryPlanner, planner))
    g = torch.Generator().manual_seed(5)
    a, b = torch.randn(528, 32, generator=g).half(), torch.randn(32, 528, generator=g).half()
    bias, out = torch.randn(1, 528, generator=g), torch.zeros(528, 528)
    compiled(a, b, bias, out)
    torch.testing.assert_close(out, a.float() @ b.float() + bias, rtol=1e-3, atol=1e-3)
