"""tile/tensor fillpad_expand: a larger tile whose top-left is the source's valid region, the pad value elsewhere.

ptoas 0.1.1 has no tfillpad_expand (and its tfillpad keeps the shape), so the result is a pad-filled
destination tile with the padded source painted over it when stored.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.errors import UserError
from pypto.ir.options import VerificationLevel

SRC = """import pypto.language as pl

@pl.program
class Expand:
    @pl.function(type=pl.FunctionType.InCore)
    def rows(self, x: pl.Tensor[[24, 32], pl.FP32], o: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
        t: pl.Tile[[24, 32], pl.FP32] = pl.load(x, [0, 0], [24, 32])
        e: pl.Tile[[32, 32], pl.FP32] = pl.tile.fillpad_expand(t, [32, 32], pad_value=pl.PadValue.max)
        return pl.store(e, [0, 0], o)

    @pl.function(type=pl.FunctionType.InCore)
    def both(self, x: pl.Tensor[[16, 32], pl.FP32], o: pl.Out[pl.Tensor[[32, 64], pl.FP32]]) -> pl.Tensor[[32, 64], pl.FP32]:
        t: pl.Tile[[16, 32], pl.FP32] = pl.load(x, [0, 0], [16, 32], valid_shape=[10, 20])
        e: pl.Tile[[32, 64], pl.FP32] = pl.tile.fillpad_expand(t, [32, 64], pad_value=pl.PadValue.min)
        return pl.store(e, [0, 0], o)

    @pl.function(type=pl.FunctionType.InCore)
    def ints(self, q: pl.Tensor[[16, 16], pl.INT32], o: pl.Out[pl.Tensor[[16, 32], pl.INT32]]) -> pl.Tensor[[16, 32], pl.INT32]:
        t: pl.Tile[[16, 16], pl.INT32] = pl.load(q, [0, 0], [16, 16], valid_shape=[12, 9])
        e: pl.Tile[[16, 32], pl.INT32] = pl.tile.fillpad_expand(t, [16, 32], pad_value=pl.PadValue.max)
        return pl.store(e, [0, 0], o)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[24, 32], pl.FP32], y: pl.Tensor[[16, 32], pl.FP32], q: pl.Tensor[[16, 16], pl.INT32],
             z: pl.Tensor[[16, 32], pl.FP16], o1: pl.Out[pl.Tensor[[32, 32], pl.FP32]],
             o2: pl.Out[pl.Tensor[[32, 64], pl.FP32]], o3: pl.Out[pl.Tensor[[16, 32], pl.INT32]],
             o4: pl.Out[pl.Tensor[[32, 48], pl.FP16]]) -> pl.Tensor[[32, 32], pl.FP32]:
        o1 = self.rows(x, o1)
        o2 = self.both(y, o2)
        o3 = self.ints(q, o3)
        with pl.at(level=pl.Level.CORE_GROUP):
            o4[:] = pl.fillpad_expand(z, [32, 48], pad_value=0)
        return o1
"""


def _expand(src: np.ndarray, valid: tuple[int, int], shape: tuple[int, int], pad: float | int) -> np.ndarray:
    out = np.full(shape, pad, dtype=src.dtype)
    out[:valid[0], :valid[1]] = src[:valid[0], :valid[1]]
    return out


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_fillpad_expand_matches_numpy(platform, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    compiled = ir.compile(pl.parse(SRC), platform=platform, verification_level=VerificationLevel.ROUNDTRIP)
    text = "\n".join(p.read_text() for p in sorted(Path(compiled.output_dir).glob("ptoas/*.pto")))
    assert "pto.tfillpad_expand" not in text and "pto.texpands" in text and "pto.tfillpad " in text
    rng = np.random.default_rng(5)
    x = rng.standard_normal((24, 32)).astype(np.float32)
    y = rng.standard_normal((16, 32)).astype(np.float32)
    q = rng.integers(-1000, 1000, (16, 16)).astype(np.int32)
    z = rng.standard_normal((16, 32)).astype(np.float16)
    outs = [np.zeros((32, 32), np.float32), np.zeros((32, 64), np.float32), np.zeros((16, 32), np.int32),
            np.zeros((32, 48), np.float16)]
    compiled(x, y, q, z, *outs)
    want = [_expand(x, (24, 32), (32, 32), np.inf), _expand(y, (10, 20), (32, 64), -np.inf),
            _expand(q, (12, 9), (16, 32), np.iinfo(np.int32).max), _expand(z, (16, 32), (32, 48), 0)]
    for i, (got, exp) in enumerate(zip(outs, want, strict=True)):
        np.testing.assert_array_equal(got, exp, err_msg=f"output o{i + 1}")


def _kernel(body: str, out: str = "pl.Tensor[[32, 32], pl.FP32]") -> str:
    return f"""import pypto.language as pl

@pl.function(type=pl.FunctionType.InCore)
def k(x: pl.Tensor[[16, 32], pl.FP32], o: pl.Out[{out}]) -> {out}:
    t: pl.Tile[[16, 32], pl.FP32] = pl.load(x, [0, 0], [16, 32])
    {body}
"""


@pytest.mark.parametrize(("body", "message"), [
    ("e = pl.tile.fillpad_expand(t, [8, 32])\n    return pl.store(e, [0, 0], o)",
     "destination dim 8 on axis 0 is smaller than the source's 16"),
    ("e = pl.tile.fillpad_expand(t, [32])\n    return pl.store(e, [0, 0], o)", "must have the source's rank 2"),
    ("e = pl.tile.fillpad_expand(t, [32, 32], pad_value=7.0)\n    return pl.store(e, [0, 0], o)",
     "pad_value must be pl.PadValue.zero, max or min"),
])
def test_fillpad_expand_misuse_is_located(body, message):
    with pytest.raises(UserError, match=message) as ei:
        pl.parse(_kernel(body))
    assert ei.value.span is not None and ei.value.span.line == 6


OPERAND = """import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 32], pl.FP32], o: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            t = pl.load(x, [0, 0], [16, 32])
            e = pl.tile.fillpad_expand(t, [32, 32])
            o = pl.store(pl.add(e, e), [0, 0], o)
        return o
"""


def test_fillpad_expand_used_as_an_operand_is_a_located_error(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UserError, match="tile.fillpad_expand.*can only be stored") as ei:
        ir.compile(pl.parse(OPERAND), platform="a2a3sim")
    assert "store the expanded result directly" in (ei.value.hint or "")
