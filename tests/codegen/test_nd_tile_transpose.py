"""N-D tile annotations and transposes: pypto's tiles are 2-D (an N-D tile is flattened as it is made).

``t: pl.Tile[[B, R, C], ...] = pl.load(...)`` is accepted (the annotation is compared flattened), a
transpose of an N-D tile's axes is a located refusal whose hint (one transpose per matrix) compiles and
matches numpy on both simulators.
"""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.errors import UserError

SRC = """import pypto.language as pl

@pl.program
class T3:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[4, 24, 8], pl.FP32], o: pl.Out[pl.Tensor[[4, 8, 24], pl.FP32]]) -> pl.Tensor[[4, 8, 24], pl.FP32]:
        for b in pl.range(4):
            t: pl.Tile[[1, 24, 8], pl.FP32] = pl.load(x, [b, 0, 0], [1, 24, 8])
            tt = pl.transpose(t, axis1=AXES)
            o = pl.store(tt, [b, 0, 0], o)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[4, 24, 8], pl.FP32], o: pl.Out[pl.Tensor[[4, 8, 24], pl.FP32]]) -> pl.Tensor[[4, 8, 24], pl.FP32]:
        o = self.k(x, o)
        return o
"""


@pytest.mark.sim
@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_the_per_matrix_transpose_the_refusal_suggests_matches_numpy(platform, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    compiled = ir.compile(pl.parse(SRC.replace("AXES", "0, axis2=1")), platform=platform)
    x = np.random.default_rng(3).standard_normal((4, 24, 8)).astype(np.float32)
    o = np.zeros((4, 8, 24), np.float32)
    compiled(x, o)
    np.testing.assert_array_equal(o, x.transpose(0, 2, 1))


def test_a_transpose_of_n_d_tile_axes_is_a_located_refusal_with_the_rewrite():
    with pytest.raises(UserError, match=r"tile.transpose: axes \[1, 2\] of an N-D tile: pypto's tiles are 2-D") as ei:
        pl.parse(SRC.replace("AXES", "1, axis2=2"))
    assert ei.value.span.line == 9 and "for b in pl.range(B)" in ei.value.hint


def test_an_n_d_tile_annotation_is_compared_flattened():
    wrong = SRC.replace("AXES", "0, axis2=1").replace("pl.Tile[[1, 24, 8]", "pl.Tile[[2, 24, 8]")
    pl.parse(wrong.replace("pl.Tile[[2, 24, 8]", "pl.Tile[[1, 24, 8]"))  # the right one parses
    with pytest.raises(UserError, match=r"shape mismatch for 't': annotation \[2, 24, 8\] vs value \[24, 8\]") as ei:
        pl.parse(wrong)
    assert ei.value.span.line == 8
