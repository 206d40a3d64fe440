"""``pl.tile.slice`` (and ``tile[a:b, c:d]``) inside kernels: a copy of the window (``pto.textract``).

Tiles are values in pypto's IR, so the slice is a new tile and its source stays intact; the window may
sit at a loop-dependent offset, and a window of a Mat tile feeds the cube through a move to Left.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.errors import UserError
from tests.codegen.ptocheck import checker, verify

VEC = """import pypto.language as pl

@pl.program
class Slices:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 128], pl.FP32], g: pl.Tensor[[1, 64], pl.FP32],
          lo_out: pl.Out[pl.Tensor[[16, 64], pl.FP32]], hi_out: pl.Out[pl.Tensor[[16, 64], pl.FP32]],
          rows: pl.Out[pl.Tensor[[16, 128], pl.FP32]], echo: pl.Out[pl.Tensor[[16, 128], pl.FP32]]
          ) -> pl.Tensor[[16, 64], pl.FP32]:
        t = pl.load(x, [0, 0], [16, 128])
        gt = pl.load(g, [0, 0], [1, 64])
        lo = t[:, 0:64]
        hi = pl.tile.slice(t, [16, 64], [0, 64])
        lo_out = pl.store(pl.tile.col_expand_mul(lo, gt), [0, 0], lo_out)
        hi_out = pl.store(pl.tile.col_expand_mul(hi, gt), [0, 0], hi_out)
        for r in pl.range(16):
            row = pl.tile.slice(t, [1, 128], [r, 0])
            rows = pl.store(pl.tile.muls(row, 2.0), [r, 0], rows)
        echo = pl.store(t, [0, 0], echo)
        return lo_out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 128], pl.FP32], g: pl.Tensor[[1, 64], pl.FP32],
             lo_out: pl.Out[pl.Tensor[[16, 64], pl.FP32]], hi_out: pl.Out[pl.Tensor[[16, 64], pl.FP32]],
             rows: pl.Out[pl.Tensor[[16, 128], pl.FP32]], echo: pl.Out[pl.Tensor[[16, 128], pl.FP32]]
             ) -> pl.Tensor[[16, 64], pl.FP32]:
        lo_out = self.k(x, g, lo_out, hi_out, rows, echo)
        return lo_out
"""

MAT = """import pypto.language as pl

@pl.program
class MatSlices:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[32, 64], pl.FP16], b: pl.Tensor[[64, 32], pl.FP16],
          c: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
        am = pl.load(a, [0, 0], [32, 64], target_memory=pl.MemorySpace.Mat)
        bm = pl.load(b, [0, 0], [64, 32], target_memory=pl.MemorySpace.Mat)
        a0 = pl.move(pl.slice(am, [32, 32], [0, 0]), target_memory=pl.MemorySpace.Left)
        a1 = pl.move(pl.slice(am, [32, 32], [0, 32]), target_memory=pl.MemorySpace.Left)
        b0 = pl.move(pl.slice(bm, [32, 32], [0, 0]), target_memory=pl.MemorySpace.Right)
        b1 = pl.move(pl.slice(bm, [32, 32], [32, 0]), target_memory=pl.MemorySpace.Right)
        acc = pl.matmul(a0, b0)
        acc = pl.matmul_acc(acc, a1, b1)
        c = pl.store(acc, [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[32, 64], pl.FP16], b: pl.Tensor[[64, 32], pl.FP16],
             c: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
        c = self.k(a, b, c)
        return c
"""

CARRIED = """import pypto.language as pl

@pl.program
class Carried:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[8, 64], pl.FP32], o: pl.Out[pl.Tensor[[8, 64], pl.FP32]]) -> pl.Tensor[[8, 64], pl.FP32]:
        t = pl.load(x, [0, 0], [8, 64])
        acc = pl.tile.create([8, 64], dtype=pl.FP32)
        for r in pl.range(8):
            acc = pl.tile.assemble(acc, pl.tile.slice(t, [1, 64], [r, 0]), [r, 0])
        o = pl.store(acc, [0, 0], o)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[8, 64], pl.FP32], o: pl.Out[pl.Tensor[[8, 64], pl.FP32]]) -> pl.Tensor[[8, 64], pl.FP32]:
        o = self.k(x, o)
        return o
"""


def _ptos(compiled) -> list[Path]:
    ptos = sorted(Path(compiled.output_dir).glob("ptoas/*.pto"))
    if checker()[0] is not None:
        verify(*ptos)
    return ptos


@pytest.mark.sim
@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_vector_slices_copy_their_window(platform: str, tmp_path: Path) -> None:
    compiled = ir.compile(pl.parse(VEC), output_dir=str(tmp_path), platform=platform)
    assert _ptos(compiled)[0].read_text().count("pto.textract ") == 3
    rng = np.random.default_rng(11)
    x = rng.standard_normal((16, 128)).astype(np.float32)
    g = rng.standard_normal((1, 64)).astype(np.float32)
    lo, hi = np.zeros((16, 64), np.float32), np.zeros((16, 64), np.float32)
    rows, echo = np.zeros((16, 128), np.float32), np.zeros((16, 128), np.float32)
    compiled(x, g, lo, hi, rows, echo)
    np.testing.assert_allclose(lo, x[:, :64] * g, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(hi, x[:, 64:] * g, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(rows, x * 2, rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(echo, x)


@pytest.mark.sim
@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_mat_slices_feed_a_split_k_matmul(platform: str, tmp_path: Path) -> None:
    compiled = ir.compile(pl.parse(MAT), output_dir=str(tmp_path), platform=platform)
    _ptos(compiled)
    rng = np.random.default_rng(12)
    a = rng.standard_normal((32, 64)).astype(np.float16)
    b = rng.standard_normal((64, 32)).astype(np.float16)
    c = np.zeros((32, 32), np.float32)
    compiled(a, b, c)
    np.testing.assert_allclose(c, a.astype(np.float32) @ b.astype(np.float32), rtol=1e-3, atol=1e-3)


def _carried(init: str, after: str) -> str:
    return CARRIED.replace("        acc = pl.tile.create([8, 64], dtype=pl.FP32)\n", f"        acc = {init}\n") \
        .replace("        o = pl.store(acc, [0, 0], o)\n", after)


def test_an_assembled_tile_carried_by_a_loop_and_used_twice_is_a_located_error(tmp_path: Path) -> None:
    twice = "        o = pl.store(acc, [0, 0], o)\n        o = pl.store(pl.add(acc, acc), [0, 0], o)\n"
    with pytest.raises(UserError) as ei:
        ir.compile(pl.parse(_carried("pl.tile.create([8, 64], dtype=pl.FP32)", twice)), output_dir=str(tmp_path),
                   skip_ptoas=True)
    assert "the result of tile.assemble ('acc') is carried by a loop or an if" in ei.value.message
    assert "store each block inside the loop" in (ei.value.hint or "")
    assert ei.value.span.line == 9


@pytest.mark.parametrize("init", ["create", "load"])
def test_an_assembled_tile_carried_by_a_loop_and_stored_once_becomes_block_stores(tmp_path: Path,
                                                                                  init: str) -> None:
    """LowerCompositeOps: the loop carries the output tensor and stores each block at its offset; an initial
    value with bytes (here a load of x, overwritten by the rows) is stored before the loop."""
    src = CARRIED if init == "create" else _carried("pl.load(x, [0, 0], [8, 64])", "        o = pl.store(acc, [0, 0], o)\n")
    c = ir.compile(pl.parse(src), output_dir=str(tmp_path / "o"), platform="a2a3sim", dump_passes=True)
    after = next((Path(c.output_dir) / "passes_dump").glob("*_after_LowerCompositeOps.py")).read_text()
    assert "tile.assemble" not in after and after.count("pl.tile.store(") == (1 if init == "create" else 2)
    rng = np.random.default_rng(8)
    x = rng.standard_normal((8, 64)).astype(np.float32)
    o = np.zeros((8, 64), np.float32)
    c(x, o)
    np.testing.assert_array_equal(o, x)


NESTED = """import pypto.language as pl

@pl.program
class Nested:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[32, 32], pl.FP32], s: pl.Tensor[[16, 16], pl.FP32],
          o: pl.Out[pl.Tensor[[32, 32], pl.FP32]], o2: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
        t = pl.load(x, [0, 0], [32, 32])
        src = pl.load(s, [0, 0], [16, 16])
        twice = pl.load(s, [0, 0], [16, 16])
        for b in pl.range(2):
            for c in pl.range(1):
                t = pl.tile.assemble(t, src, [b * 16, c * 16 + 16])
            twice = pl.add(twice, src)
        o = pl.store(t, [0, 0], o)
        o2 = pl.store(twice, [0, 0], o2)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[32, 32], pl.FP32], s: pl.Tensor[[16, 16], pl.FP32],
             o: pl.Out[pl.Tensor[[32, 32], pl.FP32]], o2: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
        o = self.k(x, s, o, o2)
        return o
"""


@pytest.mark.sim
@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_a_tile_assembled_across_nested_loops_becomes_block_stores(platform: str, tmp_path: Path) -> None:
    """Both loops carry the output tensor; the outer loop's other carried tile keeps its place."""
    c = ir.compile(pl.parse(NESTED), output_dir=str(tmp_path / "o"), platform=platform, dump_passes=True)
    after = next((Path(c.output_dir) / "passes_dump").glob("*_after_LowerCompositeOps.py")).read_text()
    assert "tile.assemble" not in after
    rng = np.random.default_rng(9)
    x = rng.standard_normal((32, 32)).astype(np.float32)
    s = rng.standard_normal((16, 16)).astype(np.float32)
    o, o2 = np.zeros((32, 32), np.float32), np.zeros((16, 16), np.float32)
    c(x, s, o, o2)
    want = x.copy()
    want[:16, 16:] = want[16:, 16:] = s
    np.testing.assert_array_equal(o, want)
    np.testing.assert_allclose(o2, s * 3, rtol=1e-6)


def test_a_nested_carried_assemble_used_in_the_outer_loop_is_a_located_error(tmp_path: Path) -> None:
    used = NESTED.replace("            twice = pl.add(twice, src)\n",
                          "            twice = pl.add(twice, pl.tile.slice(t, [16, 16], [0, 16]))\n")
    with pytest.raises(UserError) as ei:
        ir.compile(pl.parse(used), output_dir=str(tmp_path), skip_ptoas=True)
    assert "the result of tile.assemble ('t')" in ei.value.message, ei.value.message
    assert "is carried by a loop" in ei.value.message and ei.value.span.line == 12  # the inner loop
