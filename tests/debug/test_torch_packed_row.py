"""torch_codegen of ``tile.row_expand_add`` with a row-major packed ``[M, 32 B]`` row vector: the lanes
repeat across the row, before and after the pass pipeline."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto.debug import torch_codegen
from pypto.driver import lower

torch = pytest.importorskip("torch", reason="torch is not installed (pip install torch==2.13.0)")

PROGRAM = """
import pypto.language as pl

@pl.program
class Packed:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 64], pl.FP32], v: pl.Tensor[[16, 8], pl.FP32],
             out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            t = pl.tile.row_expand_add(pl.load(x, [0, 0], [16, 64]), pl.load(v, [0, 0], [16, 8]))
            out = pl.store(t, [0, 0], out)
        return out
"""


@pytest.mark.parametrize("stage", ["frontend", "lowered"])
def test_packed_row_vector_lanes_repeat(stage: str) -> None:
    program = pl.parse(PROGRAM)
    ns: dict = {}
    exec(torch_codegen(program if stage == "frontend" else lower(program), check_shapes=True), ns)  # noqa: S102
    rng = np.random.default_rng(2)
    x, v = rng.standard_normal((16, 64)).astype(np.float32), rng.standard_normal((16, 8)).astype(np.float32)
    out = torch.zeros(16, 64)
    ns["main"](torch.from_numpy(x), torch.from_numpy(v), out)
    np.testing.assert_allclose(out.numpy(), x + np.tile(v, (1, 8)), rtol=1e-6, atol=1e-6)
