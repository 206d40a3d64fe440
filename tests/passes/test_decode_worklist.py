"""The shapes of a paged-attention decode layer's kernels (a work list built from sequence lengths, an
SPMD loop over it by a constant stride or by blocks of iterations, a flag read into a carried tile)."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import UnsupportedFeatureError
from pypto.ir.stmt import AssignStmt, ForStmt, preorder
from pypto.passes import get_pass
from pypto.runtime import RunConfig, run

FRONT = ("InlineFunctions", "UnrollLoops", "CtrlFlowTransform", "ConvertToSSA", "Simplify",
         "NormalizeStmtStructure", "FlattenCallExpr", "OutlineHierarchyScopes", "OutlineIncoreScopes",
         "GatherCarriedReads", "HoistKernelReads", "LiftReadLoops")
PLATFORMS = ["a2a3sim", "a5sim"]


def _front(prog, upto: str = "LiftReadLoops"):
    for name in FRONT[:FRONT.index(upto) + 1]:
        prog = get_pass(name)().run(prog)
    return prog


def _reads(f) -> list:
    return [s for s in preorder(f.body) if isinstance(s, AssignStmt) and getattr(s.value, "op", None) == "tensor.read"]


@pl.program
class _WorkList:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, lens: pl.Tensor[[4], pl.INT32], table: pl.Out[pl.Tensor[[64], pl.INT32]],
             total: pl.Out[pl.Tensor[[1], pl.INT32]]) -> tuple[pl.Tensor[[64], pl.INT32], pl.Tensor[[1], pl.INT32]]:
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="build"):
            cursor = pl.read(lens, [0]) * 0
            for b in pl.range(4):
                n = (pl.read(lens, [b]) + 3) // 4
                for g in pl.unroll(2):
                    for w in pl.range(n):
                        pl.tensor.write(table, [cursor + w], pl.cast((b * 2 + g) * 100 + w, target_type=pl.INT32))
                    cursor = cursor + n
            pl.tensor.write(total, [0], cursor)
        return table, total


def _work_list(lens: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    table, cursor = np.zeros(64, np.int32), 0
    for b, length in enumerate(lens.tolist()):
        n = (length + 3) // 4
        for g in range(2):
            table[cursor:cursor + n] = [(b * 2 + g) * 100 + w for w in range(n)]
            cursor += n
    return table, np.array([cursor], np.int32)


def test_an_unrolled_body_reads_the_previous_copys_value_of_a_reassigned_name() -> None:
    prog = _front(_WorkList, "ConvertToSSA")
    loop = next(s for s in preorder(prog.functions[0].body) if isinstance(s, ForStmt))
    assert [ia.name for ia in loop.iter_args] == ["cursor__iter_v0"]  # carried by the pl.range loop
    text = prog.as_python()
    assert "cursor__ssa_v1: pl.Scalar[pl.INT32] = cursor__iter_v0 + n__ssa_v0" in text
    assert "[cursor__ssa_v1 + w__idx_v1]" in text  # the second copy writes after the first copy's entries


def test_a_kernel_of_scalar_work_only_runs_in_the_orchestration() -> None:
    prog = _front(_WorkList)
    assert not [f for f in prog.functions if f.is_incore]
    assert _reads(prog.functions[0])


@pytest.mark.parametrize("platform", PLATFORMS)
def test_the_work_list_matches_numpy(platform: str) -> None:
    lens = np.array([5, 1, 12, 8], np.int32)
    table, total = np.full(64, -1, np.int32), np.zeros(1, np.int32)
    run(_WorkList, lens, table, total, config=RunConfig(platform=platform))
    want_table, want_total = _work_list(lens)
    np.testing.assert_array_equal(total, want_total)
    np.testing.assert_array_equal(table[:want_total[0]], want_table[:want_total[0]])


STRIDED = '''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def pick(self, a: pl.Tensor[[64, 16], pl.FP32], idx: pl.Tensor[[4], pl.INT32],
             out: pl.Out[pl.Tensor[[64, 16], pl.FP32]], n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[64, 16], pl.FP32]:
        blk = pl.tile.get_block_idx()
        for i in pl.range(blk, n, 2):  # a constant stride: the launch's block count
            r = pl.cast(pl.read(idx, [i]), pl.INDEX)
            out = pl.store(pl.muls(pl.load(a, [r * 16, 0], [16, 16]), 2.0), [i * 16, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[64, 16], pl.FP32], idx: pl.Tensor[[4], pl.INT32],
             out: pl.Out[pl.Tensor[[64, 16], pl.FP32]]) -> pl.Tensor[[64, 16], pl.FP32]:
        with pl.spmd(BLOCKS):
            out = self.pick(a, idx, out, 4)
        return out
'''

BLOCKED = STRIDED.replace('''        for i in pl.range(blk, n, 2):  # a constant stride: the launch's block count
            r''', '''        for it in pl.range(2):  # each block takes two consecutive items
            i = blk * 2 + it
            r''')


def _gathered(a: np.ndarray, idx: np.ndarray) -> np.ndarray:
    return np.concatenate([a[16 * r:16 * r + 16] for r in idx.tolist()]) * 2


@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize("text", [STRIDED, BLOCKED], ids=["stride", "blocks"])
def test_an_spmd_loop_over_a_work_list_runs_one_task_per_item(platform: str, text: str) -> None:
    prog = pl.parse(text.replace("BLOCKS", "2"))
    kernel = next(f for f in _front(prog).functions if f.name == "pick")
    assert not _reads(kernel) and not any(isinstance(s, ForStmt) for s in preorder(kernel.body))
    rng = np.random.default_rng(5)
    a, idx, out = rng.standard_normal((64, 16)).astype(np.float32), np.array([3, 0, 2, 1], np.int32), np.zeros((64, 16), np.float32)
    run(prog, a, idx, out, config=RunConfig(platform=platform))
    np.testing.assert_allclose(out, _gathered(a, idx), rtol=0, atol=0)


def test_a_launch_of_another_block_count_than_the_stride_keeps_the_read_error() -> None:
    prog = _front(pl.parse(STRIDED.replace("BLOCKS", "3")))
    assert len(next(f for f in prog.functions if f.name == "pick").params) == 4  # left alone
    with pytest.raises(UnsupportedFeatureError, match=r":11:.*this read is in neither place"):
        get_pass("ConvertTensorToTileOps")().run(prog)


FLAGGED = '''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[64, 32], pl.FP32], flags: pl.Tensor[[4], pl.INT32],
             out: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            acc = pl.slice(x, [16, 32], [0, 0])
            for i in pl.range(1, 4):  # carries a tile; the flag's value goes through a cast and a constant
                f = pl.cast(pl.read(flags, [i]), target_type=pl.FP32)
                acc = pl.add(acc, pl.mul(pl.slice(x, [16, 32], [i * 16, 0]), f * 0.5))
            out = pl.assemble(out, acc, [0, 0])
        return out
'''


@pytest.mark.parametrize("platform", PLATFORMS)
def test_a_flag_read_in_a_tile_carrying_loop_is_a_one_element_tile(platform: str) -> None:
    prog = _front(pl.parse(FLAGGED), "GatherCarriedReads")
    kernel = next(f for f in prog.functions if f.is_incore)
    ops = [getattr(s.value, "op", None) for s in preorder(kernel.body) if isinstance(s, AssignStmt)]
    assert "tensor.read" not in ops and {"tensor.cast", "tensor.muls", "tensor.row_expand_mul"} <= set(ops)
    rng = np.random.default_rng(6)
    x, flags, out = rng.standard_normal((64, 32)).astype(np.float32), np.array([9, 3, -2, 5], np.int32), np.zeros((16, 32), np.float32)
    run(pl.parse(FLAGGED), x, flags, out, config=RunConfig(platform=platform))
    want = x[:16] + sum(x[16 * i:16 * i + 16] * (flags[i] * 0.5) for i in range(1, 4))
    np.testing.assert_allclose(out, want, rtol=1e-6, atol=1e-6)


def test_a_flag_whose_value_takes_another_operand_keeps_the_located_error() -> None:
    text = FLAGGED.replace("f * 0.5", "f * f")  # not a constant: no tile form
    with pytest.raises(UnsupportedFeatureError, match=r"scalar read of a tensor inside a (kernel|loop)") as exc:
        _front(pl.parse(text))
        get_pass("ConvertTensorToTileOps")().run(_front(pl.parse(text)))
    assert ":12:" in str(exc.value)


def test_an_spmd_launch_of_scalar_work_keeps_its_kernel_and_the_located_error() -> None:
    text = '''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, lens: pl.Tensor[[4], pl.INT32], table: pl.Out[pl.Tensor[[64], pl.INT32]]) -> pl.Tensor[[64], pl.INT32]:
        with pl.spmd(2):  # each block builds its own list: not the orchestration's to do once
            blk = pl.tile.get_block_idx()
            cursor = pl.read(lens, [0]) * 0
            for b in pl.range(4):
                n = pl.read(lens, [b])
                pl.tensor.write(table, [blk * 32 + cursor], n)
                cursor = cursor + n
        return table
'''
    with pytest.raises(UnsupportedFeatureError, match=r":12:.*carries 'cursor'"):
        _front(pl.parse(text))
