"""``pl.write`` of a scalar into a Vec tile in a kernel: a bit-exact blend over the tile's i32 view.

ptoas 0.1.1 has no usable ``pto.tsetval``; pypto builds an all-ones mask at the element's storage
position (``tci`` + ``tabs``/``tmin``/``tadds``) and blends the broadcast scalar's bits in with
``txor``/``tand``, so NaN, infinities and -0.0 land unchanged and every other element keeps its bits.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.errors import UnsupportedFeatureError
from tests.codegen.ptocheck import checker, verify

SRC = """import pypto.language as pl

@pl.program
class Write:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 32], pl.DT], a: pl.Scalar[pl.DT], b: pl.Scalar[pl.DT],
          o: pl.Out[pl.Tensor[[16, 32], pl.DT]]) -> pl.Tensor[[16, 32], pl.DT]:
        t = pl.load(x, [0, 0], [16, 32])
        pl.write(t, [0, 0], a)
        pl.write(t, [15, 31], b)
        for i in pl.range(3):
            t = pl.write(t, [i + 2, i * 3], b)
        return pl.store(t, [0, 0], o)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 32], pl.DT], a: pl.Scalar[pl.DT], b: pl.Scalar[pl.DT],
             o: pl.Out[pl.Tensor[[16, 32], pl.DT]]) -> pl.Tensor[[16, 32], pl.DT]:
        o = self.k(x, a, b, o)
        return o
"""


def _expected(x: np.ndarray, a, b) -> np.ndarray:
    e = x.copy()
    e[0, 0], e[15, 31] = a, b
    for i in range(3):
        e[i + 2, i * 3] = b
    return e


@pytest.mark.sim
@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_fp32_writes_are_bit_exact(platform: str, tmp_path: Path) -> None:
    compiled = ir.compile(pl.parse(SRC.replace("pl.DT", "pl.FP32")), output_dir=str(tmp_path), platform=platform)
    pto = next(Path(compiled.output_dir).rglob("*.pto"))
    assert "tsetval" not in pto.read_text() and pto.read_text().count("pto.txor ") == 6
    if checker()[0] is not None:
        verify(pto)
    x = np.random.default_rng(7).standard_normal((16, 32)).astype(np.float32)
    x[15, 30] = -0.0
    o = np.zeros((16, 32), np.float32)
    compiled(x, np.float32(np.nan), np.float32(-0.0), o)
    want = _expected(x, np.float32(np.nan), np.float32(-0.0))
    np.testing.assert_array_equal(o.view(np.int32), want.view(np.int32))


@pytest.mark.sim
def test_int32_writes(tmp_path: Path) -> None:
    compiled = ir.compile(pl.parse(SRC.replace("pl.DT", "pl.INT32")), output_dir=str(tmp_path), platform="a2a3sim")
    x = np.arange(16 * 32, dtype=np.int32).reshape(16, 32) - 100
    o = np.zeros((16, 32), np.int32)
    compiled(x, -(2 ** 31), 2 ** 31 - 1, o)
    np.testing.assert_array_equal(o, _expected(x, -(2 ** 31), 2 ** 31 - 1))


def test_a_write_into_an_fp16_tile_is_a_located_error(tmp_path: Path) -> None:
    with pytest.raises(UnsupportedFeatureError) as ei:
        ir.compile(pl.parse(SRC.replace("pl.DT", "pl.FP16")), output_dir=str(tmp_path), skip_ptoas=True)
    assert "tile.write into a fp16 tile" in ei.value.message.lower()
    assert "pl.cast" in (ei.value.hint or "")
    assert ei.value.span.line == 9
