"""Reductions ptoas 0.1.1 lacks or miscompiles (argmax/argmin, row/col prod, col max/min), rewritten by
pypto.codegen.pto_reduce: the .pto passes the real ptoas and both simulators compute numpy's answer."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from ptocheck import checker, verify

import pypto.language as pl
from pypto import ir
from pypto.errors import UnsupportedFeatureError

F, H = "pl.Tensor[[16, 16], pl.FP32]", "pl.Tensor[[8, 128], pl.FP16]"
RI, CI = "pl.Tensor[[16, 1], pl.INT32]", "pl.Tensor[[1, 16], pl.INT32]"
RH, CH = "pl.Tensor[[8, 1], pl.INT32]", "pl.Tensor[[1, 128], pl.INT32]"
SRC = f"""import pypto.language as pl

@pl.program
class Red:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: {F}, h: {H}, o1: pl.InOut[{RI}], o2: pl.InOut[{RI}], o3: pl.InOut[{CI}], o4: pl.InOut[{CI}],
          o5: pl.InOut[{RH}], o6: pl.InOut[{CH}], o7: pl.InOut[pl.Tensor[[16, 1], pl.FP32]],
          o8: pl.InOut[pl.Tensor[[1, 16], pl.FP32]], o9: pl.InOut[pl.Tensor[[1, 16], pl.FP32]],
          o10: pl.InOut[pl.Tensor[[1, 128], pl.FP16]]) -> {RI}:
        t: pl.Tile[[16, 16], pl.FP32] = pl.load(x, [0, 0], [16, 16], valid_shape=[12, 10])
        tmp: pl.Tile[[16, 16], pl.FP32] = pl.tile.create([16, 16], dtype=pl.FP32, target_memory=pl.MemorySpace.Vec)
        th: pl.Tile[[8, 128], pl.FP16] = pl.load(h, [0, 0], [8, 128], valid_shape=[8, 72])
        o1 = pl.store(pl.tile.row_argmax(t, tmp), [0, 0], o1)
        o2 = pl.store(pl.tile.row_argmin(t, tmp), [0, 0], o2)
        o3 = pl.store(pl.tile.col_argmax(t, tmp), [0, 0], o3)
        o4 = pl.store(pl.tile.col_argmin(t, tmp), [0, 0], o4)
        o5 = pl.store(pl.tile.row_argmin(th), [0, 0], o5)
        o6 = pl.store(pl.tile.col_argmax(th), [0, 0], o6)
        o7 = pl.store(pl.tile.row_prod(t, tmp), [0, 0], o7)
        o8 = pl.store(pl.tile.col_prod(t), [0, 0], o8)
        o9 = pl.store(pl.tile.col_max(t), [0, 0], o9)
        o10 = pl.store(pl.tile.col_min(th), [0, 0], o10)
        return o1

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: {F}, h: {H}, o1: pl.InOut[{RI}], o2: pl.InOut[{RI}], o3: pl.InOut[{CI}], o4: pl.InOut[{CI}],
             o5: pl.InOut[{RH}], o6: pl.InOut[{CH}], o7: pl.InOut[pl.Tensor[[16, 1], pl.FP32]],
             o8: pl.InOut[pl.Tensor[[1, 16], pl.FP32]], o9: pl.InOut[pl.Tensor[[1, 16], pl.FP32]],
             o10: pl.InOut[pl.Tensor[[1, 128], pl.FP16]]) -> {RI}:
        return self.k(x, h, o1, o2, o3, o4, o5, o6, o7, o8, o9, o10)
"""


def _inputs() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(7)
    x = rng.uniform(0.8, 1.2, (16, 16)).astype(np.float32)
    x[:, 4] = x[:, 1]  # ties: the first index must win
    x[6, :] = x[2, :]
    x[3, 2] = x[3, 7] = 5.0
    x[9, 5] = np.nextafter(x[9, :10].max(), np.float32(2))  # one ulp above the rest of the row
    x[10, 8] = np.nextafter(x[10, :10].min(), np.float32(0))  # one ulp below
    h = rng.permutation(8 * 128).reshape(8, 128).astype(np.float16)
    h[:, 9] = h[:, 30]
    return x, h


def _want(x: np.ndarray, h: np.ndarray) -> list[np.ndarray]:
    v, vh = x[:12, :10].astype(np.float64), h[:, :72]
    out = [np.zeros((16, 1), np.int32), np.zeros((16, 1), np.int32), np.zeros((1, 16), np.int32),
           np.zeros((1, 16), np.int32), np.zeros((8, 1), np.int32), np.zeros((1, 128), np.int32),
           np.zeros((16, 1), np.float32), np.zeros((1, 16), np.float32), np.zeros((1, 16), np.float32),
           np.zeros((1, 128), np.float16)]
    out[0][:12, 0], out[1][:12, 0] = v.argmax(1), v.argmin(1)
    out[2][0, :10], out[3][0, :10] = v.argmax(0), v.argmin(0)
    out[4][:, 0], out[5][0, :72] = vh.argmin(1), vh.argmax(0)
    out[6][:12, 0], out[7][0, :10], out[8][0, :10] = v.prod(1), v.prod(0), v.max(0)
    out[9][0, :72] = vh.min(0)
    return out


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_rewritten_reductions_assemble_and_match_numpy(platform, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    compiled = ir.compile(pl.parse(SRC), platform=platform)
    ptos = sorted(Path(compiled.output_dir).glob("ptoas/*.pto"))
    if checker()[0] is not None:
        verify(*ptos)
    text = ptos[0].read_text()
    assert "pto.tcolmax" not in text and "pto.tcolmin" not in text  # 0.1.1 emits TCOLEXPAND for them
    x, h = _inputs()
    want = _want(x, h)
    outs = [np.zeros_like(w) for w in want]
    compiled(x, h, *outs)
    for i, (got, exp) in enumerate(zip(outs, want, strict=True)):
        if exp.dtype == np.int32:  # indices: exact, first index on ties
            np.testing.assert_array_equal(got, exp, err_msg=f"output o{i + 1}")
        else:
            tol = 1e-5 if exp.dtype == np.float32 else 1e-3
            np.testing.assert_allclose(got, exp, rtol=tol, atol=tol, err_msg=f"output o{i + 1}")


TENSOR_SRC = """import pypto.language as pl

@pl.program
class T:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[32, 64], pl.FP32], r: pl.InOut[pl.Tensor[[32, 1], pl.INT32]],
          c: pl.InOut[pl.Tensor[[1, 64], pl.INT32]]) -> pl.Tensor[[32, 1], pl.INT32]:
        c = pl.assemble(c, pl.col_argmax(a), [0, 0])
        return pl.assemble(r, pl.row_argmin(a), [0, 0])

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[32, 64], pl.FP32], r: pl.InOut[pl.Tensor[[32, 1], pl.INT32]],
             c: pl.InOut[pl.Tensor[[1, 64], pl.INT32]]) -> pl.Tensor[[32, 1], pl.INT32]:
        return self.k(a, r, c)
"""


def test_tensor_level_arg_reductions_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    compiled = ir.compile(pl.parse(TENSOR_SRC), platform="a2a3sim")
    a = np.random.default_rng(2).standard_normal((32, 64)).astype(np.float32)
    r, c = np.zeros((32, 1), np.int32), np.zeros((1, 64), np.int32)
    compiled(a, r, c)
    np.testing.assert_array_equal(r[:, 0], a.argmin(1))
    np.testing.assert_array_equal(c[0], a.argmax(0))


INT_SRC = """import pypto.language as pl

@pl.program
class I:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[16, 16], pl.INT32], r: pl.InOut[pl.Tensor[[16, 1], pl.INT32]]) -> pl.Tensor[[16, 1], pl.INT32]:
        t: pl.Tile[[16, 16], pl.INT32] = pl.load(a, [0, 0], [16, 16])
        return pl.store(pl.tile.row_argmax(t), [0, 0], r)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 16], pl.INT32], r: pl.InOut[pl.Tensor[[16, 1], pl.INT32]]) -> pl.Tensor[[16, 1], pl.INT32]:
        return self.k(a, r)
"""


def test_integer_argmax_is_a_located_refusal_naming_the_rewrite(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UnsupportedFeatureError) as ei:
        ir.compile(pl.parse(INT_SRC), platform="a2a3sim")
    msg = str(ei.value)
    assert "tile.row_argmax on INT32 tiles is not supported with ptoas 0.1.1" in msg
    assert "newer ptoas" in msg and "pl.cast(x, pl.FP32)" in (ei.value.hint or "")
    assert ei.value.span is not None and ei.value.span.line == 8


BF16_SRC = """import pypto.language as pl

@pl.program
class B:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[16, 64], pl.BF16], r: pl.InOut[pl.Tensor[[16, 1], pl.INT32]],
          c: pl.InOut[pl.Tensor[[1, 64], pl.INT32]]) -> pl.Tensor[[16, 1], pl.INT32]:
        t: pl.Tile[[16, 64], pl.BF16] = pl.load(a, [0, 0], [16, 64])
        c = pl.store(pl.tile.col_argmin(t), [0, 0], c)
        return pl.store(pl.tile.row_argmax(t), [0, 0], r)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 64], pl.BF16], r: pl.InOut[pl.Tensor[[16, 1], pl.INT32]],
             c: pl.InOut[pl.Tensor[[1, 64], pl.INT32]]) -> pl.Tensor[[16, 1], pl.INT32]:
        return self.k(a, r, c)
"""


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_bf16_arg_reductions_with_ties(platform, tmp_path, monkeypatch, torch):
    monkeypatch.chdir(tmp_path)
    compiled = ir.compile(pl.parse(BF16_SRC), platform=platform)
    g = torch.Generator().manual_seed(9)
    a = torch.randn(16, 64, generator=g).bfloat16()
    a[:, 7], a[5] = a[:, 3], a[2]
    r, c = torch.zeros(16, 1, dtype=torch.int32), torch.zeros(1, 64, dtype=torch.int32)
    compiled(a, r, c)
    assert torch.equal(r[:, 0], a.float().argmax(1).int())
    assert torch.equal(c[0], a.float().argmin(0).int())


INT_ROWS = """import pypto.language as pl

@pl.program
class IR:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[32, 128], pl.INT32], o1: pl.InOut[pl.Tensor[[32, 1], pl.INT32]],
          o2: pl.InOut[pl.Tensor[[32, 1], pl.INT32]], o3: pl.InOut[pl.Tensor[[32, 1], pl.INT32]]) -> pl.Tensor[[32, 1], pl.INT32]:
        t: pl.Tile[[32, 128], pl.INT32] = pl.load(a, [0, 0], [32, 128], valid_shape=[32, 100])
        o2 = pl.store(pl.tile.row_max(t), [0, 0], o2)
        o3 = pl.store(pl.tile.row_min(t), [0, 0], o3)
        return pl.store(pl.tile.row_sum(t), [0, 0], o1)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[32, 128], pl.INT32], o1: pl.InOut[pl.Tensor[[32, 1], pl.INT32]],
             o2: pl.InOut[pl.Tensor[[32, 1], pl.INT32]], o3: pl.InOut[pl.Tensor[[32, 1], pl.INT32]]) -> pl.Tensor[[32, 1], pl.INT32]:
        return self.k(a, o1, o2, o3)
"""


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_integer_row_reductions_fold_columns(platform, tmp_path, monkeypatch):
    # ptoas 0.1.1 takes f16/f32 tiles only for trowsum/trowmax/trowmin
    monkeypatch.chdir(tmp_path)
    compiled = ir.compile(pl.parse(INT_ROWS), platform=platform)
    if checker()[0] is not None:
        verify(*sorted(Path(compiled.output_dir).glob("ptoas/*.pto")))
    a = np.random.default_rng(12).integers(-10**6, 10**6, (32, 128)).astype(np.int32)
    outs = [np.zeros((32, 1), np.int32) for _ in range(3)]
    compiled(a, *outs)
    v = a[:, :100]
    for got, exp in zip(outs, (v.sum(1), v.max(1), v.min(1)), strict=True):
        np.testing.assert_array_equal(got[:, 0], exp)
