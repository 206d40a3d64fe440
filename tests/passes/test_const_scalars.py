"""Simplify substitutes integer scalars bound once to a constant at a function's top level (``M, N = a.shape``,
``M = 16``) into later uses and types, as upstream's Simplify does, so ``pl.load(a, [0, 0], [M, N])`` in an
outlined kernel is a static ``[16, 32]`` tile; a constant bound inside a loop is left alone, and a shape
that is still not static (a constant bound inside a loop) stays a located error."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.errors import UserError

SRC = """import pypto.language as pl

@pl.program
class Shapes:
    @pl.function(type=pl.FunctionType.Opaque)
    def main(self, a: pl.Tensor[[16, 32], pl.FP32], c: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        R = 8
        with pl.at(level=pl.Level.CORE_GROUP):
            M, N = a.shape
            top = pl.load(a, [0, 0], [R, N])
            rest = pl.load(a, [R, 0], [M - R, N])
            pl.store(pl.mul(top, 2.0), [0, 0], c)
            pl.store(pl.exp(rest), [R, 0], c)
        return c
"""


def _after_simplify(src: str, tmp_path: Path) -> str:
    ir.compile(pl.parse(src), output_dir=str(tmp_path), skip_ptoas=True)
    return next((tmp_path / "passes_dump").glob("*_after_Simplify.py")).read_text()


def test_shape_scalars_become_static_tile_shapes(tmp_path: Path) -> None:
    text = _after_simplify(SRC, tmp_path)
    assert "pl.Tile[[8, 32], pl.FP32" in text and "pl.tile.load(a__ssa_v0, [8, 0], [8, 32]" in text
    assert "[M, N]" not in text and "[R, N]" not in text


@pytest.mark.sim
def test_shape_scalars_match_numpy(tmp_path: Path) -> None:
    a = np.random.default_rng(2).standard_normal((16, 32)).astype(np.float32)
    c = np.zeros_like(a)
    ir.compile(pl.parse(SRC), output_dir=str(tmp_path), platform="a2a3sim")(a, c)
    np.testing.assert_allclose(c, np.concatenate([2 * a[:8], np.exp(a[8:])]), rtol=1e-5, atol=1e-6)


LOOP = """import pypto.language as pl

@pl.program
class Loop:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[16, 32], pl.FP32], c: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        for i in pl.range(2):
            step = 8
            t = pl.load(a, [i * step, 0], [8, 32])
            c = pl.store(t, [i * step, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 32], pl.FP32], c: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        c = self.k(a, c)
        return c
"""


def test_a_constant_bound_inside_a_loop_is_left_alone(tmp_path: Path) -> None:
    text = _after_simplify(LOOP, tmp_path)
    assert "step__ssa_v0: pl.Scalar[pl.INDEX] = 8" in text and "i__idx_v0 * step__ssa_v0" in text


DYN = """import pypto.language as pl

@pl.program
class Dyn:
    @pl.function(type=pl.FunctionType.Opaque)
    def main(self, a: pl.Tensor[[16, 32], pl.FP32], c: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        for i in pl.range(2):
            with pl.at(level=pl.Level.CORE_GROUP):
                rows = 8
                t = pl.load(a, [i * 8, 0], [rows, 32])
                c = pl.store(t, [i * 8, 0], c)
        return c
"""


def test_a_shape_that_is_not_a_constant_stays_a_located_error(tmp_path: Path) -> None:
    with pytest.raises(Exception, match="tile shape must be static") as ei:
        ir.compile(pl.parse(DYN), output_dir=str(tmp_path), skip_ptoas=True)
    err = getattr(ei.value, "user_error", None) or ei.value
    assert isinstance(err, UserError) and err.span.line == 10
