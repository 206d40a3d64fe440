"""tile.reinterpret_view: a Vec tile's bytes read as another dtype (pto.treshape), bit-exact on both sims."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.errors import UnsupportedFeatureError, UserError

SRC = """import pypto.language as pl

@pl.program
class View:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[8, 32], pl.FP32], o1: pl.Out[pl.Tensor[[8, 32], pl.INT32]],
          o2: pl.Out[pl.Tensor[[8, 64], pl.INT16]], o3: pl.Out[pl.Tensor[[16, 16], pl.INT32]]) -> pl.Tensor[[8, 32], pl.INT32]:
        t: pl.Tile[[8, 32], pl.FP32] = pl.load(x, [0, 0], [8, 32])
        a: pl.Tile[[8, 32], pl.INT32] = pl.reinterpret_view(t, pl.INT32)
        b: pl.Tile[[8, 64], pl.INT16] = pl.tile.reinterpret_view(t, pl.INT16)
        c: pl.Tile[[16, 16], pl.INT32] = pl.reinterpret_view(t, pl.INT32, shape=[16, 16])
        o2 = pl.store(b, [0, 0], o2)
        o3 = pl.store(c, [0, 0], o3)
        m: pl.Tile[[8, 32], pl.INT32] = pl.tile.full([8, 32], dtype=pl.INT32, value=0x7FFFFFFF)
        o1 = pl.store(pl.and_(a, m), [0, 0], o1)
        return o1

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[8, 32], pl.FP32], o1: pl.Out[pl.Tensor[[8, 32], pl.INT32]],
             o2: pl.Out[pl.Tensor[[8, 64], pl.INT16]], o3: pl.Out[pl.Tensor[[16, 16], pl.INT32]]) -> pl.Tensor[[8, 32], pl.INT32]:
        o1 = self.k(x, o1, o2, o3)
        return o1
"""


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_reinterpret_view_is_bit_exact(platform, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    compiled = ir.compile(pl.parse(SRC), platform=platform)
    x = np.random.default_rng(7).standard_normal((8, 32)).astype(np.float32)
    x[0, :4] = [np.inf, -np.inf, -0.0, np.nan]
    o1, o2, o3 = np.zeros((8, 32), np.int32), np.zeros((8, 64), np.int16), np.zeros((16, 16), np.int32)
    compiled(x, o1, o2, o3)
    np.testing.assert_array_equal(o1, x.view(np.int32) & 0x7FFFFFFF)  # |x| bits: the view feeds integer ops
    np.testing.assert_array_equal(o2, x.view(np.int16))
    np.testing.assert_array_equal(o3, x.view(np.int32).reshape(16, 16))


def _kernel(line: str) -> str:
    return f"""import pypto.language as pl

@pl.function(type=pl.FunctionType.InCore)
def k(x: pl.Tensor[[8, 15], pl.FP16], o: pl.Out[pl.Tensor[[8, 15], pl.FP16]]) -> pl.Tensor[[8, 15], pl.FP16]:
    t: pl.Tile[[8, 15], pl.FP16] = pl.load(x, [0, 0], [8, 15])
    v = {line}
    return pl.store(t, [0, 0], o)
"""


@pytest.mark.parametrize(("line", "message"), [
    ("pl.reinterpret_view(t, pl.FP16)", "already FP16"),
    ("pl.reinterpret_view(t, pl.INT32, shape=[8, 16])", "is not the source's 240 bytes"),
    ("pl.reinterpret_view(t, pl.FP32)", "15 FP16 elements are not a whole number of FP32 elements"),
])
def test_reinterpret_view_misuse_is_located(line, message):
    with pytest.raises(UserError, match=message) as ei:
        pl.parse(_kernel(line))
    assert ei.value.span is not None and ei.value.span.line == 6


def test_a_tensor_reinterpret_view_is_refused_when_compiled_naming_the_tile_form(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    src = """import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[8, 32], pl.FP32], o: pl.Out[pl.Tensor[[8, 32], pl.INT32]]) -> pl.Tensor[[8, 32], pl.INT32]:
        v = pl.tensor.reinterpret_view(x, pl.INT32)
        return o
"""
    program = pl.parse(src)  # defines: the construct is refused when the program is compiled
    with pytest.raises(UnsupportedFeatureError, match="pl.tensor.reinterpret_view is not supported .*ptoas 0.1.1") as ei:
        ir.compile(program, platform="a2a3sim")
    assert (ei.value.span.line, ei.value.span.col) == (7, 13)
    assert "pl.reinterpret_view on the tile" in ei.value.hint
