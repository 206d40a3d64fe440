"""UINT32 data on ptoas 0.1.1, whose ui32 tiles are int32_t in its C++: min/max, their reductions and the
casts between UINT32 and FP32 are rewritten to read the data unsigned, every other op whose result depends
on the sign is a located refusal (pypto.codegen.pto_uint32, pypto.codegen.pto_unsigned)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from unsigned_kernel import compile_checked, one_kernel

import pypto.language as pl
from pypto import ir
from pypto.errors import UnsupportedFeatureError

U, F = "pl.Tensor[[16, 64], pl.UINT32]", "pl.Tensor[[16, 64], pl.FP32]"
UR, UC = "pl.Tensor[[16, 1], pl.UINT32]", "pl.Tensor[[1, 64], pl.UINT32]"
OUTS = (f"mx: pl.Out[{U}], mn: pl.Out[{U}], ms: pl.Out[{U}], ns: pl.Out[{U}], rmax: pl.Out[{UR}], "
        f"rmin: pl.Out[{UR}], cmax: pl.Out[{UC}], cmin: pl.Out[{UC}], rex: pl.Out[{U}], cex: pl.Out[{U}], "
        f"tf: pl.Out[{F}], fu: pl.Out[{U}]")
NAMES = "mx, mn, ms, ns, rmax, rmin, cmax, cmin, rex, cex, tf, fu"
SRC = f"""import pypto.language as pl

@pl.program
class U32:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: {U}, y: {U}, f: {F}, {OUTS}) -> {U}:
        t = pl.load(x, [0, 0], [16, 64])
        u = pl.load(y, [0, 0], [16, 64])
        mx = pl.store(pl.maximum(t, u), [0, 0], mx)
        mn = pl.store(pl.minimum(t, u), [0, 0], mn)
        ms = pl.store(pl.tile.maximums(t, 3000000000), [0, 0], ms)
        ns = pl.store(pl.tile.minimums(t, 2147483649), [0, 0], ns)
        rmax = pl.store(pl.tile.row_max(t), [0, 0], rmax)
        rmin = pl.store(pl.tile.row_min(t), [0, 0], rmin)
        cmax = pl.store(pl.tile.col_max(t), [0, 0], cmax)
        cmin = pl.store(pl.tile.col_min(t), [0, 0], cmin)
        rex = pl.store(pl.tile.row_expand_max(t, pl.tile.row_min(u)), [0, 0], rex)
        cex = pl.store(pl.tile.col_expand_min(t, pl.tile.col_max(u)), [0, 0], cex)
        tf = pl.store(pl.cast(t, pl.FP32), [0, 0], tf)
        fu = pl.store(pl.cast(pl.load(f, [0, 0], [16, 64]), pl.UINT32), [0, 0], fu)
        return mx

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: {U}, y: {U}, f: {F}, {OUTS}) -> {U}:
        mx = self.k(x, y, f, {NAMES})
        return mx
"""
# both sides of 2**31, and for the FP32 conversion values that round up, down and to even (ulp 256 above 2**31)
EDGES = [0, 1, 2**31 - 1, 2**31, 2**31 + 1, 2**32 - 1, 2**32 - 129, 2**32 - 128, 2**32 - 127, 2**31 + 128,
         2**31 + 384, 2**31 + 129, 2**24 + 1, 2**31 - 65, 0x80008000, 0xFFFF0000]


def _inputs() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(7)
    x = rng.integers(0, 2**32, (16, 64), dtype=np.uint32)
    y = rng.integers(0, 2**32, (16, 64), dtype=np.uint32)
    x[0, :len(EDGES)] = EDGES
    y[0, :len(EDGES)] = EDGES[::-1]
    x[1], y[2] = 2**31 - 1, 2**31  # a row whose extremes sit next to the sign bit
    f = rng.integers(0, 2**32 - 256, (16, 64), dtype=np.uint64).astype(np.float32)
    f[f >= 2**32] = 2**32 - 256  # the largest FP32 below 2**32
    f[0, :8] = [0, 1, 2**31 - 128, 2**31, 2**31 + 256, 2**32 - 256, 3e9, 65535]
    return x, y, f


@pytest.mark.sim
@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_uint32_order_and_fp32_casts_match_numpy(platform: str, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    compiled, _ = compile_checked(SRC, platform)
    x, y, f = _inputs()
    out = {n: np.zeros(s, t) for n, s, t in (
        ("mx", (16, 64), np.uint32), ("mn", (16, 64), np.uint32), ("ms", (16, 64), np.uint32),
        ("ns", (16, 64), np.uint32), ("rmax", (16, 1), np.uint32), ("rmin", (16, 1), np.uint32),
        ("cmax", (1, 64), np.uint32), ("cmin", (1, 64), np.uint32), ("rex", (16, 64), np.uint32),
        ("cex", (16, 64), np.uint32), ("tf", (16, 64), np.float32), ("fu", (16, 64), np.uint32))}
    compiled(x, y, f, *out.values())
    want = {"mx": np.maximum(x, y), "mn": np.minimum(x, y), "ms": np.maximum(x, np.uint32(3000000000)),
            "ns": np.minimum(x, np.uint32(2147483649)), "rmax": x.max(1, keepdims=True),
            "rmin": x.min(1, keepdims=True), "cmax": x.max(0, keepdims=True), "cmin": x.min(0, keepdims=True),
            "rex": np.maximum(x, y.min(1, keepdims=True)), "cex": np.minimum(x, y.max(0, keepdims=True)),
            "tf": x.astype(np.float32), "fu": f.astype(np.uint32)}
    for name, w in want.items():
        np.testing.assert_array_equal(out[name], w, err_msg=name)


SCALARS = f"""import pypto.language as pl

@pl.program
class S32:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: {U}, a: pl.Out[{U}], s: pl.Out[{U}], m: pl.Out[{U}], r: pl.Out[{U}], e: pl.Out[{U}]) -> {U}:
        t = pl.load(x, [0, 0], [16, 64])
        a = pl.store(pl.tile.adds(t, 3000000000), [0, 0], a)
        s = pl.store(pl.tile.subs(t, 5), [0, 0], s)
        m = pl.store(pl.tile.muls(t, 3), [0, 0], m)
        r = pl.store(pl.tile.xors(t, 4042322160), [0, 0], r)
        e = pl.store(pl.add(t, pl.tile.full([16, 64], 2147483648, dtype=pl.UINT32)), [0, 0], e)
        return a

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: {U}, a: pl.Out[{U}], s: pl.Out[{U}], m: pl.Out[{U}], r: pl.Out[{U}], e: pl.Out[{U}]) -> {U}:
        a = self.k(x, a, s, m, r, e)
        return a
"""


@pytest.mark.sim
def test_uint32_scalars_of_2_31_and_above_wrap_like_numpy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A scalar for a ui32 tile is an i32 constant (arith takes no ui32) broadcast into an i32 tile, its bits
    copied over: adds/subs/muls/xors/full with scalars both sides of 2**31."""
    monkeypatch.chdir(tmp_path)
    compiled = ir.compile(pl.parse(SCALARS), platform="a2a3sim")
    text = next(Path(compiled.output_dir).glob("ptoas/k*.pto")).read_text()
    assert "arith.constant -1294967296 : i32" in text and ": ui32" not in text.replace("xui32", "")
    x = _inputs()[0]
    outs = [np.zeros((16, 64), np.uint32) for _ in range(5)]
    compiled(x, *outs)
    for got, want in zip(outs, (x + np.uint32(3000000000), x - np.uint32(5), x * np.uint32(3),
                                x ^ np.uint32(4042322160), x + np.uint32(2**31)), strict=True):
        np.testing.assert_array_equal(got, want)

def _kernel(body: str, out: str = U) -> str:
    return one_kernel(U, body, out)


@pytest.mark.parametrize(("body", "out", "what", "hint"), [
    ("o = pl.store(pl.div(t, t), [0, 0], o)", U, "tile.div on UINT32 data", "pl.cast(x, pl.INT32)"),
    ("o = pl.store(pl.rem(t, t), [0, 0], o)", U, "tile.rem on UINT32 data", "pl.cast(x, pl.INT32)"),
    ("o = pl.store(pl.shr(t, t), [0, 0], o)", U, "tile.shr on UINT32 data", "pl.cast(x, pl.INT32)"),
    ("o = pl.store(pl.cast(t, pl.FP16), [0, 0], o)", "pl.Tensor[[16, 64], pl.FP16]",
     "tile.cast(UINT32 -> FP16) on UINT32 data", "pl.cast(pl.cast(x, pl.FP32), pl.FP16)"),
])
def test_sign_dependent_ops_on_uint32_are_located_refusals(body: str, out: str, what: str, hint: str,
                                                           tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UnsupportedFeatureError) as ei:
        ir.compile(pl.parse(_kernel(body, out)), platform="a2a3sim")
    msg = str(ei.value)
    assert what in msg and "ptoas 0.1.1" in msg and "ptoas v0.57" in msg and "int32_t" in msg
    assert "2**31" in msg and hint in (ei.value.hint or "")
    assert ei.value.span is not None and ei.value.span.line == 8 and ei.value.span.col > 0


@pytest.mark.sim
def test_uint32_maximum_flips_the_top_bit_on_i32_copies(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    compiled = ir.compile(pl.parse(_kernel("o = pl.store(pl.maximum(t, t), [0, 0], o)")), platform="a2a3sim")
    text = next(Path(compiled.output_dir).glob("ptoas/k*.pto")).read_text()
    ops = [ln.split("pto.")[1].split(" ")[0] for ln in text.splitlines() if ln.strip().startswith("pto.t")]
    assert ops == ["tload", "tcvt", "txors", "tcvt", "txors", "tmax", "txors", "tcvt", "tstore"]
    assert "arith.constant -2147483648 : i32" in text
    tmax = next(ln for ln in text.splitlines() if "pto.tmax" in ln)
    assert "dtype=i32" in tmax and "dtype=ui32" not in tmax  # compared as signed INT32


@pytest.mark.sim
def test_uint16_widens_to_uint32_through_an_i32_tile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    u16 = "pl.Tensor[[16, 64], pl.UINT16]"
    src = _kernel("o = pl.store(pl.cast(t, pl.UINT32), [0, 0], o)").replace(f"x: {U}", f"x: {u16}")
    compiled = ir.compile(pl.parse(src), platform="a2a3sim")
    x = np.arange(16 * 64, dtype=np.uint16).reshape(16, 64) * np.uint16(64)
    x[0, :3] = [0x7FFF, 0x8000, 0xFFFF]
    o = np.zeros((16, 64), np.uint32)
    compiled(x, o)
    np.testing.assert_array_equal(o, x.astype(np.uint32))  # zero-extended
