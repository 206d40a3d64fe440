"""Reads that address the loads of a tile-carrying kernel loop gather the blocks through GM scratch;
top-level kernel reads move to the call site as scalar parameters."""

from __future__ import annotations

import pytest

import pypto.language as pl
from pypto.errors import UnsupportedFeatureError
from pypto.ir.expr import Call, GlobalVar
from pypto.ir.properties import IRProperty
from pypto.ir.stmt import AssignStmt, ForStmt, preorder
from pypto.ir.verifier import verify
from pypto.passes import get_pass
from pypto.runtime import run

FRONT = ("InlineFunctions", "UnrollLoops", "CtrlFlowTransform", "ConvertToSSA", "Simplify",
         "NormalizeStmtStructure", "FlattenCallExpr", "OutlineHierarchyScopes", "OutlineIncoreScopes",
         "GatherCarriedReads", "HoistKernelReads", "LiftReadLoops")


def _outline(prog):
    for name in FRONT:
        prog = get_pass(name)().run(prog)
    return prog


def _ops(f, op: str) -> list[Call]:
    return [s.value for s in preorder(f.body) if isinstance(s, AssignStmt) and isinstance(s.value, Call)
            and s.value.op == op]


def _kernel_calls(f) -> list[str]:
    return [s.value.op.name for s in preorder(f.body) if isinstance(s, AssignStmt) and isinstance(s.value, Call)
            and isinstance(s.value.op, GlobalVar)]


@pl.program
class _RowPicker:
    """Sums rows picked by a table into a Vec accumulator carried through the loop."""

    @pl.function(type=pl.FunctionType.InCore)
    def pick(self, a: pl.Tensor[[96, 16], pl.FP32], table: pl.Tensor[[5], pl.INT32],
             out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        acc = pl.load(a, [0, 0], [16, 16])
        for k, (acc_it,) in pl.range(1, 5, init_values=(acc,)):
            row = pl.cast(pl.read(table, k), pl.INDEX) * 16
            nxt = pl.add(acc_it, pl.load(a, [row, 0], [16, 16]))
            (acc_out,) = pl.yield_(nxt)
        out = pl.store(acc_out, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[96, 16], pl.FP32], table: pl.Tensor[[5], pl.INT32],
             out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        out = self.pick(a, table, out)
        return out


def test_a_tile_carrying_loop_loads_its_blocks_from_a_gathered_scratch() -> None:
    prog = _outline(_RowPicker)
    names = [f.name for f in prog.functions]
    assert names == ["pick", "pick_gather_a", "main"]
    pick = prog.functions["pick"]
    assert not _ops(pick, "tensor.read")
    assert [p.name for p in pick.params][-1].startswith("a_blocks")
    assert pick.params[-1].var_type.shape == (4 * 16 + 16, 16)  # 5 slots (the loop's stop) of 16 rows
    main = prog.functions["main"]
    assert _ops(main, "tensor.create") and _ops(main, "tensor.read")  # the gather's reads moved here
    assert _kernel_calls(main) == ["pick_gather_a", "pick"]


def test_gathered_row_sum_matches_torch(torch) -> None:
    g = torch.Generator().manual_seed(3)
    a, table, out = torch.randn(96, 16, generator=g), torch.tensor([9, 5, 0, 2, 4], dtype=torch.int32), torch.zeros(16, 16)
    run(_RowPicker, a, table, out)
    want = a[:16] + sum(a[16 * r:16 * r + 16] for r in table[1:].tolist())
    torch.testing.assert_close(out, want, rtol=1e-6, atol=1e-6)


@pl.program
class _ChainedOffsets:
    """Besides the gathered load, a load at an offset computed in three steps from the loop variable."""

    @pl.function(type=pl.FunctionType.InCore)
    def pick(self, a: pl.Tensor[[96, 16], pl.FP32], b: pl.Tensor[[96, 16], pl.FP32], table: pl.Tensor[[5], pl.INT32],
             out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        acc = pl.load(a, [0, 0], [16, 16])
        for k, (acc_it,) in pl.range(1, 5, init_values=(acc,)):
            row = pl.cast(pl.read(table, k), pl.INDEX) * 16
            j = k * 2
            j2 = j + 1
            j3 = j2 * 8
            nxt = pl.add(acc_it, pl.load(a, [row, 0], [16, 16]))
            (acc_out,) = pl.yield_(pl.add(nxt, pl.load(b, [j3, 0], [16, 16])))
        out = pl.store(acc_out, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[96, 16], pl.FP32], b: pl.Tensor[[96, 16], pl.FP32], table: pl.Tensor[[5], pl.INT32],
             out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        out = self.pick(a, b, table, out)
        return out


def test_address_arithmetic_the_loop_still_needs_stays_whole() -> None:
    """All three steps of ``j3`` stay (removing the unused address statements once dropped ``j``)."""
    prog = _outline(_ChainedOffsets)
    assert verify(prog, {IRProperty.UseAfterDef}) == []
    pick = prog.functions["pick"]
    kept = {s.var.name.split("__")[0] for s in preorder(pick.body) if isinstance(s, AssignStmt)}
    assert {"j", "j2", "j3"} <= kept and "row" not in kept


def test_chained_offsets_match_torch(torch) -> None:
    g = torch.Generator().manual_seed(7)
    a, b = torch.randn(96, 16, generator=g), torch.randn(96, 16, generator=g)
    table, out = torch.tensor([9, 5, 0, 2, 4], dtype=torch.int32), torch.zeros(16, 16)
    run(_ChainedOffsets, a, b, table, out)
    want = a[:16] + sum(a[16 * r:16 * r + 16] + b[16 * k + 8:16 * k + 24] for k, r in enumerate(table[1:].tolist(), 1))
    torch.testing.assert_close(out, want, rtol=1e-5, atol=1e-5)


@pl.program
class _PagedProduct:
    """A cube accumulation over table-addressed blocks of a cache, with a run-time block count."""

    @pl.function(type=pl.FunctionType.InCore)
    def product(self, p: pl.Tensor[[64, 32], pl.FP16], cache: pl.Tensor[[256, 32], pl.FP16],
                table: pl.Tensor[[4], pl.INT32], out: pl.Out[pl.Tensor[[16, 32], pl.FP32]],
                n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[16, 32], pl.FP32]:
        first = pl.read(table, n - n) * 32
        lhs = pl.move(pl.load(p, [0, 0], [16, 32], target_memory=pl.MemorySpace.Mat), target_memory=pl.MemorySpace.Left)
        rhs = pl.move(pl.load(cache, [first, 0], [32, 32], target_memory=pl.MemorySpace.Mat),
                      target_memory=pl.MemorySpace.Right)
        acc = pl.matmul(lhs, rhs)
        for j, (acc_it,) in pl.range(1, n, init_values=(acc,)):
            row = pl.read(table, j) * 32
            lj = pl.move(pl.load(p, [j * 16, 0], [16, 32], target_memory=pl.MemorySpace.Mat),
                         target_memory=pl.MemorySpace.Left)
            rj = pl.move(pl.load(cache, [row, 0], [32, 32], target_memory=pl.MemorySpace.Mat),
                         target_memory=pl.MemorySpace.Right)
            (acc_out,) = pl.yield_(pl.matmul_acc(acc_it, lj, rj))
        out = pl.store(acc_out, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, p: pl.Tensor[[64, 32], pl.FP16], cache: pl.Tensor[[256, 32], pl.FP16],
             table: pl.Tensor[[4], pl.INT32], out: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        out = self.product(p, cache, table, out, 3)
        return out


def test_a_top_level_kernel_read_becomes_a_scalar_argument() -> None:
    prog = _outline(_PagedProduct)
    product = prog.functions["product"]
    assert not _ops(product, "tensor.read")
    assert product.params[-1].name.startswith("first")  # the gathered scratch, then the hoisted read
    assert product.params[-2].var_type.shape == (4 * 32, 32)  # the table's length bounds the slots
    main = prog.functions["main"]
    assert len(_ops(main, "tensor.read")) == 2  # the gather loop's read and the hoisted first read


def test_paged_product_matches_torch(torch) -> None:
    g = torch.Generator().manual_seed(5)
    p, cache = torch.randn(64, 32, generator=g).half(), torch.randn(256, 32, generator=g).half()
    table, out = torch.tensor([6, 1, 7, 3], dtype=torch.int32), torch.zeros(16, 32)
    run(_PagedProduct, p, cache, table, out)
    want = sum(p[16 * j:16 * j + 16].float() @ cache[32 * b:32 * b + 32].float() for j, b in enumerate(table[:3].tolist()))
    torch.testing.assert_close(out, want, rtol=1e-3, atol=1e-3)


def test_a_large_block_is_copied_in_row_chunks() -> None:
    src = '''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[1024, 256], pl.FP32], table: pl.Tensor[[4], pl.INT32],
          out: pl.Out[pl.Tensor[[128, 256], pl.FP32]]) -> pl.Tensor[[128, 256], pl.FP32]:
        acc = pl.load(a, [0, 0], [128, 256])
        for k, (acc_it,) in pl.range(0, 4, init_values=(acc,)):
            row = pl.cast(pl.read(table, k), pl.INDEX)
            (acc_out,) = pl.yield_(pl.add(acc_it, pl.load(a, [row, 0], [128, 256])))
        out = pl.store(acc_out, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[1024, 256], pl.FP32], table: pl.Tensor[[4], pl.INT32],
             out: pl.Out[pl.Tensor[[128, 256], pl.FP32]]) -> pl.Tensor[[128, 256], pl.FP32]:
        out = self.k(a, table, out)
        return out
'''
    gather = _outline(pl.parse(src)).functions["k_gather_a"]
    loads = _ops(gather, "tile.load")
    assert [tuple(d.value for d in c.args[2].elements) for c in loads] == [(64, 256), (64, 256)]  # 128 KiB in two


@pytest.mark.parametrize(("body", "where"), [
    # the read feeds arithmetic on the tile, not an address, and not by a cast and constants alone (those
    # run on its [1, 1] tile: test_decode_worklist)
    ("nxt = pl.adds(acc_it, pl.cast(pl.read(table, k), pl.FP32) * pl.cast(pl.read(table, k), pl.FP32))", ":11:"),
    # no static bound on the loop variable: a stop unbounded at the call site, no read at exactly the loop variable
    ("nxt = pl.add(acc_it, pl.load(a, [pl.cast(pl.read(table, k + 1), pl.INDEX) * 16, 0], [16, 16]))", ":11:"),
])
def test_reads_that_cannot_be_gathered_keep_the_located_error(body: str, where: str) -> None:
    src = f'''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def pick(self, a: pl.Tensor[[96, 16], pl.FP32], table: pl.Tensor[[6], pl.INT32],
             out: pl.Out[pl.Tensor[[16, 16], pl.FP32]], n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[16, 16], pl.FP32]:
        acc = pl.load(a, [0, 0], [16, 16])
        for k, (acc_it,) in pl.range(1, n, init_values=(acc,)):
            {body}
            (acc_out,) = pl.yield_(nxt)
        out = pl.store(acc_out, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[96, 16], pl.FP32], table: pl.Tensor[[6], pl.INT32],
             out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        n = pl.cast(pl.read(table, 5), pl.INDEX)  # no static bound
        out = self.pick(a, table, out, n)
        return out
'''
    with pytest.raises(UnsupportedFeatureError) as err:
        _outline(pl.parse(src))
    msg = str(err.value)
    assert where in msg and "carries 'acc_it'" in msg, msg


def test_a_loop_with_no_carried_tile_still_runs_one_task_per_iteration() -> None:
    prog = _outline(_RowPicker)  # the gather kernel itself is such a loop: lifted into the orchestration
    gather = prog.functions["pick_gather_a"]
    assert not any(isinstance(s, ForStmt) for s in preorder(gather.body)) and not _ops(gather, "tensor.read")
    main = prog.functions["main"]
    assert any(isinstance(s, ForStmt) for s in preorder(main.body))


def test_the_torch_rendering_reads_at_a_scalar_index_before_and_after_the_rewrite(torch) -> None:
    from pypto.debug import torch_codegen

    g = torch.Generator().manual_seed(3)
    a, table = torch.randn(96, 16, generator=g), torch.tensor([9, 5, 0, 2, 4], dtype=torch.int32)
    want = a[:16] + sum(a[16 * r:16 * r + 16] for r in table[1:].tolist())
    for prog in (_RowPicker, _outline(_RowPicker)):  # pl.read(table, k): an index, not a list
        ns: dict = {}
        exec(torch_codegen(prog), ns)  # noqa: S102
        out = torch.zeros(16, 16)
        ns["main"](a, table, out)
        torch.testing.assert_close(out, want, rtol=1e-6, atol=1e-6)
