"""Integer tile.div / tensor.div: C division (truncated toward zero), exact on both sims against torch.

ptoas 0.1.1's tdiv takes f16/f32 only: pypto divides in INT32 from an f32 estimate and corrects the
quotient with exact integer arithmetic (pypto/codegen/pto_intdiv.py). The dividends span the whole
dtype range (INT32 values far beyond f32's 24-bit mantissa), the divisors include +-1, the extremes
and negative values, and one kernel divides a partial valid region.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import pypto.language as pl
from pypto import ir
from pypto.errors import UnsupportedFeatureError

SRC = """import pypto.language as pl

@pl.program
class IntDiv:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: {T}, b: {T}, o1: pl.Out[{T}], o2: pl.InOut[{T}]) -> {T}:
        ta = pl.load(a, [0, 0], [16, 64])
        tb = pl.load(b, [0, 0], [16, 64])
        o1 = pl.store(pl.tile.div(ta, tb), [0, 0], o1)
        pa = pl.load(a, [0, 0], [16, 64], valid_shape=[9, 40])
        pb = pl.load(b, [0, 0], [16, 64], valid_shape=[9, 40])
        o2 = pl.store(pl.tile.div(pa, pb), [0, 0], o2)
        return o1

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: {T}, b: {T}, o1: pl.Out[{T}], o2: pl.InOut[{T}], o3: pl.Out[{T}]) -> {T}:
        o1 = self.k(a, b, o1, o2)
        with pl.at(level=pl.Level.CORE_GROUP):
            o3[:] = pl.div(a, b)
        return o1
"""


def _inputs(torch, dtype):
    info = torch.iinfo(dtype)
    g = torch.Generator().manual_seed(5)
    a = torch.randint(info.min, info.max, (16, 64), generator=g, dtype=torch.int64)
    span = 3000 if dtype is torch.int16 else 70000
    b = torch.randint(-span, span, (16, 64), generator=g, dtype=torch.int64)
    b[b == 0] = -9
    b[0, :8] = torch.tensor([1, -1, 2, -2, 7, info.max, info.min, -3])
    a[1, :6] = torch.tensor([info.max, info.min + 1, -7, 7, 0, 6])
    b[1, :6] = torch.tensor([2, -2, 2, -2, 5, 3])
    return a.to(dtype), b.to(dtype)


@pytest.mark.sim
@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
@pytest.mark.parametrize("name", ["INT16", "INT32"])
def test_integer_div_truncates_toward_zero_over_the_whole_range(name, platform, tmp_path, monkeypatch, torch):
    monkeypatch.chdir(tmp_path)
    dtype = {"INT16": torch.int16, "INT32": torch.int32}[name]
    compiled = ir.compile(pl.parse(SRC.format(T=f"pl.Tensor[[16, 64], pl.{name}]")), platform=platform)
    text = "\n".join(p.read_text() for p in sorted(Path(compiled.output_dir).glob("ptoas/*.pto")))
    assert f"dtype={'i16' if name == 'INT16' else 'i32'}" in text and "pto.tdiv" in text
    a, b = _inputs(torch, dtype)
    o1, o2, o3 = torch.zeros_like(a), torch.full_like(a, 5), torch.zeros_like(a)
    compiled(a, b, o1, o2, o3)
    want = torch.div(a.to(torch.int64), b.to(torch.int64), rounding_mode="trunc").to(dtype)
    assert torch.equal(o1, want) and torch.equal(o3, want)
    part = torch.full_like(a, 5)
    part[:9, :40] = want[:9, :40]  # outside the valid region the InOut tensor keeps its values
    assert torch.equal(o2, part)


def test_int8_div_is_refused_naming_the_cast(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    src = """import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 32], pl.INT8], o: pl.Out[pl.Tensor[[16, 32], pl.INT8]]) -> pl.Tensor[[16, 32], pl.INT8]:
        with pl.at(level=pl.Level.CORE_GROUP):
            t = pl.load(x, [0, 0], [16, 32])
            o = pl.store(pl.tile.div(t, t), [0, 0], o)
        return o
"""
    with pytest.raises(UnsupportedFeatureError, match=r"tile.div on INT8/INT8 tiles is not supported with ptoas "
                                                      r"0.1.1: its tdiv takes f16/f32 only") as ei:
        ir.compile(pl.parse(src), platform="a5sim")
    assert ei.value.span.line == 9 and "pl.INT32" in ei.value.hint
