"""Windows in kernels: a window of a window of a tensor parameter is one load from the parameter; a window
of a reshaped load (or of any computed tile) is copied out with ``tile.slice`` (``pto.textract``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir

RESHAPED = """import pypto.language as pl

@pl.program
class Reshaped:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, q: pl.Tensor[[4, 1024], pl.FP32], out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        for b in pl.parallel(4):
            with pl.at(level=pl.Level.CORE_GROUP):
                for ki in pl.range(2):
                    blk = pl.reshape(q[b : b + 1, ki * 512 : ki * 512 + 512], [8, 64])
                    lo = blk[:, 0:32]
                    hi = blk[:, 32:64]
                    out = pl.assemble(out, pl.add(lo, hi), [b * 16 + ki * 8, 0])
                    out = pl.assemble(out, pl.sub(lo, hi), [b * 16 + ki * 8, 32])
        return out
"""

NESTED = """import pypto.language as pl

@pl.program
class Nested:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, q: pl.Tensor[[64, 64], pl.FP32], out: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            x = q[16:32, :]
            y = x[4:16, 32:64]
            out = pl.assemble(out, pl.add(y, pl.exp(x[0:12, 0:32])), [0, 0])
        return out
"""


SCOPED = """import pypto.language as pl

@pl.program
class Scoped:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 64], pl.FP32], out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            t = pl.exp(x)
            w = t[:, 16:48]
            for i in pl.range(2):
                if i == 1:
                    out = pl.assemble(out, pl.add(w, 1.0), [0, 0])
            out = pl.assemble(out, pl.mul(w, 2.0), [0, 32])
        return out
"""


def _want_reshaped(q: np.ndarray) -> np.ndarray:
    want = np.zeros((64, 64), np.float32)
    for b in range(4):
        for ki in range(2):
            blk = q[b, ki * 512:ki * 512 + 512].reshape(8, 64)
            want[b * 16 + ki * 8:b * 16 + ki * 8 + 8, :32] = blk[:, :32] + blk[:, 32:]
            want[b * 16 + ki * 8:b * 16 + ki * 8 + 8, 32:] = blk[:, :32] - blk[:, 32:]
    return want


def _converted(src: str, tmp_path: Path) -> str:
    """The program text right after ConvertTensorToTileOps."""
    ir.compile(pl.parse(src), output_dir=str(tmp_path), skip_ptoas=True)
    (dump,) = (tmp_path / "passes_dump").glob("*_after_ConvertTensorToTileOps.py")
    return dump.read_text()


def test_a_window_of_a_reshaped_load_is_a_tile_slice(tmp_path: Path) -> None:
    text = _converted(RESHAPED, tmp_path)
    assert text.count("pl.tile.load(") == 1 and text.count("pl.tile.slice(") == 2
    assert "pl.tile.load(q__" in text


def test_a_window_of_a_window_loads_from_the_parameter(tmp_path: Path) -> None:
    text = _converted(NESTED, tmp_path)
    assert "pl.tile.slice(" not in text
    assert "pl.tile.load(q__ssa_v0, [16 + 4, 32], [12, 32]" in text
    assert "pl.tile.load(q__ssa_v0, [16, 0], [12, 32]" in text


@pytest.mark.sim
@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_windows_match_numpy(platform: str, tmp_path: Path) -> None:
    rng = np.random.default_rng(29)
    q = rng.standard_normal((4, 1024)).astype(np.float32)
    out = np.zeros((64, 64), np.float32)
    ir.compile(pl.parse(RESHAPED), output_dir=str(tmp_path / "r"), platform=platform)(q, out)
    np.testing.assert_allclose(out, _want_reshaped(q), rtol=1e-6, atol=1e-6)
    q2 = rng.standard_normal((64, 64)).astype(np.float32)
    out2 = np.zeros((16, 32), np.float32)
    ir.compile(pl.parse(NESTED), output_dir=str(tmp_path / "n"), platform=platform)(q2, out2)
    want = np.zeros((16, 32), np.float32)
    want[:12] = q2[20:32, 32:64] + np.exp(q2[16:28, 0:32])
    np.testing.assert_allclose(out2, want, rtol=1e-5, atol=1e-5)
    x3 = rng.standard_normal((16, 64)).astype(np.float32)
    out3 = np.zeros((16, 64), np.float32)
    ir.compile(pl.parse(SCOPED), output_dir=str(tmp_path / "s"), platform=platform)(x3, out3)
    w = np.exp(x3[:, 16:48])
    np.testing.assert_allclose(out3, np.concatenate([w + 1, w * 2], axis=1), rtol=1e-5, atol=1e-5)


def test_a_window_used_first_inside_a_branch_is_copied_where_it_is_taken(tmp_path: Path) -> None:
    text = _converted(SCOPED, tmp_path)
    body = text[text.index("pl.tile.slice("):]
    assert body.index("pl.tile.slice(") < body.index("for i")
