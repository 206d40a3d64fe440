"""addc / subc / addsc / subsc / prelu / xors: registry typing, ptoas 0.1.1 lowering and sim numerics."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from ptocheck import checker, verify

import pypto.language as pl
from pypto import ir
from pypto.errors import UserError
from pypto.ir.options import VerificationLevel

T = "pl.Tensor[[16, 64], pl.FP32]"
TI = "pl.Tensor[[16, 64], pl.INT32]"
SRC = f"""import pypto.language as pl

@pl.program
class Ew:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: {T}, y: {T}, z: {T}, q: {TI}, o1: pl.Out[{T}], o2: pl.Out[{T}], o3: pl.Out[{T}],
             o4: pl.Out[{T}], o5: pl.Out[{T}], o6: pl.Out[{TI}], o7: pl.Out[{TI}]) -> {T}:
        with pl.at(level=pl.Level.CORE_GROUP):
            tx = pl.load(x, [0, 0], [16, 64])
            ty = pl.load(y, [0, 0], [16, 64])
            tz = pl.load(z, [0, 0], [16, 64])
            tq = pl.load(q, [0, 0], [16, 64])
            o1 = pl.store(pl.addc(tx, ty, tz), [0, 0], o1)
            o2 = pl.store(pl.tile.subc(tx, ty, tz), [0, 0], o2)
            o3 = pl.store(pl.addsc(tx, 1.5, ty), [0, 0], o3)
            o4 = pl.store(pl.subsc(tx, 1.5, tz), [0, 0], o4)
            o5 = pl.store(pl.prelu(tx, ty, tz), [0, 0], o5)
            o6 = pl.store(pl.xors(tq, 90), [0, 0], o6)
        with pl.at(level=pl.Level.CORE_GROUP):
            o7[:] = pl.xors(q, 7)
        return o1
"""


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_extra_elementwise_ops_match_numpy(platform, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    compiled = ir.compile(pl.parse(SRC), platform=platform, verification_level=VerificationLevel.ROUNDTRIP)
    ptos = sorted(Path(compiled.output_dir).glob("ptoas/*.pto"))
    if checker()[0] is not None:
        verify(*ptos)
    text = ptos[0].read_text()
    assert all(f"pto.{op} " in text for op in ("taddc", "taddsc", "tprelu", "txors"))
    rng = np.random.default_rng(3)
    x, y, z = (rng.standard_normal((16, 64)).astype(np.float32) for _ in range(3))
    q = rng.integers(-1000, 1000, (16, 64)).astype(np.int32)
    outs = [np.zeros((16, 64), np.float32) for _ in range(5)] + [np.zeros((16, 64), np.int32) for _ in range(2)]
    compiled(x, y, z, q, *outs)
    want = [x + y + z, x - y - z, x + 1.5 + y, x - 1.5 - z, np.where(x > 0, x, x * y), q ^ 90, q ^ 7]
    for i, (got, exp) in enumerate(zip(outs, want, strict=True)):
        np.testing.assert_allclose(got, exp, rtol=1e-5, atol=1e-5, err_msg=f"output o{i + 1}")


@pytest.mark.parametrize(("expr", "message"), [
    ("pl.addc(tx, tx, pl.load(x, [0, 0], [16, 32]))", "tile.addc"),
    ("pl.xors(tx, 3)", "tile.xors: needs an integer operand, got FP32"),
    ("pl.addsc(tx, tx, tx)", "tile.addsc: operand 'rhs' must be a scalar"),
])
def test_extra_elementwise_misuse(expr, message):
    src = SRC.replace("pl.addc(tx, ty, tz)", expr)
    with pytest.raises(UserError, match=message.replace("(", "[(]").replace(")", "[)]")):
        pl.parse(src)


SEQ = """import pypto.language as pl

@pl.program
class Seq:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 64], pl.FP32], s: pl.Scalar[pl.INT32],
             o1: pl.Out[pl.Tensor[[1, 32], pl.INT32]], o2: pl.Out[pl.Tensor[[1, 16], pl.INT32]],
             o3: pl.Out[pl.Tensor[[8, 16], pl.FP32]], o4: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[1, 32], pl.INT32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            o1 = pl.store(pl.tile.ci(s, [1, 32]), [0, 0], o1)
            o2 = pl.store(pl.tile.arange(100, [1, 16], descending=True), [0, 0], o2)
            t = pl.load(x, [0, 0], [16, 64])
            o3 = pl.store(pl.tile.extract(t, 4, 16, [8, 16], target_memory=pl.Mem.Vec), [0, 0], o3)
            p = pl.load(x, [0, 0], [16, 64], [16, 40])
            o4 = pl.store(pl.tile.fillpad_inplace(p, pad_value=pl.PadValue.zero), [0, 0], o4)
        return o1
"""


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_ci_extract_and_fillpad_inplace_match_numpy(platform, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    compiled = ir.compile(pl.parse(SEQ), platform=platform, verification_level=VerificationLevel.ROUNDTRIP)
    ptos = sorted(Path(compiled.output_dir).glob("ptoas/*.pto"))
    if checker()[0] is not None:
        verify(*ptos)
    assert all(f"pto.{op} " in ptos[0].read_text() for op in ("tci", "textract", "tfillpad"))
    x = np.random.default_rng(5).standard_normal((16, 64)).astype(np.float32)
    o1, o2 = np.zeros((1, 32), np.int32), np.zeros((1, 16), np.int32)
    o3, o4 = np.zeros((8, 16), np.float32), np.full((16, 64), 7, np.float32)
    compiled(x, np.int32(5), o1, o2, o3, o4)
    np.testing.assert_array_equal(o1[0], 5 + np.arange(32))
    np.testing.assert_array_equal(o2[0], 100 - np.arange(16))
    np.testing.assert_array_equal(o3, x[4:12, 16:32])
    np.testing.assert_array_equal(o4, np.where(np.arange(64) < 40, x, 0))


@pytest.mark.parametrize(("expr", "message"), [
    ("pl.tile.ci(s, [2, 32])", "the sequence fills one row; the shape must be [1, N]"),
    ("pl.tile.ci(s, [1, 32], dtype=pl.FP32)", "dtype must be pl.INT16, pl.INT32, pl.UINT16 or pl.UINT32"),
    ("pl.tile.extract(pl.load(x, [0, 0], [16, 64]), 12, 0, [8, 16], target_memory=pl.Mem.Vec)",
     "window [12, 20) on axis 0 is outside the source's 16"),
])
def test_ci_and_extract_misuse(expr, message):
    with pytest.raises(UserError) as ei:
        pl.parse(SEQ.replace("pl.tile.ci(s, [1, 32])", expr))
    assert message in ei.value.message


PART = """import pypto.language as pl

@pl.program
class Part:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 64], pl.FP32], y: pl.Tensor[[16, 64], pl.FP32],
             o1: pl.Out[pl.Tensor[[16, 64], pl.FP32]], o2: pl.Out[pl.Tensor[[16, 64], pl.FP32]],
             o3: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            a = pl.load(x, [0, 0], [16, 64], [16, 40])
            b = pl.load(y, [0, 0], [16, 64])
            o1 = pl.store(pl.part_add(a, b), [0, 0], o1)
            o2 = pl.store(pl.tile.part_max(b, a), [0, 0], o2)
            o3 = pl.store(pl.part_min(a, b), [0, 0], o3)
        return o1
"""


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_part_ops_cover_the_union_of_valid_regions(platform, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    compiled = ir.compile(pl.parse(PART), platform=platform, verification_level=VerificationLevel.ROUNDTRIP)
    ptos = sorted(Path(compiled.output_dir).glob("ptoas/*.pto"))
    if checker()[0] is not None:
        verify(*ptos)
    rng = np.random.default_rng(9)
    x, y = (rng.standard_normal((16, 64)).astype(np.float32) for _ in range(2))
    outs = [np.zeros((16, 64), np.float32) for _ in range(3)]
    compiled(x, y, *outs)
    left = np.arange(64) < 40  # x is valid in its first 40 columns only; y everywhere
    for got, fn in zip(outs, (np.add, np.maximum, np.minimum), strict=True):
        np.testing.assert_allclose(got, np.where(left, fn(x, y), y), rtol=1e-6, atol=1e-6)


INT_SCALARS = """import pypto.language as pl

@pl.program
class IntScalars:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, q: pl.Tensor[[16, 64], pl.INT32], b: pl.Tensor[[16, 64], pl.INT8],
             o1: pl.Out[pl.Tensor[[16, 64], pl.INT32]], o2: pl.Out[pl.Tensor[[16, 64], pl.INT32]],
             o3: pl.Out[pl.Tensor[[16, 64], pl.INT32]], o4: pl.Out[pl.Tensor[[16, 64], pl.INT32]],
             o5: pl.Out[pl.Tensor[[16, 64], pl.INT8]], rr: pl.Tensor[[16, 1], pl.INT32],
             o6: pl.Out[pl.Tensor[[16, 64], pl.INT32]], o7: pl.Out[pl.Tensor[[16, 64], pl.INT32]]) -> pl.Tensor[[16, 64], pl.INT32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            t = pl.load(q, [0, 0], [16, 64])
            tb = pl.load(b, [0, 0], [16, 64])
            o1 = pl.store(pl.tile.muls(t, 3), [0, 0], o1)
            o2 = pl.store(pl.tile.subs(t, 7), [0, 0], o2)
            o3 = pl.store(pl.tile.minimums(t, 5), [0, 0], o3)
            o4 = pl.store(pl.tile.rems(t, 4), [0, 0], o4)
            o5 = pl.store(pl.tile.muls(tb, 3), [0, 0], o5)
            r = pl.load(rr, [0, 0], [16, 1])
            o6 = pl.store(pl.tile.row_expand_sub(t, r), [0, 0], o6)
            o7 = pl.store(pl.tile.row_expand_mul(t, r), [0, 0], o7)
        return o1
"""


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_integer_scalar_forms_broadcast_the_scalar(platform, tmp_path, monkeypatch):
    # ptoas 0.1.1 rejects the scalar of tmuls/tsubs/tmins/trems on integer tiles: texpands + the binary op;
    # it takes trowexpandsub/mul on f16/f32 only: trowexpand + tsub/tmul
    monkeypatch.chdir(tmp_path)
    compiled = ir.compile(pl.parse(INT_SCALARS), platform=platform)
    ptos = sorted(Path(compiled.output_dir).glob("ptoas/*.pto"))
    if checker()[0] is not None:
        verify(*ptos)
    rng = np.random.default_rng(11)
    q = rng.integers(0, 1000, (16, 64)).astype(np.int32)
    b = rng.integers(-100, 100, (16, 64)).astype(np.int8)
    r = rng.integers(-50, 50, (16, 1)).astype(np.int32)
    outs = [np.zeros((16, 64), np.int32) for _ in range(4)] + [np.zeros((16, 64), np.int8)]
    o6, o7 = np.zeros((16, 64), np.int32), np.zeros((16, 64), np.int32)
    compiled(q, b, *outs, r, o6, o7)
    outs += [o6, o7]
    want = [q * 3, q - 7, np.minimum(q, 5), q % 4, (b.astype(np.int32) * 3).astype(np.int8), q - r, q * r]
    for i, (got, exp) in enumerate(zip(outs, want, strict=True)):
        np.testing.assert_array_equal(got, exp, err_msg=f"output o{i + 1}")


PARTIAL = """import pypto.language as pl

@pl.program
class Partial:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[16, 64], pl.FP32], r: pl.Tensor[[16, 1], pl.FP32],
          o: pl.InOut[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        t: pl.Tile[[16, 64], pl.FP32] = pl.load(a, [0, 0], [16, 64], valid_shape=[16, 40])
        rr: pl.Tile[[16, 1], pl.FP32] = pl.load(r, [0, 0], [16, 1])
        return pl.store(pl.tile.row_expand_add(pl.tile.maximums(t, 0.5), rr), [0, 0], o)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 64], pl.FP32], r: pl.Tensor[[16, 1], pl.FP32],
             o: pl.InOut[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        return self.k(a, r, o)
"""


def test_scratch_tiles_of_a_partly_valid_operand_get_valid_operands(tmp_path, monkeypatch):
    # the broadcast scratch of maximums / row_expand_add was a hoisted alloc_tile without its valid
    # extents ('valid_col operand is required because result type v_col is ?')
    monkeypatch.chdir(tmp_path)
    compiled = ir.compile(pl.parse(PARTIAL), platform="a2a3sim")
    a = np.random.default_rng(8).standard_normal((16, 64)).astype(np.float32)
    r = np.random.default_rng(9).standard_normal((16, 1)).astype(np.float32)
    o = np.zeros((16, 64), np.float32)
    compiled(a, r, o)
    np.testing.assert_allclose(o[:, :40], np.maximum(a[:, :40], 0.5) + r, rtol=1e-6, atol=1e-6)
    assert not o[:, 40:].any()
