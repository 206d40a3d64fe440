"""``pl.transpose`` of a 2-D Vec tile inside a kernel: ``pto.ttrans`` of ptoas 0.1.1.

0.1.1 spells the op ``ins(%src, %dst) outs(%tmp)`` and emits ``TTRANS(dst, src)``; the result gets a
buffer of its own (also for a square tile, where reusing the source's bytes would corrupt it).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.errors import UserError
from tests.codegen.ptocheck import checker, verify

SRC = """import pypto.language as pl

@pl.program
class Trans:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 8], pl.FP32], s: pl.Tensor[[8, 8], pl.FP32],
          o: pl.Out[pl.Tensor[[8, 16], pl.FP32]], o2: pl.Out[pl.Tensor[[8, 8], pl.FP32]]
          ) -> pl.Tensor[[8, 16], pl.FP32]:
        t = pl.load(x, [0, 0], [16, 8])
        y = pl.transpose(t, axis1=0, axis2=1)
        o = pl.store(pl.tile.adds(y, 1.0), [0, 0], o)
        q = pl.load(s, [0, 0], [8, 8])
        o2 = pl.store(pl.tile.transpose(q, 1, 0), [0, 0], o2)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 8], pl.FP32], s: pl.Tensor[[8, 8], pl.FP32],
             o: pl.Out[pl.Tensor[[8, 16], pl.FP32]], o2: pl.Out[pl.Tensor[[8, 8], pl.FP32]]
             ) -> pl.Tensor[[8, 16], pl.FP32]:
        o = self.k(x, s, o, o2)
        return o
"""


@pytest.mark.sim
@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_transposes_match_numpy(platform: str, tmp_path: Path) -> None:
    compiled = ir.compile(pl.parse(SRC), output_dir=str(tmp_path), platform=platform)
    ptos = sorted(Path(compiled.output_dir).glob("ptoas/*.pto"))
    assert ptos[0].read_text().count("pto.ttrans ") == 2
    if checker()[0] is not None:
        verify(*ptos)
    rng = np.random.default_rng(31)
    x = rng.standard_normal((16, 8)).astype(np.float32)
    s = rng.standard_normal((8, 8)).astype(np.float32)
    o, o2 = np.zeros((8, 16), np.float32), np.zeros((8, 8), np.float32)
    compiled(x, s, o, o2)
    np.testing.assert_array_equal(o, x.T + 1)
    np.testing.assert_array_equal(o2, s.T)


def test_a_transpose_of_a_mat_tile_is_a_located_error(tmp_path: Path) -> None:
    src = SRC.replace("q = pl.load(s, [0, 0], [8, 8])",
                      "q = pl.load(s, [0, 0], [8, 8], target_memory=pl.MemorySpace.Mat)")
    with pytest.raises(UserError) as ei:
        ir.compile(pl.parse(src), output_dir=str(tmp_path), skip_ptoas=True)
    assert "tile.transpose of a mat tile cannot be lowered by ptoas 0.1.1" in ei.value.message
    assert ei.value.span.line == 13
