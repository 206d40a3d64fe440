"""UINT16 data on ptoas 0.1.1 (no ui16 tiles): carried as INT16 through the ops whose bits do not depend on
the sign, casts rewritten to mean what they mean on UINT16, every other op a located refusal."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from unsigned_kernel import compile_checked, one_kernel

import pypto.language as pl
from pypto import ir
from pypto.errors import UnsupportedFeatureError

U, W = "pl.Tensor[[16, 64], pl.UINT16]", "pl.Tensor[[16, 64], pl.INT32]"
SRC = f"""import pypto.language as pl

@pl.program
class U16:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: {U}, y: {U}, n: {W}, o: pl.Out[{U}], w: pl.Out[{W}], f: pl.Out[pl.Tensor[[16, 64], pl.FP32]],
          c: pl.Out[pl.Tensor[[1, 64], pl.UINT16]], t16: pl.Out[{U}]) -> {U}:
        t = pl.load(x, [0, 0], [16, 64])
        u = pl.load(y, [0, 0], [16, 64])
        r = pl.xor(pl.add(t, u), pl.tile.adds(pl.mul(u, t), 40000))
        o = pl.store(r, [0, 0], o)
        w = pl.store(pl.cast(r, pl.INT32), [0, 0], w)
        f = pl.store(pl.cast(pl.shl(t, pl.tile.full([16, 64], 1, dtype=pl.UINT16)), pl.FP32), [0, 0], f)
        c = pl.store(pl.tile.ci(65530, [1, 64], dtype=pl.UINT16), [0, 0], c)
        t16 = pl.store(pl.cast(pl.load(n, [0, 0], [16, 64]), pl.UINT16), [0, 0], t16)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: {U}, y: {U}, n: {W}, o: pl.Out[{U}], w: pl.Out[{W}], f: pl.Out[pl.Tensor[[16, 64], pl.FP32]],
             c: pl.Out[pl.Tensor[[1, 64], pl.UINT16]], t16: pl.Out[{U}]) -> {U}:
        o = self.k(x, y, n, o, w, f, c, t16)
        return o
"""


@pytest.mark.sim
@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_uint16_wraps_casts_and_counts_like_numpy(platform: str, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    compiled, ptos = compile_checked(SRC, platform)
    text = ptos[0].read_text()
    assert "ui16" not in text and "!pto.ptr<i16>" in text
    rng = np.random.default_rng(3)
    x = rng.integers(0, 2**16, (16, 64), dtype=np.uint16)
    y = rng.integers(0, 2**16, (16, 64), dtype=np.uint16)
    x[0, :4] = [0, 1, 0x7FFF, 0xFFFF]
    n = rng.integers(-(2**31), 2**31, (16, 64), dtype=np.int32)
    o, t16 = np.zeros((16, 64), np.uint16), np.zeros((16, 64), np.uint16)
    w, f, c = np.zeros((16, 64), np.int32), np.zeros((16, 64), np.float32), np.zeros((1, 64), np.uint16)
    compiled(x, y, n, o, w, f, c, t16)
    r = (x + y) ^ (y * x + np.uint16(40000))  # numpy's uint16 arithmetic wraps modulo 2**16
    np.testing.assert_array_equal(o, r)
    np.testing.assert_array_equal(w, r.astype(np.int32))  # zero-extended, never negative
    np.testing.assert_array_equal(f, (x << np.uint16(1)).astype(np.float32))
    np.testing.assert_array_equal(c[0], (np.arange(64) + 65530).astype(np.uint16))  # counts on past 0xFFFF
    np.testing.assert_array_equal(t16, n.astype(np.uint16))  # truncated to the low 16 bits


def _kernel(body: str, out: str = U) -> str:
    return one_kernel(U, body, out)


@pytest.mark.parametrize(("body", "out", "what"), [
    ("o = pl.store(pl.maximum(t, t), [0, 0], o)", U, "tile.maximum on UINT16 data"),
    ("o = pl.store(pl.shr(t, t), [0, 0], o)", U, "tile.shr on UINT16 data"),
    ("o = pl.store(pl.tile.row_max(t), [0, 0], o)", "pl.Tensor[[16, 1], pl.UINT16]", "tile.row_max on UINT16"),
    ("o = pl.store(pl.cast(t, pl.FP16), [0, 0], o)", "pl.Tensor[[16, 64], pl.FP16]",
     "tile.cast(UINT16 -> FP16) on UINT16 data"),
    ("o = pl.store(pl.cast(pl.cast(t, pl.FP32), pl.UINT16), [0, 0], o)", U,
     "tile.cast(FP32 -> UINT16) on UINT16 data"),
    ("o = pl.store(pl.tile.fillpad(pl.load(x, [0, 0], [16, 64], [16, 40]), pad_value=pl.PadValue.max), [0, 0], o)",
     U, "tile.fillpad on UINT16 data"),
])
def test_sign_dependent_ops_on_uint16_are_located_refusals(body: str, out: str, what: str, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UnsupportedFeatureError) as ei:
        ir.compile(pl.parse(_kernel(body, out)), platform="a2a3sim")
    msg = str(ei.value)
    assert what in msg and "ptoas 0.1.1" in msg and "ptoas v0.57" in msg and "carries UINT16 as INT16" in msg
    assert "pl.cast(" in (ei.value.hint or "")
    assert ei.value.span is not None and ei.value.span.line == 8
