"""AutoTileMatmulL0: matmuls larger than L0 become loops over [m, n] sub-tiles (full-K or split-K)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import pypto.language as pl
from pypto.ir import MemoryPlanner
from pypto.ir.enums import MemorySpace
from pypto.ir.expr import Call
from pypto.ir.options import BackendType, VerificationLevel
from pypto.ir.stmt import EvalStmt, ForStmt, preorder
from pypto.passes.allocate_memory_addr import CAPACITY
from pypto.passes.auto_tile_matmul_l0 import choose_tiling
from pypto.runtime import RunConfig


@pl.jit
def big_matmul(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="big"):
        c = pl.matmul(a, b, out_dtype=pl.FP32)
        out = pl.assemble(out, c, [0, 0])
    return out


def _kernel(program):
    return next(f for f in program.functions if f.is_incore)


def _ops(func, op):
    return [s for s in preorder(func.body) if isinstance(getattr(s, "value", getattr(s, "expr", None)), Call)
            and getattr(s, "value", getattr(s, "expr", None)).op == op]


def test_tiles_fit_half_of_each_l0_buffer():
    caps = CAPACITY[BackendType.Ascend910B]
    assert choose_tiling(256, 256, 128, (4, 4), 4, caps) == (t := choose_tiling(256, 256, 128, (4, 4), 4, caps))
    assert t.m * t.n * 4 <= caps[MemorySpace.Acc] // 2
    assert t.m * t.k * 4 <= caps[MemorySpace.Left] // 2 and t.k * t.n * 4 <= caps[MemorySpace.Right] // 2
    assert 256 % t.m == 0 and 256 % t.n == 0 and 128 % t.k == 0 and t.k < 128  # split-K
    assert choose_tiling(256, 256, 32, (4, 4), 4, caps).k == 32  # full-K
    a5 = choose_tiling(256, 256, 32, (2, 2), 4, CAPACITY[BackendType.Ascend950])
    assert a5.m * a5.n >= choose_tiling(256, 256, 32, (2, 2), 4, caps).m * 256  # a5's L0C is twice as large


def test_split_k_lowers_to_an_mn_grid_of_k_loops(tmp_path, monkeypatch):
    monkeypatch.setenv("PYPTO_PROG_BUILD_DIR", str(tmp_path))
    a, b, out = np.zeros((256, 128), np.float32), np.zeros((128, 256), np.float32), np.zeros((256, 256), np.float32)
    kernel = _kernel(big_matmul.lower(a, b, out))
    loops = [s for s in preorder(kernel.body) if isinstance(s, ForStmt)]
    assert len(loops) == 2  # the M loop, and the K loop inside it (n == N)
    assert len(_ops(kernel, "tile.matmul")) == 1 and len(_ops(kernel, "tile.matmul_acc")) == 1
    stores = [s for s in preorder(kernel.body) if isinstance(s, EvalStmt) and s.expr.op == "tile.store"]
    assert len(stores) == 1
    l0 = [s.var.var_type for s in _ops(kernel, "tile.move")
          if s.var.var_type.memory_space in (MemorySpace.Left, MemorySpace.Right)]
    assert len(l0) == 4 and all(t.nbytes() <= 32 * 1024 for t in l0)


def test_a_matmul_that_fits_is_left_alone(tmp_path, monkeypatch):
    monkeypatch.setenv("PYPTO_PROG_BUILD_DIR", str(tmp_path))
    a, b, out = np.zeros((64, 64), np.float32), np.zeros((64, 64), np.float32), np.zeros((64, 64), np.float32)
    kernel = _kernel(big_matmul.lower(a, b, out))
    assert not [s for s in preorder(kernel.body) if isinstance(s, ForStmt)]


@pytest.mark.sim
@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
@pytest.mark.parametrize(("dtype", "k_dim"), [(np.float32, 128), (np.float32, 32), (np.float16, 256)])
def test_tiled_matmul_matches_numpy(tmp_path, monkeypatch, platform, dtype, k_dim):
    monkeypatch.setenv("PYPTO_PROG_BUILD_DIR", str(tmp_path))
    rng = np.random.default_rng(k_dim)
    a = rng.standard_normal((256, k_dim)).astype(dtype)
    b = rng.standard_normal((k_dim, 256)).astype(dtype)
    out = np.zeros((256, 256), np.float32)
    big_matmul(a, b, out, config=RunConfig(platform=platform))
    np.testing.assert_allclose(out, a.astype(np.float32) @ b.astype(np.float32), rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("planner", [MemoryPlanner.PYPTO, MemoryPlanner.PTOAS])
def test_tiled_program_round_trips_under_both_planners(tmp_path, planner):
    from pypto import ir

    a, b, out = np.zeros((256, 128), np.float32), np.zeros((128, 256), np.float32), np.zeros((256, 256), np.float32)
    program = big_matmul.lower(a, b, out)
    c = ir.compile(program, output_dir=tmp_path / "o", skip_ptoas=True, memory_planner=planner,
                   verification_level=VerificationLevel.ROUNDTRIP)
    pto = next(Path(c.output_dir).rglob("*.pto")).read_text()
    assert pto.count("pto.tmatmul") == 2 and "scf.for" in pto


@pl.jit
def chained(a: pl.Tensor, b: pl.Tensor, e: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="chained"):
        c = pl.matmul(a, b, out_dtype=pl.FP32)
        cb = pl.cast(c, pl.FP16, mode="rint")
        d = pl.matmul(cb, e, out_dtype=pl.FP32)
        out = pl.assemble(out, d, [0, 0])
    return out


def test_an_oversized_chain_becomes_row_blocks(tmp_path, monkeypatch):
    monkeypatch.setenv("PYPTO_PROG_BUILD_DIR", str(tmp_path))
    a, b = np.zeros((256, 32), np.float16), np.zeros((32, 256), np.float16)
    e, out = np.zeros((256, 64), np.float16), np.zeros((256, 64), np.float32)
    program = chained.lower(a, b, e, out)
    stages = [f for f in program.functions if f.is_incore]
    assert len(stages) == 3  # cube (rows of a @ b), vector (their cast), cube (times e), per row block
    for f in stages:  # each block's tile is stored right after it is made: one Acc / Vec buffer suffices
        allocs = [s.value.kwargs["memory_space"] for s in preorder(f.body)
                  if isinstance(getattr(s, "value", None), Call) and s.value.op == "tile.alloc"]
        assert allocs.count(MemorySpace.Acc) <= 1 and allocs.count(MemorySpace.Vec) <= 2, (f.name, allocs)


def test_a_chain_whose_first_operands_exceed_l0_gets_a_k_loop(tmp_path, monkeypatch):
    monkeypatch.setenv("PYPTO_PROG_BUILD_DIR", str(tmp_path))
    a, b = np.zeros((128, 512), np.float16), np.zeros((512, 128), np.float16)
    e, out = np.zeros((128, 64), np.float16), np.zeros((128, 64), np.float32)
    program = chained.lower(a, b, e, out)
    cube = [f for f in program.functions if f.is_incore and _ops(f, "tile.matmul_acc")]
    assert len(cube) == 1 and [s for s in preorder(cube[0].body) if isinstance(s, ForStmt)]


@pytest.mark.sim
@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
@pytest.mark.parametrize(("m_dim", "k_dim", "n_dim"), [(128, 64, 128), (128, 512, 128), (256, 32, 256),
                                                        (256, 192, 256)])
def test_chained_matmul_through_an_f16_intermediate_matches_torch(tmp_path, monkeypatch, platform, m_dim, k_dim,
                                                                  n_dim, torch):
    """Fits L0C (full-K / split-K), and a [256, 256] intermediate larger than L0C (row blocks)."""
    monkeypatch.setenv("PYPTO_PROG_BUILD_DIR", str(tmp_path))
    torch.manual_seed(k_dim)
    a = torch.randn(m_dim, k_dim, dtype=torch.float16)
    b = torch.randn(k_dim, n_dim, dtype=torch.float16)
    e = torch.randn(n_dim, 64, dtype=torch.float16)
    out = torch.zeros((m_dim, 64), dtype=torch.float32)
    chained(a, b, e, out, config=RunConfig(platform=platform))
    golden = (a.float() @ b.float()).to(torch.float16).float() @ e.float()
    assert ((out - golden).norm() / golden.norm()).item() < 1e-3


@pytest.mark.sim
def test_an_oversized_chain_fits_l0_under_dsa_rp(tmp_path, monkeypatch, torch):
    """Each row block of the chain has L0 tiles of its own (the mixed loop is unrolled); DSA_RP reuses them by
    lifetime, or four [64, 256] f16 blocks of B would need 128 KiB of L0B."""
    monkeypatch.setenv("PYPTO_PROG_BUILD_DIR", str(tmp_path))
    torch.manual_seed(3)
    a, b = torch.randn(256, 256, dtype=torch.float16) / 4, torch.randn(256, 256, dtype=torch.float16) / 16
    e, out = torch.randn(256, 64, dtype=torch.float16) / 16, torch.zeros((256, 64), dtype=torch.float32)
    chained(a, b, e, out, config=RunConfig(platform="a2a3sim", memory_planner=MemoryPlanner.DSA_RP))
    golden = (a.float() @ b.float()).to(torch.float16).float() @ e.float()
    assert ((out - golden).norm() / golden.norm()).item() < 1e-3


def _windows():
    """Operand windows and the output window start off the origin."""

    @pl.program
    class Windows:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[320, 128], pl.FP32], b: pl.Tensor[[128, 300], pl.FP32],
              o: pl.Out[pl.Tensor[[300, 300], pl.FP32]]) -> pl.Tensor[[300, 300], pl.FP32]:
            ta = pl.load(a, [64, 0], [256, 128], target_memory=pl.MemorySpace.Mat)
            tb = pl.load(b, [0, 44], [128, 256], target_memory=pl.MemorySpace.Mat)
            c = pl.matmul(ta, tb)
            o = pl.store(c, [16, 32], o)
            return o

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[320, 128], pl.FP32], b: pl.Tensor[[128, 300], pl.FP32],
                 o: pl.Out[pl.Tensor[[300, 300], pl.FP32]]) -> pl.Tensor[[300, 300], pl.FP32]:
            o = self.k(a, b, o)
            return o

    return Windows


@pytest.mark.sim
def test_offset_windows_keep_their_offsets(tmp_path):
    from pypto import ir

    rng = np.random.default_rng(2)
    a = rng.random((320, 128), dtype=np.float32)
    b = rng.random((128, 300), dtype=np.float32)
    o = np.zeros((300, 300), np.float32)
    ir.compile(_windows(), output_dir=tmp_path / "o")(a, b, o)
    ref = np.zeros_like(o)
    ref[16:272, 32:288] = a[64:320] @ b[:, 44:300]
    np.testing.assert_allclose(o, ref, rtol=1e-4, atol=1e-4)


def test_a_chain_needing_too_many_row_blocks_is_a_located_error(tmp_path, monkeypatch):
    from pypto.errors import UserError

    monkeypatch.setenv("PYPTO_PROG_BUILD_DIR", str(tmp_path))
    a, b = np.zeros((2048, 32), np.float16), np.zeros((32, 256), np.float16)
    e, out = np.zeros((256, 64), np.float16), np.zeros((2048, 64), np.float32)
    with pytest.raises(UserError, match="needs 32 row blocks of 64") as ei:
        chained.lower(a, b, e, out)
    line = Path(__file__).read_text().splitlines()[ei.value.span.line - 1]
    assert ei.value.span.file == __file__ and "c = pl.matmul(a, b" in line
    assert "at most 1024 rows each" in ei.value.hint


# --- tiles chosen by upstream's roofline chooser ---------------------------------------------------------

def _tiling(shape, planner, dtype=np.float16):
    m, k, n = shape
    a, b, out = np.zeros((m, k), dtype), np.zeros((k, n), dtype), np.zeros((m, n), np.float32)
    kernel = _kernel(big_matmul.lower(a, b, out, config=RunConfig(memory_planner=planner)))
    products = [s.var.var_type.shape for s in _ops(kernel, "tile.matmul") + _ops(kernel, "tile.matmul_acc")]
    loops = [(s.loop_var.name, s.start.value, s.stop.value, s.step.value)
             for s in preorder(kernel.body) if isinstance(s, ForStmt)]
    return products, loops


def test_a_k_that_does_not_divide_k_leaves_a_peeled_last_block(tmp_path, monkeypatch):
    monkeypatch.setenv("PYPTO_PROG_BUILD_DIR", str(tmp_path))
    # upstream's chooser: (128, 192, 64) for 128x688x192 -- ten K blocks of 64 and a tail of 48
    products, loops = _tiling((128, 688, 192), MemoryPlanner.PYPTO)
    assert products == [(128, 192)] * 3  # the first block, the K loop's matmul_acc, the tail's matmul_acc
    assert loops == [("ko", 64, 640, 64)]


def test_upstream_choice_with_a_peeled_column_of_tiles(tmp_path, monkeypatch):
    monkeypatch.setenv("PYPTO_PROG_BUILD_DIR", str(tmp_path))
    # upstream's chooser cuts even a 32x32x80 matmul: n=80 drains with a misaligned fractal count, (32, 64)
    # and a (32, 16) tail do not
    for planner in (MemoryPlanner.PYPTO, MemoryPlanner.PTOAS):
        assert _tiling((32, 32, 80), planner) == ([(32, 64), (32, 16)], [])


@pytest.mark.parametrize("planner", [MemoryPlanner.PYPTO, MemoryPlanner.DSA_RP])
def test_peeled_regions_that_cannot_share_l0_fall_back_to_the_pass_rule(tmp_path, monkeypatch, planner):
    monkeypatch.setenv("PYPTO_PROG_BUILD_DIR", str(tmp_path))
    # upstream's (96, 256, 32) / (48, 256, 32) need four accumulators of different sizes side by side (pypto
    # shares a buffer only between equal-sized tiles); the pass's own rule tiles N
    assert _tiling((272, 32, 416), planner) == ([(272, 32)], [("ni", 0, 416, 32)])


def test_under_ptoas_peeled_regions_count_one_at_a_time(tmp_path, monkeypatch):
    monkeypatch.setenv("PYPTO_PROG_BUILD_DIR", str(tmp_path))
    # each alloc_tile at its first use: ptoas 0.1.1 reuses the regions' bytes by lifetime, so upstream's tiles stay
    tiles, _ = _tiling((272, 32, 416), MemoryPlanner.PTOAS)
    assert (272, 32) not in tiles and len(set(tiles)) > 1


def test_the_chooser_sees_the_planner(tmp_path, monkeypatch):
    monkeypatch.setenv("PYPTO_PROG_BUILD_DIR", str(tmp_path))
    # 64x80x256 (upstream's B-stationary system test): PYPTO -> a K split (64, 256, 16); DSA_RP may
    # double-buffer L0C -> B-stationary (32, 256, 80), two stages of one pipelined trip (the stages share their
    # [80, 256] block of L0B: MemoryReuse gives each stage its own accumulator only)
    assert _tiling((64, 80, 256), MemoryPlanner.PYPTO) == ([(64, 256)] * 2, [("ko", 16, 80, 16)])
    assert _tiling((64, 80, 256), MemoryPlanner.DSA_RP) == ([(32, 256)] * 2, [("mi", 0, 64, 64)])


@pytest.mark.sim
@pytest.mark.parametrize(("shape", "planner"), [((128, 688, 192), MemoryPlanner.PYPTO),
                                                ((32, 32, 80), MemoryPlanner.PTOAS),
                                                ((272, 32, 416), MemoryPlanner.PTOAS),
                                                ((64, 80, 256), MemoryPlanner.DSA_RP)])
def test_peeled_tilings_match_numpy(tmp_path, monkeypatch, shape, planner):
    monkeypatch.setenv("PYPTO_PROG_BUILD_DIR", str(tmp_path))
    m, k, n = shape
    rng = np.random.default_rng(m + k)
    a = rng.standard_normal((m, k)).astype(np.float16)
    b = rng.standard_normal((k, n)).astype(np.float16)
    out = np.zeros((m, n), np.float32)
    big_matmul(a, b, out, config=RunConfig(platform="a2a3sim", memory_planner=planner))
    np.testing.assert_allclose(out, a.astype(np.float32) @ b.astype(np.float32), rtol=2e-3, atol=2e-3)
