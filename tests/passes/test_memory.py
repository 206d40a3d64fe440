"""InitMemRef, MemoryReuse and AllocateMemoryAddr against the upstream reference numbering."""

from __future__ import annotations

import pytest
from kernels import add_program, big_vec_program, matmul_acc_program, swiglu_program

from pypto.errors import UserError
from pypto.ir import BackendType, MemoryPlanner
from pypto.ir.expr import Call
from pypto.ir.stmt import AssignStmt, flatten
from pypto.passes._util import iter_stmts
from pypto.passes.context import PassContext
from pypto.passes.manager import run_pipeline


def placements(func):
    """tile name -> (buffer name, offset) for every assigned var with a MemRef."""
    out = {}
    for s in iter_stmts(func.body):
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


def test_dsa_rp_keeps_all_buffers_and_ptoas_has_no_addresses():
    with PassContext(memory_planner=MemoryPlanner.DSA_RP) as ctx:
        kernel = run_pipeline(add_program(), ctx=ctx).program.functions[0]
    assert len(allocs(kernel)) == 3
    assert placements(kernel)["t__tile"] == ("mem_vec_5", 131072)
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
