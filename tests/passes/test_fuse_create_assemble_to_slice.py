"""FuseCreateAssembleToSlice: a created tensor that kernels fill and the orchestration assembles once into a
window of another tensor becomes a view of that window (the orchestration has no copy)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.errors import UserError

SRC = """import pypto.language as pl

@pl.program
class Rows:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[4, 256], pl.FP32], out: pl.Out[pl.Tensor[[4, 256], pl.FP32]]) -> pl.Tensor[[4, 256], pl.FP32]:
        for b in pl.parallel(4):
            row = pl.create_tensor([1, 256], dtype=pl.FP32)
            with pl.at(level=pl.Level.CORE_GROUP):
                row = pl.assemble(row, pl.exp(x[b : b + 1, 0:128]), [0, 0])
            with pl.at(level=pl.Level.CORE_GROUP):
                row = pl.assemble(row, pl.add(x[b : b + 1, 128:256], 1.0), [0, 128])
            out = pl.assemble(out, row, [b, 0])
        return out
"""


def _fused(src: str, tmp_path: Path) -> str:
    ir.compile(pl.parse(src), output_dir=str(tmp_path), skip_ptoas=True)
    (dump,) = (tmp_path / "passes_dump").glob("*_after_FuseCreateAssembleToSlice.py")
    return dump.read_text()


def test_the_create_becomes_a_view_of_the_window(tmp_path: Path) -> None:
    text = _fused(SRC, tmp_path)
    assert "pl.tensor.create(" not in text and "pl.tensor.assemble(" not in text
    assert "pl.tensor.slice(out__" in text and "[1, 256], [b__idx_v0, 0])" in text


GAPPY = """import pypto.language as pl

@pl.program
class Half:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[4, 256], pl.FP32], out: pl.Out[pl.Tensor[[4, 256], pl.FP32]]) -> pl.Tensor[[4, 256], pl.FP32]:
        for b in pl.parallel(2):
            blk = pl.create_tensor([2, 128], dtype=pl.FP32)
            with pl.at(level=pl.Level.CORE_GROUP):
                blk = pl.assemble(blk, pl.exp(x[b * 2 : b * 2 + 2, 0:128]), [0, 0])
            out = pl.assemble(out, blk, [b * 2, 128])
        return out
"""


@pytest.mark.parametrize(("src", "why"), [
    (SRC.replace("out = pl.assemble(out, row, [b, 0])",
                 "out = pl.assemble(out, row, [b, 0])\n            out = pl.assemble(out, row, [3 - b, 0])"),
     "assembled twice"),
    (GAPPY, "a window with gaps between its rows"),
])
def test_not_fused_stays_a_located_error(tmp_path: Path, src: str, why: str) -> None:
    with pytest.raises(Exception, match="Misplaced tensor op 'tensor.assemble'") as ei:
        ir.compile(pl.parse(src), output_dir=str(tmp_path), skip_ptoas=True)
    err = getattr(ei.value, "user_error", None) or ei.value
    assert isinstance(err, UserError) and err.span.line in (11, 13), why


@pytest.mark.sim
@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_rows_match_numpy(platform: str, tmp_path: Path) -> None:
    x = np.random.default_rng(11).standard_normal((4, 256)).astype(np.float32)
    out = np.zeros((4, 256), np.float32)
    ir.compile(pl.parse(SRC), output_dir=str(tmp_path), platform=platform)(x, out)
    want = np.concatenate([np.exp(x[:, :128]), x[:, 128:] + 1], axis=1)
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)
