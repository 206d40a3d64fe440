"""InitMemRef, MemoryReuse and AllocateMemoryAddr against the upstream reference numbering."""

from __future__ import annotations

import pytest
from kernels import add_program, big_vec_program, matmul_acc_program, swiglu_program

import pypto.language as pl
from pypto.errors import UserError
from pypto.ir import BackendType, MemoryPlanner
from pypto.ir.expr import Call
from pypto.ir.stmt import AssignStmt, flatten, preorder
from pypto.passes.context import PassContext
from pypto.passes.manager import run_pipeline
from pypto.runtime import run


def placements(func):
    """tile name -> (buffer name, offset) for every assigned var with a MemRef."""
    out = {}
    for s in preorder(func.body):
        if isinstance(s, AssignStmt) and getattr(s.var.var_type, "memref", None) is not None:
            mr = s.var.var_type.memref
            base = mr.base if isinstance(mr.base, str) else mr.base.name
            out[s.var.name] = (base, mr.offset)
    return out


def allocs(func):
    return [(s.var.name, s.value.kwargs["size"]) for s in flatten(func.body)
            if isinstance(s, AssignStmt) and isinstance(s.value, Call) and s.value.op == "tile.alloc"]


def test_add_matches_reference_35():
    kernel = run_pipeline(add_program(), ctx=PassContext()).program.functions[0]
    assert allocs(kernel) == [("mem_vec_3", 65536), ("mem_vec_4", 65536)]
    assert placements(kernel) == {"a__tile": ("mem_vec_3", 0), "b__tile": ("mem_vec_4", 65536),
                                  "t__tile": ("mem_vec_3", 0), "out__tile": ("mem_ddr_2", 0)}


def test_swiglu_reuse_matches_reference():
    kernel = run_pipeline(swiglu_program(), ctx=PassContext()).program["swiglu_kernel"]
    got = {k.split("__")[0]: v for k, v in placements(kernel).items()}
    assert got == {"tile_gate": ("mem_vec_3", 0), "tile_up": ("mem_vec_4", 16384),
                   "gate_neg": ("mem_vec_5", 32768), "exp_neg": ("mem_vec_5", 32768),
                   "denom": ("mem_vec_5", 32768), "sigmoid": ("mem_vec_8", 49152),
                   "swish": ("mem_vec_3", 0), "result": ("mem_vec_3", 0)}


def test_matmul_acc_reuse_matches_reference():
    kernel = run_pipeline(matmul_acc_program(), ctx=PassContext()).program.functions[0]
    got = {k.split("__")[0]: v for k, v in placements(kernel).items()}
    assert got["tile_a1_l1"] == ("mem_mat_3", 0) and got["tile_b1_l1"] == ("mem_mat_4", 8192)
    assert got["acc_v1"] == got["acc"] == ("mem_acc_7", 0)
    assert [n for n, _ in allocs(kernel)] == ["mem_mat_3", "mem_mat_4", "mem_left_5", "mem_right_6", "mem_acc_7"]


def test_dsa_rp_coalesces_by_lifetime_and_ptoas_has_no_addresses():
    # DSA_RP drops MemoryReuse but places buffers itself: AllocateMemoryAddr shares them by lifetime first
    # (ptoas 0.1.1 would give every unshared tile bytes of its own)
    with PassContext(memory_planner=MemoryPlanner.DSA_RP) as ctx:
        kernel = run_pipeline(add_program(), ctx=ctx).program.functions[0]
    with PassContext(memory_planner=MemoryPlanner.PYPTO) as ctx:
        pypto_kernel = run_pipeline(add_program(), ctx=ctx).program.functions[0]
    assert len(allocs(kernel)) == len(allocs(pypto_kernel)) == 2
    assert sorted(off for _, off in placements(kernel).values())[-1] == 65536
    with PassContext(memory_planner=MemoryPlanner.PTOAS) as ctx:
        kernel = run_pipeline(add_program(), ctx=ctx).program.functions[0]
    assert {off for _, off in placements(kernel).values()} == {0}


def test_capacity_overflow_names_kernel_and_tiles():
    ok = run_pipeline(big_vec_program(128), ctx=PassContext())  # 2 x 64 KiB live at most
    assert ok.program.functions[0].name == "big"
    with pytest.raises(UserError, match=r"Vec buffer usage 256 KiB in kernel 'big' exceeds platform limit "
                                        r"192 KiB \(Ascend910B\); tiles: x__ssa_v0 \(128 KiB\)"):
        run_pipeline(big_vec_program(256), ctx=PassContext())


def test_a5_has_larger_vec_capacity_capped_by_the_assembler():
    ctx = PassContext(backend_type=BackendType.Ascend950)
    assert run_pipeline(big_vec_program(248), ctx=ctx).program  # 2 x 124 KiB: too big for a2a3, fits a5
    with pytest.raises(UserError, match="exceeds platform limit 248 KiB"):
        run_pipeline(big_vec_program(252), ctx=ctx)  # 252 KiB fits the 256 KiB UB, not ptoas 0.1.1's 248


@pl.program
class _ReshapedSum:
    """Row sums of n blocks accumulated in GM; each block's sum is reshaped to a row before the branch
    that loads the running total, a tile of the sum's size, while that row is still to be read."""

    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[64, 64], pl.FP32], acc: pl.Out[pl.Tensor[[16, 1], pl.FP32]],
          n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[16, 1], pl.FP32]:
        for i, (acc_it,) in pl.range(n, init_values=(acc,)):
            tmp = pl.create_tile([16, 64], dtype=pl.FP32, target_memory=pl.MemorySpace.Vec)
            s = pl.row_sum(pl.load(x, [i * 16, 0], [16, 64]), tmp)
            s_row = pl.reshape(s, [1, 16])  # a view of s's bytes
            if i == 0:
                acc_next = pl.store(s, [0, 0], acc_it)
            else:
                prev = pl.load(acc_it, [0, 0], [16, 1])  # s is dead here, its bytes are not
                total = pl.reshape(pl.add(pl.reshape(prev, [1, 16]), s_row), [16, 1])
                acc_next = pl.store(total, [0, 0], acc_it)
            (acc_out,) = pl.yield_(acc_next)
        return acc_out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[64, 64], pl.FP32], acc: pl.Out[pl.Tensor[[16, 1], pl.FP32]],
             ) -> pl.Tensor[[16, 1], pl.FP32]:
        acc = self.k(x, acc, 4)
        return acc


def test_a_reshape_keeps_its_operands_buffer_live() -> None:
    kernel = run_pipeline(_ReshapedSum, ctx=PassContext()).program["k"]
    got = {k.split("__")[0]: v for k, v in placements(kernel).items()}
    assert got["prev"][0] != got["s"][0] or got["s_row"][0] == got["s"][0]


def test_reshaped_sum_matches_torch(torch) -> None:
    g = torch.Generator().manual_seed(4)
    x, acc = torch.randn(64, 64, generator=g), torch.zeros(16, 1)
    run(_ReshapedSum, x, acc)
    want = sum(x[16 * i:16 * i + 16].sum(1, keepdim=True) for i in range(4))
    torch.testing.assert_close(acc, want, rtol=1e-5, atol=1e-5)
