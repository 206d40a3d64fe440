"""Batched matmuls: ``pl.batch_matmul`` on N-D tile loads and ``pl.matmul`` of N-D tensors become one
``tile.matmul`` per matrix (FlattenTileNdTo2D); transposed operands load through the transposed view."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.errors import UnsupportedFeatureError, UserError
from pypto.ir.stmt import AssignStmt, preorder
from pypto.passes.context import PassContext
from pypto.passes.manager import run_pipeline

B, M, K, N = 3, 32, 48, 16


def _tile_program(b_trans: bool):
    r, s = (N, K) if b_trans else (K, N)

    @pl.program
    class Bmm:
        @pl.function(type=pl.FunctionType.InCore)
        def bmm(self, a: pl.Tensor[[B, M, K], pl.FP32], b: pl.Tensor[[B, K, N], pl.FP32],
                c: pl.Out[pl.Tensor[[B, M, N], pl.FP32]]) -> pl.Tensor[[B, M, N], pl.FP32]:
            ta = pl.load(a, [0, 0, 0], [B, M, K], target_memory=pl.MemorySpace.Mat)
            tb = pl.load(b, [0, 0, 0], [B, K, N], target_memory=pl.MemorySpace.Mat)
            p = pl.batch_matmul(ta, tb)
            c = pl.store(p, [0, 0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[B, M, K], pl.FP32], b: pl.Tensor[[B, K, N], pl.FP32],
                 c: pl.Out[pl.Tensor[[B, M, N], pl.FP32]]) -> pl.Tensor[[B, M, N], pl.FP32]:
            c = self.bmm(a, b, c)
            return c

    @pl.program
    class BmmBT:
        @pl.function(type=pl.FunctionType.InCore)
        def bmm(self, a: pl.Tensor[[B, M, K], pl.FP32], b: pl.Tensor[[B, N, K], pl.FP32],
                c: pl.Out[pl.Tensor[[B, M, N], pl.FP32]]) -> pl.Tensor[[B, M, N], pl.FP32]:
            ta = pl.load(a, [0, 0, 0], [B, M, K], target_memory=pl.MemorySpace.Mat)
            tb = pl.load(b, [0, 0, 0], [B, N, K], target_memory=pl.MemorySpace.Mat)
            tbt = pl.tile.transpose_view(tb)
            p = pl.batch_matmul(ta, tbt)
            c = pl.store(p, [0, 0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[B, M, K], pl.FP32], b: pl.Tensor[[B, N, K], pl.FP32],
                 c: pl.Out[pl.Tensor[[B, M, N], pl.FP32]]) -> pl.Tensor[[B, M, N], pl.FP32]:
            c = self.bmm(a, b, c)
            return c

    return BmmBT if b_trans else Bmm


def _ops(func) -> list[str]:
    return [s.value.op for s in preorder(func.body) if isinstance(s, AssignStmt) and hasattr(s.value, "op")
            and isinstance(s.value.op, str)]


def test_the_parser_reads_the_batch_off_the_loads() -> None:
    prog = _tile_program(True)
    kernel = next(f for f in prog.functions if f.name == "bmm")
    mm = next(s.value for s in preorder(kernel.body) if isinstance(s, AssignStmt)
              and getattr(s.value, "op", None) == "tile.batch_matmul")
    assert (mm.kwargs["lhs_batch"], mm.kwargs["rhs_batch"], mm.kwargs["b_trans"]) == (B, B, True)
    assert mm.args[1].type.shape == (B * N, K)  # the load itself, not its view
    assert mm.type.shape == (B * M, N)


@pytest.mark.parametrize("b_trans", [False, True])
def test_one_matmul_and_one_store_per_matrix(b_trans: bool) -> None:
    kernel = run_pipeline(_tile_program(b_trans), ctx=PassContext()).program["bmm"]
    ops = _ops(kernel)
    assert "tile.batch_matmul" not in ops and "tile.transpose_view" not in ops
    assert ops.count("tile.matmul") == B and ops.count("tile.store") == B
    assert ops.count("tile.load") == 2 * B  # one load of each matrix; the whole-batch loads are gone


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
@pytest.mark.parametrize("b_trans", [False, True])
def test_tile_batch_matmul_runs(platform: str, b_trans: bool, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(5)
    a = rng.standard_normal((B, M, K)).astype(np.float32)
    b = rng.standard_normal((B, N, K) if b_trans else (B, K, N)).astype(np.float32)
    c = np.zeros((B, M, N), np.float32)
    ir.compile(_tile_program(b_trans), platform=platform)(a, b, c)
    want = a @ (b.transpose(0, 2, 1) if b_trans else b)
    np.testing.assert_allclose(c, want, rtol=1e-4, atol=1e-4)


@pl.program
class TensorBmm:
    """c = a @ w[1:3]^T over a batch of 2: a batched pl.matmul of a grouped slice, A transposed too."""

    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[2, 48, 32], pl.FP32], w: pl.Tensor[[4, 16, 48], pl.FP32],
          c: pl.Out[pl.Tensor[[2, 32, 16], pl.FP32]]) -> pl.Tensor[[2, 32, 16], pl.FP32]:
        ws = pl.slice(w, [2, 16, 48], [1, 0, 0])
        c = pl.assemble(c, pl.matmul(a, ws, a_trans=True, b_trans=True), [0, 0, 0])
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[2, 48, 32], pl.FP32], w: pl.Tensor[[4, 16, 48], pl.FP32],
             c: pl.Out[pl.Tensor[[2, 32, 16], pl.FP32]]) -> pl.Tensor[[2, 32, 16], pl.FP32]:
        c = self.k(a, w, c)
        return c


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_batched_tensor_matmul_of_a_slice_runs(platform: str, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(6)
    a = rng.standard_normal((2, 48, 32)).astype(np.float32)
    w = rng.standard_normal((4, 16, 48)).astype(np.float32)
    c = np.zeros((2, 32, 16), np.float32)
    ir.compile(TensorBmm, platform=platform)(a, w, c)
    np.testing.assert_allclose(c, a.transpose(0, 2, 1) @ w[1:3].transpose(0, 2, 1), rtol=1e-4, atol=1e-4)


def test_matmul_types_broadcast_the_batch() -> None:
    from pypto.ir.dtypes import DataType
    from pypto.ir.expr import Var
    from pypto.ir.ops.registry import make_call
    from pypto.ir.types import TensorType

    a = Var("a", TensorType((16, 64), DataType.FP32))
    b = Var("b", TensorType((1, 32, 64), DataType.FP32))
    assert make_call("tensor.matmul", [a, b], {"b_trans": True}).type.shape == (1, 16, 32)
    a3 = Var("a3", TensorType((2, 16, 64), DataType.FP32))
    assert make_call("tensor.matmul", [a3, b], {"b_trans": True}).type.shape == (2, 16, 32)
    b3 = Var("b3", TensorType((3, 32, 64), DataType.FP32))
    with pytest.raises(UserError, match=r"batch dims \[2\] and \[3\] do not broadcast"):
        make_call("tensor.matmul", [a3, b3], {"b_trans": True})


def _computed_operand_program(b_trans: bool):
    r, s = (16, 48) if b_trans else (48, 16)

    @pl.program
    class Computed:
        """c = a @ (b0 + b1) per matrix: the batched right operand is computed on the vector core."""

        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[2, 32, 48], pl.FP32], b0: pl.Tensor[[2, r, s], pl.FP32],
              b1: pl.Tensor[[2, r, s], pl.FP32], c: pl.Out[pl.Tensor[[2, 32, 16], pl.FP32]]
              ) -> pl.Tensor[[2, 32, 16], pl.FP32]:
            bb = pl.add(b0, b1)
            c = pl.assemble(c, pl.matmul(a, bb, b_trans=b_trans), [0, 0, 0])
            return c

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[2, 32, 48], pl.FP32], b0: pl.Tensor[[2, r, s], pl.FP32],
                 b1: pl.Tensor[[2, r, s], pl.FP32], c: pl.Out[pl.Tensor[[2, 32, 16], pl.FP32]]
                 ) -> pl.Tensor[[2, 32, 16], pl.FP32]:
            c = self.k(a, b0, b1, c)
            return c

    return Computed


@pytest.mark.parametrize("b_trans", [False, True])
def test_a_computed_batched_operand_is_cut_into_its_matrices(b_trans: bool, tmp_path: Path) -> None:
    c = ir.compile(_computed_operand_program(b_trans), output_dir=tmp_path / "o", skip_ptoas=True)
    after = next((Path(c.output_dir) / "passes_dump").glob("*_after_FlattenTileNdTo2D.py")).read_text()
    assert after.count("pl.tile.slice(bb__tile") == 2 and after.count("pl.tile.matmul(") == 2
    assert after.count("pl.tile.transpose_view(") == (2 if b_trans else 0)


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
@pytest.mark.parametrize("b_trans", [False, True])
def test_a_computed_batched_operand_runs(platform: str, b_trans: bool, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(8)
    shape = (2, 16, 48) if b_trans else (2, 48, 16)
    a = rng.standard_normal((2, 32, 48)).astype(np.float32)
    b0, b1 = (rng.standard_normal(shape).astype(np.float32) for _ in range(2))
    c = np.zeros((2, 32, 16), np.float32)
    ir.compile(_computed_operand_program(b_trans), platform=platform)(a, b0, b1, c)
    bb = b0 + b1
    np.testing.assert_allclose(c, a @ (bb.transpose(0, 2, 1) if b_trans else bb), rtol=1e-4, atol=1e-4)


def test_a_batched_result_used_other_than_by_a_store_is_a_located_error() -> None:
    @pl.program
    class Reused:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[2, 16, 16], pl.FP32], c: pl.Out[pl.Tensor[[32, 16], pl.FP32]]
              ) -> pl.Tensor[[32, 16], pl.FP32]:
            ta = pl.load(a, [0, 0, 0], [2, 16, 16], target_memory=pl.MemorySpace.Mat)
            p = pl.batch_matmul(ta, ta)
            c = pl.store(pl.move(p, target_memory=pl.MemorySpace.Vec), [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[2, 16, 16], pl.FP32], c: pl.Out[pl.Tensor[[32, 16], pl.FP32]]
                 ) -> pl.Tensor[[32, 16], pl.FP32]:
            c = self.k(a, c)
            return c

    with pytest.raises(UnsupportedFeatureError, match="used other than by pl.store"):
        run_pipeline(Reused, ctx=PassContext())


def test_a_transposed_view_of_several_matrices_is_a_located_error() -> None:
    @pl.program
    class Stack:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 32], pl.FP32], b: pl.Tensor[[2, 16, 32], pl.FP32],
              c: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
            ta = pl.move(pl.load(a, [0, 0], [16, 32], target_memory=pl.MemorySpace.Mat),
                         target_memory=pl.MemorySpace.Left)
            tb = pl.load(b, [0, 0, 0], [2, 16, 32], target_memory=pl.MemorySpace.Mat)  # a [32, 32] tile
            tbt = pl.tile.transpose_view(tb)
            c = pl.store(pl.matmul(ta, pl.move(tbt, target_memory=pl.MemorySpace.Right)), [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[16, 32], pl.FP32], b: pl.Tensor[[2, 16, 32], pl.FP32],
                 c: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
            c = self.k(a, b, c)
            return c

    with pytest.raises(UserError, match="viewed transposed only as one matrix of a packed tensor"):
        run_pipeline(Stack, ctx=PassContext())


@pl.program
class LargeBTrans:
    """c[i] = a[i] @ b[i].T where one b[i].T ([64, 512] f32, 128 KiB) exceeds L0B: AutoTileMatmulL0 tiles each
    per-matrix matmul, loading the transposed operand's windows through the transposed view."""

    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[2, 32, 64], pl.FP32], b: pl.Tensor[[2, 512, 64], pl.FP32],
          c: pl.Out[pl.Tensor[[2, 32, 512], pl.FP32]]) -> pl.Tensor[[2, 32, 512], pl.FP32]:
        c = pl.assemble(c, pl.matmul(a, b, b_trans=True), [0, 0, 0])
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[2, 32, 64], pl.FP32], b: pl.Tensor[[2, 512, 64], pl.FP32],
             c: pl.Out[pl.Tensor[[2, 32, 512], pl.FP32]]) -> pl.Tensor[[2, 32, 512], pl.FP32]:
        c = self.k(a, b, c)
        return c


def test_a_transposed_matrix_larger_than_l0_is_tiled(tmp_path: Path) -> None:
    c = ir.compile(LargeBTrans, output_dir=tmp_path / "o", skip_ptoas=True)
    after = next((Path(c.output_dir) / "passes_dump").glob("*_after_AutoTileMatmulL0.py")).read_text()
    assert "pl.range(" in after or "pl.pipeline(" in after
    assert "pl.tile.load(b__ssa_v0, [1, " in after and "pl.tile.transpose_view(b_" in after


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_a_transposed_matrix_larger_than_l0_runs(platform: str, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(9)
    a = rng.standard_normal((2, 32, 64)).astype(np.float32)
    b = rng.standard_normal((2, 512, 64)).astype(np.float32)
    c = np.zeros((2, 32, 512), np.float32)
    ir.compile(LargeBTrans, platform=platform)(a, b, c)
    np.testing.assert_allclose(c, a @ b.transpose(0, 2, 1), rtol=1e-4, atol=1e-4)
