"""A tile that crosses a ``pl.system.syncall`` barrier after element writes into it (``pl.write`` binds no new
value) is stored into its GM temp after its last write, not after its definition: the task after the barrier
reads the written elements."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir

SRC = """import pypto.language as pl

@pl.program
class Written:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[1, 256], pl.FP32], p: pl.Tensor[[1, 8], pl.FP32],
             ids: pl.Out[pl.Tensor[[1, 8], pl.INT32]]):
        with pl.at(level=pl.Level.CORE_GROUP):
            idv = pl.create_tensor([1, 64], dtype=pl.INT32)
            idv[:, :] = pl.full([1, 64], dtype=pl.INT32, value=3)
            for g in pl.range(4):
                ti = pl.cast(pl.neg(x[:, g * 64 : g * 64 + 64]), target_type=pl.INT32)
                for k in pl.range(8):
                    pl.write(idv, [0, g * 8 + k], pl.read(ti, [0, k]))
            pl.system.syncall(core_type="aiv_only")
            pos = pl.cast(pl.add(p[:, :], p[:, :]), target_type=pl.INT32)
            sel = pl.create_tensor([1, 8], dtype=pl.INT32)
            for k in pl.range(8):
                q = pl.read(pos, [0, k])
                pl.write(sel, [0, k], pl.read(idv, [0, pl.cast(q, target_type=pl.INDEX)]))
            ids[:, :] = sel
        return ids
"""


@pytest.mark.sim
@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_a_tile_written_in_place_crosses_the_barrier_with_its_writes(platform: str, tmp_path: Path) -> None:
    compiled = ir.compile(pl.parse(SRC), output_dir=str(tmp_path), platform=platform)
    first = next(Path(compiled.output_dir).rglob("*_seg0.pto")).read_text()
    assert first.index("pto.tstore") > first.rindex("pto.txor")  # stored after the last element write
    x = (np.random.default_rng(3).standard_normal((1, 256)) * 50).astype(np.float32)
    p = np.array([[0, 1, 5, 8, 12, 15, 3, 20]], np.float32)  # positions 2 * p; 40 was never written
    ids = np.zeros((1, 8), np.int32)
    compiled(x, p, ids)
    full = np.full(64, 3, np.int32)
    for g in range(4):
        full[g * 8 : g * 8 + 8] = np.rint(-x[0, g * 64 : g * 64 + 8]).astype(np.int32)
    np.testing.assert_array_equal(ids[0], full[(2 * p[0]).astype(int)])
