"""``pl.tile.transpose_view``: ResolveBackendOpLayouts turns it into a load through the transposed GM view."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.errors import UserError
from pypto.ir.expr import Call
from pypto.ir.stmt import AssignStmt, preorder

KV, D, Q, BLK = 256, 128, 16, 64


def _program(dtype):
    @pl.program
    class ScoresKT:
        """s[:, i*BLK:(i+1)*BLK] = q @ k[i*BLK:(i+1)*BLK, :].T for every block i."""

        @pl.function(type=pl.FunctionType.InCore)
        def scores(self, q: pl.Tensor[[Q, D], dtype], k: pl.Tensor[[KV, D], dtype],
                   s: pl.Out[pl.Tensor[[Q, KV], pl.FP32]]) -> pl.Tensor[[Q, KV], pl.FP32]:
            q_l0a = pl.move(pl.load(q, [0, 0], [Q, D], target_memory=pl.MemorySpace.Mat),
                            target_memory=pl.MemorySpace.Left)
            for i in pl.range(KV // BLK):
                k_nat = pl.load(k, [i * BLK, 0], [BLK, D], target_memory=pl.MemorySpace.Mat)
                k_t = pl.tile.transpose_view(k_nat)
                k_l0b = pl.move(k_t, target_memory=pl.MemorySpace.Right)
                s = pl.store(pl.matmul(q_l0a, k_l0b), [0, i * BLK], s)
            return s

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, q: pl.Tensor[[Q, D], dtype], k: pl.Tensor[[KV, D], dtype],
                 s: pl.Out[pl.Tensor[[Q, KV], pl.FP32]]) -> pl.Tensor[[Q, KV], pl.FP32]:
            s = self.scores(q, k, s)
            return s

    return ScoresKT


def _loads(func):
    return [s for s in preorder(func.body) if isinstance(s, AssignStmt) and isinstance(s.value, Call)
            and s.value.op in ("tile.load", "tensor.transpose", "tile.transpose_view")]


def test_the_view_becomes_a_load_of_the_transposed_tensor(tmp_path: Path) -> None:
    c = ir.compile(_program(pl.FP32), output_dir=tmp_path / "o", skip_ptoas=True)
    dump = Path(c.output_dir) / "passes_dump"
    after = next(dump.glob("*_after_ResolveBackendOpLayouts.py")).read_text()
    assert "transpose_view" not in after
    assert "pl.TensorView(stride=[1, 128], layout=pl.TensorLayout.DN)] = pl.tensor.transpose(k__ssa_v0, 0, 1)" in after
    assert "pl.tile.load(k_t, [0, i__idx_v0 * 64], [128, 64], [128, 64], target_memory=pl.Mem.Mat)" in after
    assert "pl.tile.load(k__ssa_v0" not in after  # the natural load fed only the view: gone
    pto = next((Path(c.output_dir) / "kernels").rglob("scores.pto")).read_text()
    assert "strides = [%c1, %c128] : !pto.tensor_view<2xf32>" in pto


def test_a_natural_load_used_elsewhere_is_kept() -> None:
    @pl.program
    class Both:
        @pl.function(type=pl.FunctionType.InCore)
        def k2(self, a: pl.Tensor[[64, 64], pl.FP16], o: pl.Out[pl.Tensor[[64, 64], pl.FP32]],
               o2: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> tuple[pl.Tensor[[64, 64], pl.FP32],
                                                                   pl.Tensor[[64, 64], pl.FP32]]:
            a_nat = pl.load(a, [0, 0], [64, 64], target_memory=pl.MemorySpace.Mat)
            a_t = pl.tile.transpose_view(a_nat)
            left = pl.move(a_nat, target_memory=pl.MemorySpace.Left)
            o = pl.store(pl.matmul(left, pl.move(a_t, target_memory=pl.MemorySpace.Right)), [0, 0], o)
            o2 = pl.store(pl.matmul(left, pl.move(a_nat, target_memory=pl.MemorySpace.Right)), [0, 0], o2)
            return o, o2

    from pypto.passes.context import PassContext
    from pypto.passes.manager import run_pipeline

    kernel = run_pipeline(Both, ctx=PassContext()).program["k2"]
    ops = [s.value.op for s in _loads(kernel)]
    assert ops == ["tile.load", "tensor.transpose", "tile.load"]


@pytest.mark.sim
@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
@pytest.mark.parametrize("dtype", ["f32", "f16"])
def test_q_times_k_transposed_matches_numpy(tmp_path: Path, platform: str, dtype: str) -> None:
    npdt = np.float32 if dtype == "f32" else np.float16
    c = ir.compile(_program(pl.FP32 if dtype == "f32" else pl.FP16), output_dir=tmp_path / "o", platform=platform,
                   dump_passes=False)
    rng = np.random.default_rng(11)
    q = rng.standard_normal((Q, D)).astype(npdt)
    k = rng.standard_normal((KV, D)).astype(npdt)
    s = np.zeros((Q, KV), np.float32)
    c(q, k, s)
    np.testing.assert_allclose(s, q.astype(np.float32) @ k.astype(np.float32).T, rtol=1e-4, atol=1e-4)


_BAD = {
    "not_a_load": ("        t = pl.tile.transpose_view(pl.move(x_l1, target_memory=pl.MemorySpace.Left))",
                   "its operand must be a tile loaded straight from a tensor"),
    "vec_load": ("        t = pl.tile.transpose_view(pl.load(x, [0, 0], [32, 32]))",
                 "its operand must be loaded into Mat"),
}


@pytest.mark.parametrize("case", sorted(_BAD))
def test_views_it_cannot_fold_are_located_user_errors(tmp_path: Path, case: str) -> None:
    line, message = _BAD[case]
    src = f"""import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[32, 32], pl.FP16], o: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
        x_l1 = pl.load(x, [0, 0], [32, 32], target_memory=pl.MemorySpace.Mat)
{line}
        o = pl.store(pl.matmul(pl.move(x_l1, target_memory=pl.MemorySpace.Left),
                               pl.move(x_l1, target_memory=pl.MemorySpace.Right)), [0, 0], o)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[32, 32], pl.FP16], o: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
        o = self.k(x, o)
        return o
"""
    with pytest.raises(UserError, match=message) as ei:
        ir.compile(pl.parse(src), output_dir=tmp_path / "o", skip_ptoas=True)
    assert ei.value.span is not None and ei.value.span.line == 8
    assert "ptoas 0.1.1" in ei.value.message and ei.value.hint


@pl.program
class SumTransposed:
    """c = a @ (b0 + b1).T: the transposed operand is computed on the vector core, so it has no GM view."""

    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[16, 64], pl.FP32], b0: pl.Tensor[[32, 64], pl.FP32], b1: pl.Tensor[[32, 64], pl.FP32],
          c: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        bt = pl.add(b0, b1)
        c = pl.assemble(c, pl.matmul(a, bt, b_trans=True), [0, 0])
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 64], pl.FP32], b0: pl.Tensor[[32, 64], pl.FP32], b1: pl.Tensor[[32, 64], pl.FP32],
             c: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        c = self.k(a, b0, b1, c)
        return c


def test_a_view_of_a_computed_vector_tile_is_a_vector_transpose(tmp_path: Path) -> None:
    c = ir.compile(SumTransposed, output_dir=tmp_path / "o", skip_ptoas=True)
    after = next((Path(c.output_dir) / "passes_dump").glob("*_after_ResolveBackendOpLayouts.py")).read_text()
    assert "transpose_view" not in after and "pl.tile.transpose(bt__tile, 0, 1)" in after


@pytest.mark.sim
@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_a_computed_transposed_operand_matches_numpy(tmp_path: Path, platform: str) -> None:
    rng = np.random.default_rng(12)
    a = rng.standard_normal((16, 64)).astype(np.float32)
    b0, b1 = (rng.standard_normal((32, 64)).astype(np.float32) for _ in range(2))
    c = np.zeros((16, 32), np.float32)
    ir.compile(SumTransposed, output_dir=tmp_path / "o", platform=platform, dump_passes=False)(a, b0, b1, c)
    np.testing.assert_allclose(c, a @ (b0 + b1).T, rtol=1e-4, atol=1e-4)
