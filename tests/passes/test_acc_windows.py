"""Windows of one Acc tile as ``matmul_acc`` destinations (``win = pl.tile.slice(acc, ...)`` then
``win = pl.matmul_acc(win, a, b, init_cond=(k == 0))``, ``acc`` stored once at the end): each window's K loop
carries an accumulator of its own and stores it at the window's offset."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.errors import UserError
from pypto.ir.expr import BinOp
from pypto.ir.stmt import EvalStmt, ForStmt, preorder
from pypto.passes.convert_tensor_to_tile_ops import ConvertTensorToTileOps
from pypto.passes.convert_to_ssa import ConvertToSSA

# a [32, 96] accumulator cut into a 2 x 3 grid of [16, 32] windows, each a K loop over 64 in steps of 16
SRC = """import pypto.language as pl

@pl.program
class Windows:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[32, 64], pl.FP32], b: pl.Tensor[[64, 96], pl.FP32],
          c: pl.Out[pl.Tensor[[40, 96], pl.FP32]]) -> pl.Tensor[[40, 96], pl.FP32]:
        acc = pl.tile.create([32, 96], pl.FP32, target_memory=pl.MemorySpace.Acc)
        for i in pl.range(2):
            for j in pl.range(3):
                for k0 in pl.range(0, 64, 16):
                    a_l1 = pl.load(a, [i * 16, k0], [16, 16], target_memory=pl.MemorySpace.Mat)
                    b_l1 = pl.load(b, [k0, j * 32], [16, 32], target_memory=pl.MemorySpace.Mat)
                    a_l0 = pl.move(a_l1, target_memory=pl.MemorySpace.Left)
                    b_l0 = pl.move(b_l1, target_memory=pl.MemorySpace.Right)
                    win = pl.tile.slice(acc, [16, 32], [i * 16, j * 32])
                    win = pl.tile.matmul_acc(win, a_l0, b_l0, init_cond=(k0 == 0))
        c = pl.store(acc, offsets=[8, 0], output_tensor=c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[32, 64], pl.FP32], b: pl.Tensor[[64, 96], pl.FP32],
             c: pl.Out[pl.Tensor[[40, 96], pl.FP32]]) -> pl.Tensor[[40, 96], pl.FP32]:
        c = self.k(a, b, c)
        return c
"""


def _stem(name: str) -> str:
    """The source name of a compiler-made one (``i__idx_v0`` -> ``i``)."""
    return name.split("__", 1)[0]


def _kernel(src: str):
    program = ConvertTensorToTileOps()(ConvertToSSA()(pl.parse(src)))
    return next(f for f in program.functions if f.is_incore)


def test_each_window_carries_its_own_accumulator_and_is_stored_at_its_offset() -> None:
    kernel = _kernel(SRC)
    ops = [getattr(getattr(s, "value", getattr(s, "expr", None)), "op", None) for s in preorder(kernel.body)]
    assert "tile.slice" not in ops and ops.count("tile.store") == 1
    (store,) = [s for s in preorder(kernel.body) if isinstance(s, EvalStmt)]
    row, col = store.expr.args[1].elements  # the final store's offset plus the window's: [8 + i * 16, j * 32]
    assert (row.op, row.lhs.value, row.rhs.op, _stem(row.rhs.lhs.name), row.rhs.rhs.value) == \
        (BinOp.Add, 8, BinOp.Mul, "i", 16)
    assert (col.op, _stem(col.lhs.name), col.rhs.value) == (BinOp.Mul, "j", 32)
    k_loop = next(s for s in preorder(kernel.body) if isinstance(s, ForStmt) and s.iter_args)
    assert k_loop.iter_args[0].var_type.shape == (16, 32)  # the window's accumulator, not the [32, 96] tile
    creates = [s.var for s in preorder(kernel.body) if getattr(getattr(s, "value", None), "op", None) == "tile.create"]
    assert all(v.var_type.shape != (32, 96) for v in creates)


@pytest.mark.sim
def test_windows_of_an_acc_tile_match_numpy(tmp_path: Path) -> None:
    rng = np.random.default_rng(96)
    a = rng.standard_normal((32, 64)).astype(np.float32)
    b = rng.standard_normal((64, 96)).astype(np.float32)
    c = np.full((40, 96), 7.0, np.float32)
    ir.compile(pl.parse(SRC), output_dir=str(tmp_path), platform="a2a3sim")(a, b, c)
    np.testing.assert_allclose(c[8:], a @ b, rtol=1e-4, atol=1e-4)
    assert (c[:8] == 7.0).all()  # rows outside the store's window keep their values


def test_a_window_read_after_its_matmul_keeps_the_located_error(tmp_path: Path) -> None:
    src = SRC.replace("win = pl.tile.matmul_acc(win, a_l0, b_l0, init_cond=(k0 == 0))",
                      "win = pl.tile.matmul_acc(win, a_l0, b_l0, init_cond=(k0 == 0))\n"
                      "                    c = pl.store(win, [0, 0], c)")
    with pytest.raises(UserError) as ei:
        ir.compile(pl.parse(src), output_dir=str(tmp_path), skip_ptoas=True)
    assert "tile.slice of an Acc tile cannot be lowered" in ei.value.message
    assert ei.value.span.line == 16
