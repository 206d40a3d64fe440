"""pl.gather_row / pl.paged_gather into a pl.create_l1 accumulator become GM copies run before the kernel."""

from __future__ import annotations

import pytest

import pypto.language as pl
from pypto.errors import UnsupportedFeatureError, UserError
from pypto.ir.expr import Call
from pypto.ir.stmt import AssignStmt, ForStmt, InCoreScopeStmt, preorder
from pypto.passes import get_pass
from pypto.runtime import run

BS, PAGES, IDX = 8, 8, 6  # paged pool of PAGES blocks of BS rows, IDX gathered rows


@pl.program
class _PagedVec:
    """Rows 8..23 of a paged pool picked through a [1, n] index tensor into a Vec operand, then doubled."""

    @pl.function(type=pl.FunctionType.Opaque)
    def main(self, src: pl.Tensor[[BS * PAGES, 32], pl.FP32], idx: pl.Tensor[[1, IDX], pl.INT32],
             bt: pl.Tensor[[PAGES], pl.INT32],
             out: pl.Out[pl.Tensor[[IDX, 16], pl.FP32]]) -> pl.Tensor[[IDX, 16], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            g = pl.paged_gather(src, idx, bt, block_size=BS, size=16, max_indices=IDX, space=pl.Mem.Vec,
                                col_off=8)
            out = pl.assemble(out, pl.muls(g, 2.0), [0, 0])
        return out


@pl.program
class _PagedMat:
    """A paged gather consumed as the right matmul operand (loaded into Mat)."""

    @pl.function(type=pl.FunctionType.Opaque)
    def main(self, src: pl.Tensor[[64, 64], pl.FP16], idx: pl.Tensor[[16], pl.INT32],
             bt: pl.Tensor[[4], pl.INT32], a: pl.Tensor[[16, 16], pl.FP16],
             out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            kv = pl.paged_gather(src, idx, bt, 16, 64, 16, is_b_matrix=True)
            out = pl.assemble(out, pl.matmul(a, kv, out_dtype=pl.FP32), [0, 0])
        return out


@pl.program
class _RowRuns:
    """A full window, then a runtime number of rows at a runtime slot, then Vec work on the result."""

    @pl.function(type=pl.FunctionType.Opaque)
    def main(self, src: pl.Tensor[[64, 16], pl.FP32], n: pl.Tensor[[2], pl.INT32],
             out: pl.Out[pl.Tensor[[32, 16], pl.FP32]]) -> pl.Tensor[[32, 16], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            rows = pl.cast(pl.read(n, [0]), pl.INDEX)
            at = pl.cast(pl.read(n, [1]), pl.INDEX)
            kv = pl.create_l1([32, 16], pl.FP32)
            kv = pl.gather_row(kv, src, [0, 0], [32, 0], [32, 16])
            kv = pl.gather_row(kv, src, [at, 0], [0, 0], [32, 16], valid_shape=[rows, 16])
            out = pl.assemble(out, pl.adds(kv, 1.0), [0, 0])
        return out


def _pool(torch, rows: int, cols: int, dtype):
    return torch.arange(rows, dtype=torch.float32).reshape(rows, 1).expand(rows, cols).to(dtype).contiguous()


def _paged(torch, src, idx, bt, bs: int, size: int, col: int = 0):
    rows = [src[int(bt[li // bs]) * bs + li % bs, col:col + size] for li in idx.reshape(-1).tolist()]
    return torch.stack(rows)


def test_paged_gather_into_vec_matches_torch(torch) -> None:
    src = _pool(torch, BS * PAGES, 32, torch.float32) + torch.arange(32.0) / 64
    idx = torch.tensor([[3, 17, 9, 62, 40, 25]], dtype=torch.int32)
    bt = torch.tensor([5, 0, 7, 2, 6, 1, 3, 4], dtype=torch.int32)
    out = torch.zeros(IDX, 16)
    run(_PagedVec, src, idx, bt, out)
    torch.testing.assert_close(out, 2 * _paged(torch, src, idx, bt, BS, 16, 8))


def test_paged_gather_as_matmul_operand_matches_torch(torch) -> None:
    src = _pool(torch, 64, 64, torch.float16)
    idx = torch.tensor([(5 * i + 2) % 64 for i in range(16)], dtype=torch.int32)
    bt = torch.tensor([2, 3, 0, 1], dtype=torch.int32)
    a = torch.eye(16, dtype=torch.float16).flip(0)  # reverses the gathered rows
    out = torch.zeros(16, 64)
    run(_PagedMat, src, idx, bt, a, out)
    torch.testing.assert_close(out, _paged(torch, src, idx, bt, 16, 64).flip(0).float())


@pytest.mark.parametrize(("rows", "at"), [(1, 0), (13, 5), (32, 0), (7, 25)])
def test_runtime_row_window_only_moves_its_rows(torch, rows: int, at: int) -> None:
    src = _pool(torch, 64, 16, torch.float32)
    out = torch.zeros(32, 16)
    run(_RowRuns, src, torch.tensor([rows, at], dtype=torch.int32), out)
    want = src[32:64].clone()
    want[at:at + rows] = src[:rows]
    torch.testing.assert_close(out, want + 1)


def _gathers(prog) -> list[Call]:
    return [s.value for f in prog.functions for s in preorder(f.body) if isinstance(s, AssignStmt)
            and isinstance(s.value, Call) and str(s.value.op).endswith("gather")]


def test_paged_gather_becomes_an_orchestration_loop_of_row_copies() -> None:
    prog = get_pass("HoistScopeGathers")().run(get_pass("InlineFunctions")().run(_PagedVec))
    assert not _gathers(prog)
    main = prog.functions["main"]
    loops = [s for s in preorder(main.body) if isinstance(s, ForStmt)]
    assert len(loops) == 1 and loops[0].stop.value == IDX
    reads = [s for s in preorder(loops[0].body) if isinstance(s, AssignStmt) and "tensor.read" in repr(s.value)]
    assert len(reads) == 2  # the logical index, then the page (inside the row's address)
    scopes = [s for s in preorder(main.body) if isinstance(s, InCoreScopeStmt)]
    assert len(scopes) == 2  # the per-row copy and the kernel that uses the result


def test_gathers_and_their_scalars_move_in_front_of_the_kernel() -> None:
    prog = get_pass("HoistScopeGathers")().run(_RowRuns)
    top = list(prog.functions["main"].body.stmts)
    assert [type(s).__name__ for s in top] == ["AssignStmt"] * 3 + ["InCoreScopeStmt"] * 3 + ["ReturnStmt"]


def _located(exc: pytest.ExceptionInfo, line_text: str) -> None:
    msg = str(exc.value)
    assert "ptoas 0.1.1" in msg and "hint:" in msg and "test_hoist_scope_gathers.py:" in msg
    assert line_text in msg


def test_gather_row_after_tile_work_is_a_located_refusal() -> None:
    @pl.program
    class Late:
        @pl.function(type=pl.FunctionType.Opaque)
        def main(self, src: pl.Tensor[[64, 16], pl.FP32],
                 out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
            with pl.at(level=pl.Level.CORE_GROUP):
                kv = pl.create_l1([16, 16], pl.FP32)
                for r in pl.range(16):
                    kv = pl.gather_row(kv, src, [r, 0], [r * 2, 0], [1, 16])
                out = pl.assemble(out, kv, [0, 0])
            return out

    with pytest.raises(UnsupportedFeatureError) as exc:
        get_pass("HoistScopeGathers")().run(Late)
    _located(exc, "kv = pl.gather_row(kv, src, [r, 0], [r * 2, 0], [1, 16])")
    assert exc.value.construct == "pl.gather_row"


def test_transposed_gathers_are_refused() -> None:
    @pl.program
    class Trans:
        @pl.function(type=pl.FunctionType.Opaque)
        def main(self, src: pl.Tensor[[64, 16], pl.FP16], idx: pl.Tensor[[16], pl.INT32],
                 bt: pl.Tensor[[4], pl.INT32],
                 out: pl.Out[pl.Tensor[[16, 16], pl.FP16]]) -> pl.Tensor[[16, 16], pl.FP16]:
            with pl.at(level=pl.Level.CORE_GROUP):
                g = pl.paged_gather(src, idx, bt, 16, 16, 16, is_trans=True)
                out = pl.assemble(out, g, [0, 0])
            return out

    with pytest.raises(UnsupportedFeatureError, match="is_trans=True") as exc:
        get_pass("HoistScopeGathers")().run(Trans)
    _located(exc, "pl.paged_gather(src, idx, bt, 16, 16, 16, is_trans=True)")


def test_type_rules_name_the_bad_operand() -> None:
    with pytest.raises(UserError, match="indices must hold INT32 or INT64"):
        @pl.program
        class BadIdx:
            @pl.function(type=pl.FunctionType.Opaque)
            def main(self, src: pl.Tensor[[64, 16], pl.FP16], idx: pl.Tensor[[16], pl.FP32],
                     bt: pl.Tensor[[4], pl.INT32]) -> pl.Tensor[[16, 16], pl.FP16]:
                with pl.at(level=pl.Level.CORE_GROUP):
                    g = pl.paged_gather(src, idx, bt, 16, 16, 16)
                return g
    with pytest.raises(UserError, match="shapes must be positive compile-time constants"):
        @pl.program
        class DynShape:
            @pl.function(type=pl.FunctionType.Opaque)
            def main(self, src: pl.Tensor[[64, 16], pl.FP16], n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[16, 16], pl.FP16]:
                with pl.at(level=pl.Level.CORE_GROUP):
                    kv = pl.create_l1([16, 16], pl.FP16)
                    kv = pl.gather_row(kv, src, [0, 0], [0, 0], [n, 16])
                return kv


def test_tile_gather_row_stays_a_refusal() -> None:
    with pytest.raises(UnsupportedFeatureError, match="pl.tile.gather_row is not supported"):
        pl.tile.gather_row()


def test_torch_rendering_of_the_gathers_matches(torch) -> None:
    from pypto.debug import torch_codegen

    src = _pool(torch, 64, 16, torch.float32)
    ns: dict = {}
    exec(torch_codegen(_RowRuns), ns)  # noqa: S102
    out = torch.zeros(32, 16)
    ns["main"](src, torch.tensor([7, 25], dtype=torch.int32), out)
    want = src[32:64].clone()
    want[25:32] = src[:7]
    torch.testing.assert_close(out, want + 1)
    pool = _pool(torch, 64, 64, torch.float16)
    idx, bt = torch.tensor([(5 * i + 2) % 64 for i in range(16)], dtype=torch.int32), torch.tensor([2, 3, 0, 1], dtype=torch.int32)
    ns = {}
    exec(torch_codegen(_PagedMat), ns)  # noqa: S102
    out = torch.zeros(16, 64)
    ns["main"](pool, idx, bt, torch.eye(16, dtype=torch.float16), out)
    torch.testing.assert_close(out, _paged(torch, pool, idx, bt, 16, 64).float())
