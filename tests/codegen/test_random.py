"""``pl.tile.random`` / ``pl.random`` (upstream's TRANDOM) on ptoas 0.1.1, which has no ``pto.trandom``.

pypto lowers the op into integer tile ops (:mod:`pypto.passes._random`). The results are checked bit for
bit against a plain-Python model of the A5 instruction written from its documented schedule: Philox-4x32
per 64-lane vector, lane ``l`` at ``counter + l``, the lanes' counters advancing by ``cols / 4`` per row
and per 256-column block, the four words stored as four 64-column runs.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.errors import UnsupportedFeatureError, UserError

_MASK = 0xFFFFFFFF


def _philox(ctr: list[int], k0: int, k1: int, rounds: int) -> list[int]:
    for _ in range(rounds):
        a, b = ctr[0] * 0xD2511F53, ctr[2] * 0xCD9E8D57
        ctr = [(b >> 32) ^ ctr[1] ^ k0, b & _MASK, (a >> 32) ^ ctr[3] ^ k1, a & _MASK]
        k0, k1 = (k0 + 0x9E3779B9) & _MASK, (k1 + 0xBB67AE85) & _MASK
    return ctr


def reference(key: tuple[int, int], counter: tuple[int, ...], shape: tuple[int, int],
              valid: tuple[int, int] | None = None, rounds: int = 10) -> np.ndarray:
    """The instruction's loops, one lane at a time; elements outside ``valid`` stay 0."""
    rows, cols = shape
    vrows, vcols = valid or shape
    start = sum((w & _MASK) << (32 * i) for i, w in enumerate(counter))
    out = np.zeros(shape, np.uint32)
    advance = 0
    for r in range(vrows):
        for block in range(-(-vcols // 256)):
            for lane in range(64):
                c = (start + lane + advance) % (1 << 128)
                words = _philox([(c >> (32 * i)) & _MASK for i in range(4)], key[0] & _MASK, key[1] & _MASK, rounds)
                for w in range(4):
                    col = (4 * block + w) * 64 + lane
                    if col < vcols:
                        out[r, col] = words[w]
            advance += cols // 4
    return out


def test_reference_is_philox_4x32_10() -> None:
    """Random123's known answers for Philox-4x32-10 (counter and key all zeros, and the pi digits)."""
    assert _philox([0, 0, 0, 0], 0, 0, 10) == [0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8]
    assert _philox([0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344], 0xA4093822, 0x299F31D0, 10) == [
        0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1]


U, N = "pl.Tensor[[16, 128], pl.UINT32]", "pl.Tensor[[4, 256], pl.INT32]"
W, S = "pl.Tensor[[2, 200], pl.UINT32]", "pl.Tensor[[4, 512], pl.UINT32]"
SRC = f"""import pypto.language as pl

@pl.program
class Rng:
    @pl.function(type=pl.FunctionType.InCore)
    def k1(self, u: pl.Out[{U}]) -> {U}:
        a: pl.Tile[[16, 128], pl.UINT32] = pl.tile.random(0x55, 0x66, 0xFFFFFFF0, 0xFFFFFFFF, 0xFFFFFFFF, 9,
                                                          [16, 128], valid_shape=[10, 80])
        return pl.store(a, [0, 0], u)

    @pl.function(type=pl.FunctionType.InCore)
    def k2(self, i: pl.Out[{N}]) -> {N}:
        b: pl.Tensor[[4, 256], pl.INT32] = pl.random(0x1234, 0x5678, 1, 2, 3, 4, [4, 256], dtype=pl.INT32, rounds=7)
        return pl.assemble(i, b, [0, 0])

    @pl.function(type=pl.FunctionType.InCore)
    def k3(self, w: pl.Out[{W}]) -> {W}:
        c: pl.Tile[[2, 200], pl.UINT32] = pl.tile.random(7, 8, 0, 0, 0, 0, [2, 200])
        return pl.store(c, [0, 0], w)

    @pl.function(type=pl.FunctionType.InCore)
    def k4(self, seed: pl.Scalar[pl.INT32], s: pl.Out[{S}]) -> {S}:
        d: pl.Tile[[4, 512], pl.UINT32] = pl.tile.random(seed, 0x0DEF, 3, 0, 0, 0, [4, 512])
        return pl.store(d, [0, 0], s)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, seed: pl.Scalar[pl.INT32], u: pl.Out[{U}], i: pl.Out[{N}], w: pl.Out[{W}],
             s: pl.Out[{S}]) -> {U}:
        u = self.k1(u)
        i = self.k2(i)
        w = self.k3(w)
        s = self.k4(seed, s)
        return u
"""


@pytest.mark.sim
@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_random_matches_the_instruction_bit_for_bit(platform: str, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    compiled = ir.compile(pl.parse(SRC), platform=platform)
    text = "".join(p.read_text() for p in Path(compiled.output_dir).glob("ptoas/*.pto"))
    assert "trandom" not in text and "pto.tmul" in text
    u, i = np.zeros((16, 128), np.uint32), np.zeros((4, 256), np.int32)
    w, s = np.zeros((2, 200), np.uint32), np.zeros((4, 512), np.uint32)
    compiled(-0x0ABC, u, i, w, s)
    want = reference((0x55, 0x66), (0xFFFFFFF0, 0xFFFFFFFF, 0xFFFFFFFF, 9), (16, 128), (10, 80))
    np.testing.assert_array_equal(u[:10, :80], want[:10, :80])  # the counter carries into its top word
    np.testing.assert_array_equal(i, reference((0x1234, 0x5678), (1, 2, 3, 4), (4, 256), rounds=7).view(np.int32))
    np.testing.assert_array_equal(w, reference((7, 8), (0, 0, 0, 0), (2, 200)))
    np.testing.assert_array_equal(s, reference((-0x0ABC, 0x0DEF), (3, 0, 0, 0), (4, 512)))


def _kernel(call: str, dtype: str = "pl.UINT32", shape: str = "[4, 64]") -> str:
    t = f"pl.Tensor[{shape}, {dtype}]"
    return f"""import pypto.language as pl

@pl.program
class Bad:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, o: pl.Out[{t}]) -> {t}:
        a = {call}
        return pl.store(a, [0, 0], o)
"""


@pytest.mark.parametrize(("call", "what"), [
    ("pl.tile.random(1, 2, 3, 4, 5, 6, [4, 64], dtype=pl.FP32)", "dtype must be pl.UINT32 or pl.INT32"),
    ("pl.tile.random(1, 2, 3, 4, 5, 6, [4, 64], rounds=8)", "rounds must be 7 or 10"),
    ("pl.tile.random(1, 2, 3, 4, 5, 6, [4, 64], valid_shape=[5, 64])", "within the shape [4, 64]"),
    ("pl.tile.random(1, 2, 3, 4, 5, 6, [4, 64], valid_shape=[4])", "must be 2-D"),
    ("pl.tile.random(1.5, 2, 3, 4, 5, 6, [4, 64])", "'key0' must be an integer scalar"),
    ("pl.tile.random(1, 2, 3, 4, 5, 6, [256])", "the shape must be 2-D"),
])
def test_bad_random_calls_are_located_type_errors(call: str, what: str) -> None:
    with pytest.raises(UserError, match=re.escape(what)) as err:
        pl.parse(_kernel(call))
    assert err.value.span.line == 7


def test_columns_off_32_byte_rows_are_a_located_refusal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    program = pl.parse(_kernel("pl.tile.random(1, 2, 3, 4, 5, 6, [4, 12])", shape="[4, 12]"))
    with pytest.raises(UnsupportedFeatureError, match="multiple of 8") as err:
        ir.compile(program, platform="a2a3sim")
    assert err.value.span.line == 7


def test_a_tile_too_large_for_the_lowering_is_a_located_refusal(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    program = pl.parse(_kernel("pl.tile.random(1, 2, 3, 4, 5, 6, [64, 256])", shape="[64, 256]"))
    with pytest.raises(UnsupportedFeatureError, match=r"blocks of rows: .* counter0 \+ r0 \* 1 \* 64") as err:
        ir.compile(program, platform="a5sim")
    assert err.value.span.line == 7 and "ptoas 0.1.1" in str(err.value)
