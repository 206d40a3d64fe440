"""``pl.write`` of values a kernel reads from GM: more reads than a task has scalar slots (16).

A read whose value is only written stays in the kernel as a one-element tile load; ``tile.write``
broadcasts its element with an all-zero index ``tgather``, and ``pl.write`` of a GM tensor stores it
as a one-element tile.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.errors import UserError
from tests.codegen.ptocheck import checker, verify

N = 20  # more than the 16 scalars a task takes

SRC = f"""import pypto.language as pl

@pl.program
class W:
    @pl.function(type=pl.FunctionType.InCore)
    def tiles(self, vals: pl.Tensor[[{N}], pl.FP32], o: pl.Out[pl.Tensor[[8, 32], pl.FP32]]
              ) -> pl.Tensor[[8, 32], pl.FP32]:
        t: pl.Tile[[8, 32], pl.FP32] = pl.tile.full([8, 32], dtype=pl.FP32, value=2.0)
        for i in pl.unroll({N}):
            v: pl.Scalar[pl.FP32] = pl.read(vals, [i])
            pl.write(t, [i % 8, (3 * i) % 32], v)
        return pl.store(t, [0, 0], o)

    @pl.function(type=pl.FunctionType.InCore)
    def table(self, vals: pl.Tensor[[{N}], pl.FP32], s: pl.Scalar[pl.FP32],
              g: pl.InOut[pl.Tensor[[4, 8], pl.FP32]]) -> pl.Tensor[[4, 8], pl.FP32]:
        for i in pl.unroll({N}):
            v: pl.Scalar[pl.FP32] = pl.read(vals, [i])
            g = pl.write(g, [i // 8, i % 8], v)
        g = pl.write(g, [3, 7], s)
        return g

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, vals: pl.Tensor[[{N}], pl.FP32], s: pl.Scalar[pl.FP32], o: pl.Out[pl.Tensor[[8, 32], pl.FP32]],
             g: pl.InOut[pl.Tensor[[4, 8], pl.FP32]]) -> pl.Tensor[[8, 32], pl.FP32]:
        o = self.tiles(vals, o)
        g = self.table(vals, s, g)
        return o
"""


@pytest.mark.sim
@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_written_reads_stay_in_the_kernel(platform: str, tmp_path: Path) -> None:
    compiled = ir.compile(pl.parse(SRC), output_dir=str(tmp_path), platform=platform)
    ptos = sorted(Path(compiled.output_dir).rglob("*.pto"))
    text = "".join(p.read_text() for p in ptos)
    assert text.count("pto.tgather ") == N and "tsetval" not in text
    if checker()[0] is not None:
        verify(*ptos)
    vals = np.random.default_rng(3).standard_normal(N).astype(np.float32)
    vals[5] = np.nan
    o = np.zeros((8, 32), np.float32)
    g = np.full((4, 8), -1.0, np.float32)
    compiled(vals, np.float32(0.25), o, g)
    want_o = np.full((8, 32), 2.0, np.float32)
    want_g = np.full((4, 8), -1.0, np.float32)
    for i in range(N):
        want_o[i % 8, (3 * i) % 32] = vals[i]
        want_g[i // 8, i % 8] = vals[i]
    want_g[3, 7] = 0.25
    np.testing.assert_array_equal(o.view(np.int32), want_o.view(np.int32))
    np.testing.assert_array_equal(g.view(np.int32), want_g.view(np.int32))


def test_a_read_used_otherwise_is_still_passed_as_a_scalar(tmp_path: Path) -> None:
    src = SRC.replace(f"pl.unroll({N})", "pl.unroll(4)").replace(
        "pl.write(t, [i % 8, (3 * i) % 32], v)", "pl.write(t, [i % 8, (3 * i) % 32], v)\n            t = pl.tile.adds(t, v)")
    compiled = ir.compile(pl.parse(src), output_dir=str(tmp_path), skip_ptoas=True)
    tiles = next(p for p in Path(compiled.output_dir).rglob("tiles.pto")).read_text()
    assert "pto.tgather" not in tiles and "%arg5: f32" in tiles


def test_a_write_outside_the_tile_is_a_located_error(tmp_path: Path) -> None:
    src = SRC.replace("pl.write(t, [i % 8, (3 * i) % 32], v)", "pl.write(t, [i % 8, 3 * i], v)")
    with pytest.raises(UserError) as ei:
        ir.compile(pl.parse(src), output_dir=str(tmp_path), skip_ptoas=True)
    assert "tile.write at column 33 of a tile with 32 valid columns" in ei.value.message
    assert ei.value.span.line == 11
