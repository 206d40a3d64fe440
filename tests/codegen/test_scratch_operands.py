"""The optional ``tmp=`` scratch tile of ``pl.tile.rsqrt`` and ``pl.tile.row_expand_add``.

Upstream's signatures take a PTOAS scratch tile; pypto's lowerings for ptoas 0.1.1 allocate their own,
so the operand is type-checked, kept in the IR (printed and parsed back) and changes no result.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.errors import UserError

SRC = """import pypto.language as pl

@pl.program
class Scratch:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 64], pl.FP32], r: pl.Tensor[[16, 1], pl.FP32],
          o: pl.Out[pl.Tensor[[16, 64], pl.FP32]], o2: pl.Out[pl.Tensor[[16, 64], pl.FP32]]
          ) -> pl.Tensor[[16, 64], pl.FP32]:
        a = pl.load(x, [0, 0], [16, 64])
        b = pl.load(r, [0, 0], [16, 1])
        t = pl.tile.create([16, 64], dtype=pl.FP32, target_memory=pl.MemorySpace.Vec)
        c = pl.tile.row_expand_add(a, b, tmp=t)
        t2 = pl.tile.create([16, 64], dtype=pl.FP32, target_memory=pl.MemorySpace.Vec)
        d = pl.tile.rsqrt(a, tmp=t2)
        o = pl.store(c, [0, 0], o)
        o2 = pl.store(d, [0, 0], o2)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 64], pl.FP32], r: pl.Tensor[[16, 1], pl.FP32],
             o: pl.Out[pl.Tensor[[16, 64], pl.FP32]], o2: pl.Out[pl.Tensor[[16, 64], pl.FP32]]
             ) -> pl.Tensor[[16, 64], pl.FP32]:
        o = self.k(x, r, o, o2)
        return o
"""


def test_the_scratch_operand_prints_and_parses_back() -> None:
    prog = pl.parse(SRC)
    text = prog.as_python()
    assert "pl.tile.row_expand_add(a, b, t)" in text
    assert "pl.tile.rsqrt(a, t2)" in text
    ir.assert_structural_equal(pl.parse(text), prog)


def test_a_scratch_operand_that_is_not_a_tile_is_a_located_error() -> None:
    with pytest.raises(UserError) as ei:
        pl.parse(SRC.replace("pl.tile.rsqrt(a, tmp=t2)", "pl.tile.rsqrt(a, tmp=x)"))
    assert "the scratch operand 'tmp' must be a tile" in ei.value.message
    assert ei.value.span.line == 14


@pytest.mark.sim
@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_results_match_numpy(tmp_path: Path, platform: str) -> None:
    c = ir.compile(pl.parse(SRC), output_dir=str(tmp_path), platform=platform)
    rng = np.random.default_rng(3)
    x = rng.uniform(0.5, 4.0, (16, 64)).astype(np.float32)
    r = rng.standard_normal((16, 1)).astype(np.float32)
    o, o2 = np.zeros((16, 64), np.float32), np.zeros((16, 64), np.float32)
    c(x, r, o, o2)
    np.testing.assert_allclose(o, x + r, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(o2, 1 / np.sqrt(x), rtol=1e-5, atol=1e-6)
