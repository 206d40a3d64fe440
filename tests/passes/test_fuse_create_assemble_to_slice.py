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


LOWER_RANK = """import pypto.language as pl

@pl.program
class Stack:
    @pl.function(type=pl.FunctionType.InCore)
    def fill(self, x: pl.Tensor[[4, 16], pl.FP32], dst: pl.Out[pl.Tensor[[4, 16], pl.FP32]]) -> pl.Tensor[[4, 16], pl.FP32]:
        t = pl.load(x, [0, 0], [4, 16])
        dst = pl.store(pl.mul(t, 2.0), [0, 0], dst)
        return dst

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[4, 16], pl.FP32], out: pl.Out[pl.Tensor[[3, 4, 16], pl.FP32]]) -> pl.Tensor[[3, 4, 16], pl.FP32]:
        for b in pl.range(3):
            part = pl.create_tensor([4, 16], dtype=pl.FP32)
            part = self.fill(x, part)
            out = pl.assemble(out, part, [b, 0, 0])
        return out
"""


def test_a_lower_rank_create_is_a_reshaped_window(tmp_path: Path) -> None:
    text = _fused(LOWER_RANK, tmp_path)
    assert "pl.tensor.create(" not in text and "pl.tensor.assemble(" not in text
    assert "[1, 4, 16], [b__idx_v0, 0, 0])" in text
    assert "pl.tensor.reshape(" in text and "[4, 16])" in text


def test_a_lower_rank_window_with_gaps_stays_a_located_error(tmp_path: Path) -> None:
    src = LOWER_RANK.replace("[[4, 16], pl.FP32]]) -> pl.Tensor[[4, 16]", "[[4, 8], pl.FP32]]) -> pl.Tensor[[4, 8]")
    src = src.replace("pl.load(x, [0, 0], [4, 16])", "pl.load(x, [0, 0], [4, 8])")
    src = src.replace("pl.create_tensor([4, 16]", "pl.create_tensor([4, 8]")
    with pytest.raises(Exception, match="Misplaced tensor op 'tensor.assemble'") as ei:
        ir.compile(pl.parse(src), output_dir=str(tmp_path), skip_ptoas=True)
    err = getattr(ei.value, "user_error", None) or ei.value
    assert isinstance(err, UserError) and err.span.line == 16


@pytest.mark.sim
def test_lower_rank_rows_match_numpy(tmp_path: Path) -> None:
    x = np.random.default_rng(5).standard_normal((4, 16)).astype(np.float32)
    out = np.zeros((3, 4, 16), np.float32)
    ir.compile(pl.parse(LOWER_RANK), output_dir=str(tmp_path), platform="a2a3sim")(x, out)
    np.testing.assert_allclose(out, np.broadcast_to(2 * x, (3, 4, 16)), rtol=1e-6)
