"""tile/tensor fmod and fmods: C fmod (sign of the dividend), exact on both sims against numpy.

ptoas 0.1.1 has no tfmod: pypto takes the floor remainder of the magnitudes (trem) and or-s the
dividend's sign bit in over the bytes viewed as INT32.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.errors import UnsupportedFeatureError, UserError

T = "pl.Tensor[[16, 32], pl.FP32]"
SRC = f"""import pypto.language as pl

@pl.program
class Fmod:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: {T}, b: {T}, s: pl.Scalar[pl.FP32], o1: pl.Out[{T}], o2: pl.Out[{T}], o3: pl.Out[{T}]) -> {T}:
        ta: pl.Tile[[16, 32], pl.FP32] = pl.load(a, [0, 0], [16, 32])
        tb: pl.Tile[[16, 32], pl.FP32] = pl.load(b, [0, 0], [16, 32])
        o1 = pl.store(pl.tile.fmod(ta, tb), [0, 0], o1)
        o2 = pl.store(pl.fmod(ta, -2.5), [0, 0], o2)
        o3 = pl.store(pl.tile.fmods(ta, s), [0, 0], o3)
        return o1

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: {T}, b: {T}, s: pl.Scalar[pl.FP32], o1: pl.Out[{T}], o2: pl.Out[{T}], o3: pl.Out[{T}],
             o4: pl.Out[{T}]) -> {T}:
        o1 = self.k(a, b, s, o1, o2, o3)
        with pl.at(level=pl.Level.CORE_GROUP):
            o4[:] = pl.fmod(a, b)
        return o1
"""


def _inputs() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(11)
    a = (rng.standard_normal((16, 32)) * 20).astype(np.float32)
    b = (rng.standard_normal((16, 32)) * 3).astype(np.float32)
    a[0, :6] = [-0.0, 0.0, np.inf, -7.5, 7.5, np.nan]
    b[0, :6] = [3.0, -3.0, 2.0, np.inf, 0.0, 1.0]
    return a, b


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_fmod_matches_numpy_bit_for_bit(platform, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    compiled = ir.compile(pl.parse(SRC), platform=platform)
    text = "\n".join(p.read_text() for p in sorted(Path(compiled.output_dir).glob("ptoas/*.pto")))
    assert "pto.tfmod" not in text and "pto.trem " in text
    a, b = _inputs()
    outs = [np.zeros((16, 32), np.float32) for _ in range(4)]
    compiled(a, b, np.float32(1.75), *outs)
    with np.errstate(invalid="ignore"):
        want = [np.fmod(a, b), np.fmod(a, np.float32(-2.5)), np.fmod(a, np.float32(1.75)), np.fmod(a, b)]
    for i, (got, exp) in enumerate(zip(outs, want, strict=True)):
        np.testing.assert_array_equal(got, exp, err_msg=f"output o{i + 1}")
        assert np.array_equal(np.signbit(got), np.signbit(exp)) or np.isnan(exp).any()
    assert np.signbit(outs[0][0, 0])  # fmod(-0.0, 3) is -0.0


def test_fmod_of_integers_is_a_located_type_error():
    src = """import pypto.language as pl

@pl.function(type=pl.FunctionType.InCore)
def k(x: pl.Tensor[[16, 32], pl.INT32], o: pl.Out[pl.Tensor[[16, 32], pl.INT32]]) -> pl.Tensor[[16, 32], pl.INT32]:
    t = pl.load(x, [0, 0], [16, 32])
    r = pl.fmod(t, t)
    return pl.store(r, [0, 0], o)
"""
    with pytest.raises(UserError, match="tile.fmod: needs a floating-point operand") as ei:
        pl.parse(src)
    assert ei.value.span.line == 6 and "pl.rem" in ei.value.hint


def test_fmod_of_fp16_is_refused_at_compile_time_naming_the_cast(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    src = """import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 32], pl.FP16], o: pl.Out[pl.Tensor[[16, 32], pl.FP16]]) -> pl.Tensor[[16, 32], pl.FP16]:
        with pl.at(level=pl.Level.CORE_GROUP):
            t = pl.load(x, [0, 0], [16, 32])
            o = pl.store(pl.fmods(t, 2.0), [0, 0], o)
        return o
"""
    with pytest.raises(UnsupportedFeatureError, match="tile.fmods on FP16 tiles is not supported with ptoas 0.1.1") as ei:
        ir.compile(pl.parse(src), platform="a2a3sim")
    assert ei.value.span.line == 9 and "pl.FP32" in ei.value.hint
