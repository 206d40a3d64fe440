"""``tile.row_expand_add`` of a row-major packed ``[M, 32 B]`` row vector (its lanes repeat across the row):
typing, the ptoas 0.1.1 lowering (tgather at ``r * L + c % L``, then tadd) and sim numerics against numpy."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from ptocheck import checker, verify

import pypto.language as pl
from pypto import ir
from pypto.errors import UserError

NP = {"FP32": np.float32, "FP16": np.float16, "INT32": np.int32}


def _program(m: int, n: int, dtype: str, lanes: int, valid: tuple[int, int] | None = None) -> str:
    vr, vc = valid or (m, n)
    return f"""import pypto.language as pl

@pl.program
class Packed:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, src: pl.Tensor[[{m}, {n}], pl.{dtype}], row: pl.Tensor[[{m}, {lanes}], pl.{dtype}],
               out: pl.InOut[pl.Tensor[[{m}, {n}], pl.{dtype}]]) -> pl.Tensor[[{m}, {n}], pl.{dtype}]:
        s = pl.load(src, [0, 0], [{m}, {n}], valid_shape=[{vr}, {vc}])
        v = pl.load(row, [0, 0], [{m}, {lanes}], valid_shape=[{vr}, {lanes}])
        return pl.store(pl.tile.row_expand_add(s, v), [0, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, src: pl.Tensor[[{m}, {n}], pl.{dtype}], row: pl.Tensor[[{m}, {lanes}], pl.{dtype}],
             out: pl.InOut[pl.Tensor[[{m}, {n}], pl.{dtype}]]) -> pl.Tensor[[{m}, {n}], pl.{dtype}]:
        return self.kernel(src, row, out)
"""


CASES = [
    ("a2a3sim", 32, 64, "FP32", None),
    ("a2a3sim", 16, 128, "FP16", None),
    ("a2a3sim", 32, 64, "INT32", None),
    ("a2a3sim", 32, 64, "FP32", (20, 47)),  # row and column tails: only the valid region is written
    ("a2a3sim", 20, 48, "FP32", None),      # rows not a multiple of 8, six lane blocks per row
    ("a5sim", 16, 128, "FP16", (9, 100)),
]


@pytest.mark.parametrize(("platform", "m", "n", "dtype", "valid"), CASES)
def test_packed_lanes_repeat_across_the_row(platform, m, n, dtype, valid, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    np_dt = NP[dtype]
    lanes = 32 // np.dtype(np_dt).itemsize
    monkeypatch.chdir(tmp_path)
    compiled = ir.compile(pl.parse(_program(m, n, dtype, lanes, valid)), platform=platform)
    ptos = sorted(Path(compiled.output_dir).glob("ptoas/*.pto"))
    if checker()[0] is not None:
        verify(*ptos)
    text = "\n".join(p.read_text() for p in ptos)
    assert "pto.tgather " in text and "pto.tand " in text and "pto.trowexpandadd" not in text
    rng = np.random.default_rng(11)
    src = rng.integers(-40, 40, (m, n)).astype(np_dt) / (4 if np_dt is not np.int32 else 1)
    row = rng.integers(-9, 9, (m, lanes)).astype(np_dt)  # distinct lanes: a lane mix-up shows
    out = np.full((m, n), 77, np_dt)
    compiled(src.astype(np_dt), row, out)
    vr, vc = valid or (m, n)
    want = np.full((m, n), 77, np_dt)
    want[:vr, :vc] = (src + np.tile(row, (1, n // lanes)))[:vr, :vc]
    np.testing.assert_array_equal(out, want)  # exact: one rounding of a sum of two representable values


def test_the_packed_carrier_is_for_row_expand_add_only_and_exactly_32_bytes() -> None:
    def parse(op: str, lanes: int) -> None:
        pl.parse(_program(32, 64, "FP32", lanes).replace("pl.tile.row_expand_add", op))

    with pytest.raises(UserError, match=r"shape mismatch \[32, 1\] vs \[32, 4\]"):
        parse("pl.tile.row_expand_add", 4)
    with pytest.raises(UserError, match=r"shape mismatch \[32, 1\] vs \[32, 8\]"):
        parse("pl.tile.row_expand_sub", 8)
