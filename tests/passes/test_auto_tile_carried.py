"""AutoTileMatmulL0 on a loop-carried accumulation (``if k == 0: matmul else matmul_acc`` over a K loop) and on a
chain whose row blocks leave a peeled last block."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import UnsupportedFeatureError
from pypto.ir import MemoryPlanner
from pypto.ir.enums import MemorySpace
from pypto.ir.options import BackendType
from pypto.ir.stmt import ForStmt, preorder
from pypto.passes.allocate_memory_addr import CAPACITY
from pypto.passes.auto_tile_matmul_l0 import choose_tiling
from pypto.runtime import RunConfig

M, N, K, KT = 272, 144, 256, 128  # an INT32 [272, 144] accumulator: 153 KiB, more than L0C


@pl.jit
def carried(a: pl.Tensor[[M, K], pl.INT8], b: pl.Tensor[[K, N], pl.INT8], c: pl.Out[pl.Tensor[[M, N], pl.INT32]]):
    for _ in pl.spmd(1):
        acc = pl.create_tensor([M, N], dtype=pl.INT32)
        for kb in pl.pipeline(0, K // KT, stage=2):
            k0 = kb * KT
            at = a[0:M, k0:k0 + KT]
            bt = b[k0:k0 + KT, 0:N]
            if k0 == 0:
                acc = pl.matmul(at, bt, out_dtype=pl.INT32)
            else:
                acc = pl.matmul_acc(acc, at, bt)
        c[0:M, 0:N] = acc
    return c


@pl.jit
def wide(a: pl.Tensor[[16, K], pl.INT8], b: pl.Tensor[[K, 2304], pl.INT8], c: pl.Out[pl.Tensor[[16, 2304], pl.INT32]]):
    for _ in pl.spmd(1):
        acc = pl.create_tensor([16, 2304], dtype=pl.INT32)
        for kb in pl.pipeline(0, K // KT, stage=2):
            k0 = kb * KT
            if k0 == 0:
                acc = pl.matmul(a[0:16, k0:k0 + KT], b[k0:k0 + KT, 0:2304], out_dtype=pl.INT32)
            else:
                acc = pl.matmul_acc(acc, a[0:16, k0:k0 + KT], b[k0:k0 + KT, 0:2304])
        c[0:16, 0:2304] = acc
    return c


@pl.jit
def chained(a: pl.Tensor, b: pl.Tensor, e: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="chained"):
        c = pl.matmul(a, b, out_dtype=pl.FP32)
        cb = pl.cast(c, pl.FP16, mode="rint")
        d = pl.matmul(cb, e, out_dtype=pl.FP32)
        out = pl.assemble(out, d, [0, 0])
    return out


def _int8(rng, shape):
    return rng.integers(-3, 4, shape).astype(np.int8)


def _kernel(program):
    return next(f for f in program.functions if f.is_incore)


def _acc_shapes(kernel):
    return {s.var.var_type.shape for s in preorder(kernel.body) if getattr(s, "var", None) is not None
            and getattr(s.var.var_type, "memory_space", None) is MemorySpace.Acc}


def _args(rng):
    return _int8(rng, (M, K)), _int8(rng, (K, N)), np.zeros((M, N), np.int32)


@pytest.mark.parametrize("planner", [MemoryPlanner.PYPTO, MemoryPlanner.DSA_RP])
def test_each_sub_tile_runs_the_first_matmul_then_its_own_k_loop(tmp_path, monkeypatch, planner):
    monkeypatch.setenv("PYPTO_PROG_BUILD_DIR", str(tmp_path))
    kernel = _kernel(carried.lower(*_args(np.random.default_rng(0)), config=RunConfig(memory_planner=planner)))
    caps = CAPACITY[BackendType.Ascend910B]
    shapes = _acc_shapes(kernel)
    assert shapes and all(r * c * 4 <= caps[MemorySpace.Acc] // 2 for r, c in shapes)
    carried_loops = [s for s in preorder(kernel.body) if isinstance(s, ForStmt) and s.loop_var.name.startswith("kb")]
    assert carried_loops and all(len(s.iter_args) == 1 for s in carried_loops)
    assert all(c % 32 == 0 or c == N for _, c in shapes)  # INT8 column blocks: whole 32-byte NZ boxes


def test_an_int8_n_off_the_nz_box_is_refused_under_ptoas(tmp_path, monkeypatch):
    monkeypatch.setenv("PYPTO_PROG_BUILD_DIR", str(tmp_path))
    with pytest.raises(UnsupportedFeatureError, match="no multiple of 32") as ei:
        carried.lower(*_args(np.random.default_rng(0)), config=RunConfig(memory_planner=MemoryPlanner.PTOAS))
    line = Path(__file__).read_text().splitlines()[ei.value.span.line - 1]
    assert ei.value.span.file == __file__ and "pl.matmul(at, bt" in line
    assert "memory_planner=PYPTO" in ei.value.hint


@pytest.mark.sim
def test_a_carried_accumulation_off_whole_boxes_runs_under_ptoas(tmp_path, monkeypatch):
    monkeypatch.setenv("PYPTO_PROG_BUILD_DIR", str(tmp_path))
    rng = np.random.default_rng(2)
    a, b, c = _int8(rng, (16, 256)), _int8(rng, (256, 2304)), np.zeros((16, 2304), np.int32)
    wide(a, b, c, config=RunConfig(platform="a2a3sim", memory_planner=MemoryPlanner.PTOAS))
    np.testing.assert_array_equal(c, a.astype(np.int32) @ b.astype(np.int32))


def test_one_byte_operands_take_k_blocks_of_32():
    caps = CAPACITY[BackendType.Ascend910B]
    t = choose_tiling(272, 144, 384, (1, 1), 4, caps, operand_sets=2)
    assert t is not None and t.k % 32 == 0 and 384 % t.k == 0
    assert t.m * t.k * 2 <= caps[MemorySpace.Left] // 2  # two sets of blocks fit half of L0A


@pytest.mark.sim
@pytest.mark.parametrize("planner", [MemoryPlanner.PYPTO, MemoryPlanner.DSA_RP])
def test_carried_accumulation_matches_numpy(tmp_path, monkeypatch, planner):
    monkeypatch.setenv("PYPTO_PROG_BUILD_DIR", str(tmp_path))
    a, b, c = _args(np.random.default_rng(1))
    carried(a, b, c, config=RunConfig(platform="a2a3sim", memory_planner=planner))
    np.testing.assert_array_equal(c, a.astype(np.int32) @ b.astype(np.int32))


def test_a_chain_past_16_row_blocks_peels_its_last_block(tmp_path, monkeypatch):
    monkeypatch.setenv("PYPTO_PROG_BUILD_DIR", str(tmp_path))
    a, b = np.zeros((272, 192), np.float16), np.zeros((192, 352), np.float16)
    e, out = np.zeros((352, 32), np.float16), np.zeros((272, 32), np.float32)
    program = chained.lower(a, b, e, out)  # 272 rows: 17 blocks of 16, or 8 of 32 and a peeled one of 16
    shapes = {shape for f in program.functions if f.is_incore for shape in _acc_shapes(f)}
    assert {r for r, _ in shapes} == {32, 16}


@pytest.mark.sim
def test_a_chain_with_a_peeled_row_block_matches_torch(tmp_path, monkeypatch, torch):
    monkeypatch.setenv("PYPTO_PROG_BUILD_DIR", str(tmp_path))
    torch.manual_seed(0)
    a, b = torch.randn(272, 192, dtype=torch.float16), torch.randn(192, 352, dtype=torch.float16)
    e, out = torch.randn(352, 32, dtype=torch.float16), torch.zeros((272, 32), dtype=torch.float32)
    chained(a, b, e, out, config=RunConfig(platform="a2a3sim"))
    golden = (a.float() @ b.float()).to(torch.float16).float() @ e.float()
    assert ((out - golden).norm() / golden.norm()).item() < 1e-3


@pl.jit
def biased_chain(a: pl.Tensor, b: pl.Tensor, bias: pl.Tensor, e: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="biased_chain"):
        a_mat = pl.load(a, [0, 0], [256, 192], target_memory=pl.Mem.Mat)
        b_mat = pl.load(b, [0, 0], [192, 352], target_memory=pl.Mem.Mat)
        bias_mat = pl.load(bias, [0, 0], [1, 352], target_memory=pl.Mem.Mat)
        e_mat = pl.load(e, [0, 0], [352, 32], target_memory=pl.Mem.Mat)
        c = pl.tile.matmul_bias(a_mat, b_mat, bias_mat)
        cb = pl.cast(c, pl.FP16, mode="rint")
        d = pl.tile.matmul(cb, e_mat)
        out = pl.store(d, [0, 0], out)
    return out


@pytest.mark.sim
def test_a_biased_chain_past_16_row_blocks_takes_a_peeled_last_block_on_a5sim(tmp_path, monkeypatch, torch):
    # a5's 4 KiB Bias table holds the whole [1, 352] f32 bias; 272 rows need a peeled last row block
    monkeypatch.setenv("PYPTO_PROG_BUILD_DIR", str(tmp_path))
    g = torch.Generator().manual_seed(3)
    a, b = torch.randn(272, 192, generator=g).half(), torch.randn(192, 352, generator=g).half()
    bias, e = torch.randn(1, 352, generator=g), torch.randn(352, 32, generator=g).half()
    out = torch.zeros((272, 32), dtype=torch.float32)
    biased_chain_272(a, b, bias, e, out, config=RunConfig(platform="a5sim"))
    golden = (a.float() @ b.float() + bias).to(torch.float16).float() @ e.float()
    assert ((out - golden).norm() / golden.norm()).item() < 1e-3


@pl.jit
def biased_chain_272(a: pl.Tensor, b: pl.Tensor, bias: pl.Tensor, e: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="biased_chain_272"):
        a_mat = pl.load(a, [0, 0], [272, 192], target_memory=pl.Mem.Mat)
        b_mat = pl.load(b, [0, 0], [192, 352], target_memory=pl.Mem.Mat)
        bias_mat = pl.load(bias, [0, 0], [1, 352], target_memory=pl.Mem.Mat)
        e_mat = pl.load(e, [0, 0], [352, 32], target_memory=pl.Mem.Mat)
        c = pl.tile.matmul_bias(a_mat, b_mat, bias_mat)
        cb = pl.cast(c, pl.FP16, mode="rint")
        d = pl.tile.matmul(cb, e_mat)
        out = pl.store(d, [0, 0], out)
    return out


def test_a_chain_whose_whole_bias_overflows_the_bias_table_is_a_located_error(tmp_path, monkeypatch):
    monkeypatch.setenv("PYPTO_PROG_BUILD_DIR", str(tmp_path))
    a, b, bias = np.zeros((256, 192), np.float16), np.zeros((192, 352), np.float16), np.zeros((1, 352), np.float32)
    e, out = np.zeros((352, 32), np.float16), np.zeros((256, 32), np.float32)
    with pytest.raises(UnsupportedFeatureError, match="1408 B of the 1024 B Bias table") as ei:
        biased_chain.lower(a, b, bias, e, out)
    line = Path(__file__).read_text().splitlines()[ei.value.span.line - 1]
    assert "pl.tile.matmul_bias(a_mat" in line and "at most 256 columns" in ei.value.hint
