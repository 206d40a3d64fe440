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


COPY = """import pypto.language as pl

@pl.program
class Copy:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[1, 256], pl.FP32], out: pl.Out[pl.Tensor[[1, 64], pl.FP32]],
             ids: pl.Out[pl.Tensor[[1, 64], pl.INT32]]):
        with pl.at(level=pl.Level.CORE_GROUP):
            vals = pl.create_tensor([1, 64], dtype=pl.FP32)
            vals[:, :] = pl.full([1, 64], dtype=pl.FP32, value=-1.0)
            idv = pl.create_tensor([1, 64], dtype=pl.INT32)
            idv[:, :] = pl.full([1, 64], dtype=pl.INT32, value=7)
            for g in pl.range(4):
                t = pl.neg(x[:, g * 64 : g * 64 + 64])
                ti = pl.cast(t, target_type=pl.INT32)
                off = g * 8
                for k in pl.range(8):
                    pl.write(vals, [0, off + k], pl.read(t, [0, k]))
                    pl.write(idv, [0, off + k], pl.read(ti, [0, k]))
            out[:, :] = vals
            ids[:, :] = idv
        return out, ids
"""


def _row_allocs(text: str, dtype: str) -> int:
    return text.count(f"pto.alloc_tile : !pto.tile_buf<loc=ub, dtype={dtype}, rows=1, cols=64,")


@pytest.mark.sim
@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_copied_elements_share_three_i32_scratch_rows(platform: str, tmp_path: Path) -> None:
    """Element copies from computed tiles in a nested loop, at a run-time column: bit-exact, and the writes
    of both dtypes take three row-sized i32 scratch tiles plus the FP32 row's i32 view (ptoas 0.1.1 gives
    every alloc_tile bytes of its own), no f32 value row and no view of the ramp."""
    compiled = ir.compile(pl.parse(COPY), output_dir=str(tmp_path), platform=platform)
    pto = next(Path(compiled.output_dir).rglob("*.pto"))
    text = pto.read_text()
    assert _row_allocs(text, "f32") == 2  # vals, t
    assert _row_allocs(text, "i32") == 2 + 4  # idv, ti; ramp, 1/index, value bits, the view of vals
    x = np.random.default_rng(5).standard_normal((1, 256)).astype(np.float32) * 50
    x[0, 65], x[0, 130] = np.nan, 0.0  # -NaN and -0.0 after pl.neg: copied bit for bit
    out = np.zeros((1, 64), np.float32)
    ids = np.zeros((1, 64), np.int32)
    compiled(x, out, ids)
    want = np.full((1, 64), -1.0, np.float32)
    want_ids = np.full((1, 64), 7, np.int32)
    for g in range(4):
        t = -x[0, g * 64 : g * 64 + 8]
        want[0, g * 8 : g * 8 + 8] = t
        want_ids[0, g * 8 : g * 8 + 8] = np.rint(np.nan_to_num(t)).astype(np.int32)
    np.testing.assert_array_equal(out.view(np.int32), want.view(np.int32))
    finite = ~np.isnan(want)  # a NaN's conversion to INT32 is the hardware's
    np.testing.assert_array_equal(ids[finite], want_ids[finite])
