"""Kernel loops whose body reads tensor scalars become orchestration loops of kernel tasks."""

from __future__ import annotations

import pytest

import pypto.language as pl
from pypto.errors import UnsupportedFeatureError
from pypto.ir.expr import Call, GlobalVar
from pypto.ir.stmt import AssignStmt, ForStmt, preorder
from pypto.passes import get_pass
from pypto.runtime import run

FRONT = ("InlineFunctions", "UnrollLoops", "CtrlFlowTransform", "ConvertToSSA", "Simplify",
         "NormalizeStmtStructure", "FlattenCallExpr", "OutlineHierarchyScopes", "OutlineIncoreScopes",
         "GatherCarriedReads", "HoistKernelReads", "LiftReadLoops")


def _outline(prog):
    for name in FRONT:
        prog = get_pass(name)().run(prog)
    return prog


@pl.program
class _Gather:
    @pl.function(type=pl.FunctionType.InCore)
    def gather(self, src: pl.Tensor[[64, 32], pl.FP32], idx: pl.Tensor[[4], pl.INT32],
               out: pl.Out[pl.Tensor[[64, 32], pl.FP32]], n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[64, 32], pl.FP32]:
        for b in pl.range(n):
            row = pl.cast(pl.read(idx, b), pl.INDEX)
            t = pl.load(src, [row * 16, 0], [16, 32])
            out = pl.store(pl.add(t, t), [b * 16, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, src: pl.Tensor[[64, 32], pl.FP32], idx: pl.Tensor[[4], pl.INT32],
             out: pl.Out[pl.Tensor[[64, 32], pl.FP32]]) -> pl.Tensor[[64, 32], pl.FP32]:
        out = self.gather(src, idx, out, 4)
        return out


def _reads(f) -> list:
    return [s for s in preorder(f.body) if isinstance(s, AssignStmt) and isinstance(s.value, Call)
            and s.value.op == "tensor.read"]


def test_the_loop_and_its_reads_move_into_the_orchestration() -> None:
    prog = _outline(_Gather)
    kernel = next(f for f in prog.functions if f.name == "gather")
    main = next(f for f in prog.functions if f.name == "main")
    assert not _reads(kernel) and not any(isinstance(s, ForStmt) for s in preorder(kernel.body))
    assert [p.name for p in kernel.params][-2:] == ["b__idx_v0", "row__ssa_v0"]
    loop = next(s for s in preorder(main.body) if isinstance(s, ForStmt))
    assert _reads(main) and any(isinstance(s, AssignStmt) and isinstance(s.value, Call)
                                and isinstance(s.value.op, GlobalVar) for s in preorder(loop.body))


def test_lifted_gather_matches_torch(torch) -> None:
    g = torch.Generator().manual_seed(1)
    src, idx, out = torch.randn(64, 32, generator=g), torch.tensor([3, 0, 2, 1], dtype=torch.int32), torch.zeros(64, 32)
    run(_Gather, src, idx, out)
    want = torch.cat([src[16 * i:16 * i + 16] for i in idx.tolist()]) * 2
    torch.testing.assert_close(out, want, rtol=0, atol=0)


@pl.program
class _TwoOutputs:
    @pl.function(type=pl.FunctionType.InCore)
    def split(self, src: pl.Tensor[[32, 16], pl.FP32], lens: pl.Tensor[[2], pl.INT32],
              lo: pl.Out[pl.Tensor[[32, 16], pl.FP32]], hi: pl.Out[pl.Tensor[[32, 16], pl.FP32]],
              n: pl.Scalar[pl.INT64], base: pl.Scalar[pl.INT64],
              ) -> tuple[pl.Tensor[[32, 16], pl.FP32], pl.Tensor[[32, 16], pl.FP32]]:
        for b in pl.range(n):
            scale = pl.read(lens, [b])
            shift = pl.cast(scale - base, pl.FP32)  # scalar arithmetic on the read goes along with it
            t = pl.load(src, [b * 16, 0], [16, 16])
            lo_new = pl.store(pl.adds(t, shift), [b * 16, 0], lo)
            hi_new = pl.store(pl.muls(t, 2.0), [b * 16, 0], hi)
        return lo_new, hi_new

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, src: pl.Tensor[[32, 16], pl.FP32], lens: pl.Tensor[[2], pl.INT32],
             lo: pl.Out[pl.Tensor[[32, 16], pl.FP32]], hi: pl.Out[pl.Tensor[[32, 16], pl.FP32]],
             ) -> tuple[pl.Tensor[[32, 16], pl.FP32], pl.Tensor[[32, 16], pl.FP32]]:
        lo, hi = self.split(src, lens, lo, hi, 2, 1)
        return lo, hi


def test_a_kernel_of_two_outputs_stored_without_rebinding_runs_per_iteration(torch) -> None:
    prog = _outline(_TwoOutputs)
    assert not _reads(next(f for f in prog.functions if f.name == "split"))
    g = torch.Generator().manual_seed(2)
    src, lens = torch.randn(32, 16, generator=g), torch.tensor([5, 9], dtype=torch.int32)
    lo, hi = torch.zeros(32, 16), torch.zeros(32, 16)
    run(_TwoOutputs, src, lens, lo, hi)
    shift = torch.tensor([4.0] * 16 + [8.0] * 16).reshape(32, 1)
    torch.testing.assert_close(lo, src + shift, rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(hi, src * 2, rtol=1e-6, atol=1e-6)


def test_a_loop_carrying_a_tile_keeps_a_located_error() -> None:
    src = '''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def acc(self, a: pl.Tensor[[64, 16], pl.FP32], idx: pl.Tensor[[4], pl.INT32],
            out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        s = pl.load(a, [0, 0], [16, 16])
        for i, (s_iter,) in pl.range(1, 4, init_values=(s,)):
            r = pl.cast(pl.read(idx, i), pl.FP32)  # not a load address: it cannot be gathered
            s_next = pl.adds(s_iter, r * r)  # nor a value a [1, 1] tile can carry (not a constant)
            (s_out,) = pl.yield_(s_next)
        out = pl.store(s_out, [0, 0], out)
        return out
'''
    with pytest.raises(UnsupportedFeatureError) as err:
        _outline(pl.parse(src))
    msg = str(err.value)
    assert ":11:" in msg and "carries 's_iter'" in msg and "carry the value through a tensor" in msg


@pl.program
class _Guarded:
    @pl.function(type=pl.FunctionType.InCore)
    def pick(self, a: pl.Tensor[[64, 16], pl.FP32], idx: pl.Tensor[[4], pl.INT32],
             out: pl.Out[pl.Tensor[[64, 16], pl.FP32]], n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[64, 16], pl.FP32]:
        blk = pl.tile.get_block_idx()
        nblk = pl.tile.get_block_num()
        for i in pl.range(blk, n, nblk):  # SPMD stride: the blocks together visit every i once
            if i > 0:  # a guarded read: the orchestration runs the same if
                r = pl.cast(pl.read(idx, i), pl.INDEX)
                out = pl.store(pl.load(a, [r * 16, 0], [16, 16]), [i * 16, 0], out)
            else:
                out = pl.store(pl.muls(pl.load(a, [0, 0], [16, 16]), 0.0), [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[64, 16], pl.FP32], idx: pl.Tensor[[4], pl.INT32],
             out: pl.Out[pl.Tensor[[64, 16], pl.FP32]]) -> pl.Tensor[[64, 16], pl.FP32]:
        with pl.spmd(2):
            out = self.pick(a, idx, out, 4)
        return out


def test_a_guarded_read_in_an_spmd_strided_loop_runs_one_task_per_iteration(torch) -> None:
    prog = _outline(_Guarded)
    kernel = next(f for f in prog.functions if f.name == "pick")
    assert not _reads(kernel) and not any(isinstance(s, ForStmt) for s in preorder(kernel.body))
    main = next(f for f in prog.functions if f.name == "main")
    call = next(s.value for s in preorder(main.body) if isinstance(s, AssignStmt) and isinstance(s.value, Call)
                and isinstance(s.value.op, GlobalVar))
    assert "block_num" not in call.attrs
    g = torch.Generator().manual_seed(3)
    a, idx, out = torch.randn(64, 16, generator=g), torch.tensor([9, 2, 0, 3], dtype=torch.int32), torch.zeros(64, 16)
    run(_Guarded, a, idx, out)
    want = torch.cat([torch.zeros(16, 16)] + [a[16 * r:16 * r + 16] for r in (2, 0, 3)])
    torch.testing.assert_close(out, want, rtol=0, atol=0)


def test_a_read_in_an_inner_loop_keeps_the_kernel_read_error() -> None:
    src = '''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[64, 16], pl.FP32], idx: pl.Tensor[[4], pl.INT32],
          out: pl.Out[pl.Tensor[[64, 16], pl.FP32]], n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[64, 16], pl.FP32]:
        for i in pl.range(n):
            for j in pl.range(1):
                r = pl.cast(pl.read(idx, i + j), pl.INDEX)
                out = pl.store(pl.load(a, [r * 16, 0], [16, 16]), [i * 16, 0], out)
        return out
'''
    prog = _outline(pl.parse(src))
    with pytest.raises(UnsupportedFeatureError, match=r":11:.*this read is in neither place"):
        get_pass("ConvertTensorToTileOps")().run(prog)


@pl.program
class _I64Bound:
    @pl.function(type=pl.FunctionType.InCore)
    def rows(self, a: pl.Tensor[[32, 16], pl.FP32], out: pl.Out[pl.Tensor[[32, 16], pl.FP32]],
             n: pl.Scalar[pl.INT64]) -> pl.Tensor[[32, 16], pl.FP32]:
        for b in pl.range(n):
            t = pl.load(a, [b * 16, 0], [16, 16])
            out = pl.store(pl.adds(t, 1.0), [b * 16, 0], out, [16, 16])  # 4th positional: the shapes
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[32, 16], pl.FP32], out: pl.Out[pl.Tensor[[32, 16], pl.FP32]],
             ) -> pl.Tensor[[32, 16], pl.FP32]:
        out = self.rows(a, out, 2)
        return out


def test_an_int64_loop_bound_parameter_arrives_as_index(torch) -> None:
    a, out = torch.randn(32, 16, generator=torch.Generator().manual_seed(4)), torch.zeros(32, 16)
    run(_I64Bound, a, out)
    torch.testing.assert_close(out, a + 1.0, rtol=1e-6, atol=1e-6)


def test_an_spmd_launch_of_a_loop_that_does_not_stride_over_the_blocks_keeps_the_read_error() -> None:
    src = '''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[64, 16], pl.FP32], idx: pl.Tensor[[4], pl.INT32],
          out: pl.Out[pl.Tensor[[64, 16], pl.FP32]], n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[64, 16], pl.FP32]:
        for i in pl.range(n):
            r = pl.cast(pl.read(idx, i), pl.INDEX)
            out = pl.store(pl.load(a, [r * 16, 0], [16, 16]), [i * 16, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[64, 16], pl.FP32], idx: pl.Tensor[[4], pl.INT32],
             out: pl.Out[pl.Tensor[[64, 16], pl.FP32]]) -> pl.Tensor[[64, 16], pl.FP32]:
        with pl.spmd(2):
            out = self.k(a, idx, out, 4)
        return out
'''
    prog = _outline(pl.parse(src))
    kernel = next(f for f in prog.functions if f.name == "k")
    assert len(kernel.params) == 4  # left alone: every block would repeat every iteration
    with pytest.raises(UnsupportedFeatureError, match=r":10:.*this read is in neither place"):
        get_pass("ConvertTensorToTileOps")().run(prog)


# a row per batch into the node the (runtime) shift sends it to: `%` of a kernel parameter, which 0.1.1
# cannot lower in a kernel (pypto-lib's decode_front routes its attention rows this way)
ROTATE = '''
import pypto.language as pl

@pl.program
class Rotate:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[4, 64], pl.FP32], shift_t: pl.Tensor[[1], pl.INT32],
             out: pl.Out[pl.Tensor[[8, 4, 64], pl.FP32]]) -> pl.Tensor[[8, 4, 64], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            shift = pl.read(shift_t, [0])
            for b in pl.parallel(4):
                node = (b + shift) % 8
                out = pl.assemble(out, x[b : b + 1, :], [node, b, 0])
        return out
'''


def test_a_loop_computing_an_integer_modulo_moves_into_the_orchestration() -> None:
    prog = _outline(pl.parse_program(ROTATE))
    kernels = [f for f in prog.functions if f.is_incore]
    assert len(kernels) == 1 and not any(isinstance(s, ForStmt) for s in preorder(kernels[0].body))
    main = prog.get_function("main")
    assert any(isinstance(s, ForStmt) for s in preorder(main.body))  # the loop runs in the orchestration


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_rows_routed_by_a_runtime_modulo_match_numpy(platform: str) -> None:
    import numpy as np

    from pypto.runtime import RunConfig

    x = np.arange(256, dtype=np.float32).reshape(4, 64)
    out = np.zeros((8, 4, 64), np.float32)
    run(pl.parse_program(ROTATE), x, np.array([6], np.int32), out, config=RunConfig(platform=platform))
    want = np.zeros_like(out)
    for b in range(4):
        want[(b + 6) % 8, b] = x[b]
    np.testing.assert_array_equal(out, want)
