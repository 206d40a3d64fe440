"""Cross-core pipes through GM (passes/_pipes.py), pl.spmd over a mixed kernel (per-block GM bands in
ExpandMixedKernel) and pl.system.syncall barriers (passes/_barrier_split.py): structure, sim runs on both
simulators against numpy/torch goldens, and the located refusals."""

from __future__ import annotations

import numpy as np
import pytest
from pipe_programs import (
    RT,
    SB,
    SC,
    SR,
    B,
    Barrier,
    C,
    D,
    K,
    NarrowedPush,
    R,
    SoftBarrierAiv,
    SpmdMixed,
    SpmdMixedTransposed,
    TwoPipes,
)

import pypto.language as pl
from pypto import ir
from pypto.errors import UnsupportedFeatureError
from pypto.ir import FunctionType, GlobalVar, ParamDirection
from pypto.ir.expr import BinOp
from pypto.ir.verifier import calls
from pypto.passes.context import PassContext
from pypto.passes.manager import run_pipeline

PLATFORMS = ["a2a3sim", "a5sim"]


def _lower(prog):
    return run_pipeline(prog, ctx=PassContext()).program


def _kernel_calls(prog) -> list[str]:
    orch = prog.orchestrations()[0]
    return [c.op.name for c in calls(orch.body) if isinstance(c.op, GlobalVar)]


def _ops(f) -> set[str]:
    return {c.op for c in calls(f.body) if isinstance(c.op, str)}


def test_upstream_auto_is_minus_one():
    assert pl.AUTO == -1 and pl.system.AUTO == -1


def test_a_pipe_group_becomes_producer_then_consumer_through_gm_slots():
    prog = _lower(TwoPipes)
    assert prog.get_function("group") is None  # inlined into the orchestration
    assert _kernel_calls(prog) == ["vec", "cube"]  # producer first, whatever the Group's call order
    vec, cube = prog["vec"], prog["cube"]
    assert (vec.func_type, cube.func_type) == (FunctionType.AIV, FunctionType.AIC)
    slots = [p.name for p, d in zip(vec.params, vec.param_directions, strict=True) if d is ParamDirection.Out][1:]
    assert [s.split("__")[0] for s in slots] == ["v2c_pipe1_0", "v2c_pipe0_0"]
    for f in (vec, cube):
        assert not {o for o in _ops(f) if "pipe" in o or "tpush" in o or "tpop" in o or "tfree" in o
                    or "buffer" in o}
    mat_loads = [c for c in calls(cube.body) if c.op == "tile.load" and c.kwargs.get("target_memory") is pl.Mem.Mat]
    assert len(mat_loads) == 2


@pytest.mark.sim
@pytest.mark.ptoas
@pytest.mark.parametrize("platform", PLATFORMS)
def test_two_pipes_keep_their_ids(platform, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(3)
    x, y = (rng.standard_normal((D, D)).astype(np.float32) for _ in range(2))
    o = np.zeros((D, D), np.float32)
    ir.compile(TwoPipes, platform=platform)(x, y, o)
    np.testing.assert_allclose(o, (x + y) @ (x * y), rtol=1e-4, atol=1e-4)


@pytest.mark.sim
@pytest.mark.ptoas
@pytest.mark.parametrize("platform", PLATFORMS)
def test_a_narrowed_push_fills_only_the_valid_region(platform, torch, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    torch.manual_seed(4)
    a, b = (torch.randn(R, C).to(torch.bfloat16) for _ in range(2))
    vs = torch.tensor([8, 12], dtype=torch.int64)
    o = torch.full((R, C), -7.0)
    ir.compile(NarrowedPush, platform=platform)(a, b, vs, o)
    want = a.float() @ b.float() + 2.0
    torch.testing.assert_close(o[:8, :12], want[:8, :12], rtol=1e-3, atol=1e-3)
    assert bool((o[8:] == -7.0).all()) and bool((o[:, 12:] == -7.0).all())


def test_spmd_over_a_mixed_kernel_passes_one_band_per_block():
    prog = _lower(SpmdMixed)
    names = _kernel_calls(prog)
    assert [prog[n].func_type for n in names] == [FunctionType.AIV, FunctionType.AIC, FunctionType.AIV]
    orch = prog.orchestrations()[0]
    launches = [c for c in calls(orch.body) if isinstance(c.op, GlobalVar)]
    assert all(int(c.attrs["block_num"].value if hasattr(c.attrs["block_num"], "value") else c.attrs["block_num"])
               == B for c in launches)
    temp = prog[names[0]].params[-1]
    assert temp.name.endswith("_gm") and tuple(temp.var_type.shape) == (B * RT, K)
    assert "tile.get_block_idx" in _ops(prog[names[1]])


@pytest.mark.sim
@pytest.mark.ptoas
@pytest.mark.parametrize("platform", PLATFORMS)
def test_spmd_over_a_mixed_kernel_matches_numpy(platform, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(5)
    x = rng.standard_normal((B * RT, K)).astype(np.float32)
    w = rng.standard_normal((K, 16)).astype(np.float32)
    o = np.zeros((B * RT, 16), np.float32)
    ir.compile(SpmdMixed, platform=platform)(x, w, o)
    np.testing.assert_allclose(o, np.maximum((0.5 * x) @ w, 0) + 1, rtol=1e-4, atol=1e-4)


@pytest.mark.sim
@pytest.mark.ptoas
@pytest.mark.parametrize("platform", PLATFORMS)
def test_a_computed_tile_transposed_in_an_spmd_mixed_kernel(platform, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    prog = _lower(SpmdMixedTransposed)
    assert "tile.transpose" in _ops(prog[_kernel_calls(prog)[-1]])  # pto.ttrans of the epilogue tile
    rng = np.random.default_rng(7)
    x = rng.standard_normal((B * RT, K)).astype(np.float32)
    w = rng.standard_normal((K, RT)).astype(np.float32)
    o = np.zeros((B * RT, RT), np.float32)
    ir.compile(SpmdMixedTransposed, platform=platform)(x, w, o)
    want = np.concatenate([((x[i * RT:(i + 1) * RT] + 1) @ w + 1).T for i in range(B)])
    np.testing.assert_allclose(o, want, rtol=1e-4, atol=1e-4)


WIDE = 24  # more blocks than the simulator's 16 AIV cores can start together


@pl.program
class WideHardBarrier:
    """A hard barrier over WIDE blocks launched with sync_start=True."""

    @pl.function(type=pl.FunctionType.InCore)
    def step(self, x: pl.Tensor[[WIDE * SR, SC], pl.FP32],
             out: pl.Out[pl.Tensor[[WIDE * SR, SC], pl.FP32]]) -> pl.Tensor[[WIDE * SR, SC], pl.FP32]:
        r0 = pl.tile.get_block_idx() * SR
        xt = pl.load(x, [r0, 0], [SR, SC])
        doubled = pl.muls(xt, 2.0)
        pl.system.syncall(core_type="aiv_only")
        out = pl.store(pl.sub(doubled, xt), [r0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[WIDE * SR, SC], pl.FP32],
             out: pl.Out[pl.Tensor[[WIDE * SR, SC], pl.FP32]]) -> pl.Tensor[[WIDE * SR, SC], pl.FP32]:
        with pl.spmd(WIDE, sync_start=True):
            out = self.step(x, out)
        return out


def test_the_segments_of_a_barrier_need_not_start_together():
    prog = _lower(WideHardBarrier)
    launches = [c for c in calls(prog.orchestrations()[0].body) if isinstance(c.op, GlobalVar)]
    assert [c.op.name for c in launches] == ["step_seg0", "step_seg1"]
    assert all("sync_start" not in c.attrs and int(getattr(c.attrs["block_num"], "value", c.attrs["block_num"]))
               == WIDE for c in launches)


@pytest.mark.sim
@pytest.mark.ptoas
def test_a_hard_barrier_over_more_blocks_than_the_cores_runs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    x = np.random.default_rng(8).standard_normal((WIDE * SR, SC)).astype(np.float32)
    o = np.zeros_like(x)
    ir.compile(WideHardBarrier, platform="a2a3sim")(x, o)
    np.testing.assert_allclose(o, x, rtol=1e-6, atol=1e-6)


def test_a_barrier_cuts_the_kernel_into_two_tasks():
    prog = _lower(Barrier)
    assert _kernel_calls(prog) == ["step_seg0", "step_seg1"]
    first, second = prog["step_seg0"], prog["step_seg1"]
    assert "system.syncall" not in _ops(first) | _ops(second)
    # the computed tile crosses through a per-block band; the load of x is repeated after the barrier
    assert first.params[-1].name.startswith("tripled_gm") and tuple(first.params[-1].var_type.shape) == (SB * SR, SC)
    assert sum(1 for c in calls(second.body) if c.op == "tile.load") == 2


@pytest.mark.sim
@pytest.mark.ptoas
@pytest.mark.parametrize("platform", PLATFORMS)
def test_a_barrier_keeps_the_numbers(platform, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    x = np.random.default_rng(6).standard_normal((SB * SR, SC)).astype(np.float32)
    o = np.zeros_like(x)
    ir.compile(Barrier, platform=platform)(x, o)
    np.testing.assert_allclose(o, 4 * x, rtol=1e-5, atol=1e-5)


@pytest.mark.sim
@pytest.mark.ptoas
@pytest.mark.parametrize("platform", PLATFORMS)
def test_a_soft_barrier_in_an_explicit_aiv_kernel(platform, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    prog = _lower(SoftBarrierAiv)
    assert [prog[n].func_type for n in _kernel_calls(prog)] == [FunctionType.AIV, FunctionType.AIV]
    x = np.random.default_rng(8).standard_normal((SB * SR, SC)).astype(np.float32)
    ws = np.zeros(16, np.int32)
    o = np.zeros_like(x)
    ir.compile(SoftBarrierAiv, platform=platform)(x, ws, o)
    np.testing.assert_allclose(o, 2 * x + 1, rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------------------------------- refusals


@pl.program
class TwoWay:
    @pl.function(type=pl.FunctionType.AIV)
    def vec(self, x: pl.Tensor[[D, D], pl.FP32], o: pl.Out[pl.Tensor[[D, D], pl.FP32]]) -> pl.Tensor[[D, D], pl.FP32]:
        xt: pl.Tile[[D, D], pl.FP32, pl.Mem.Vec] = pl.load(x, [0, 0], [D, D])
        pl.tpush_to_aic(xt, split=0)
        back: pl.Tile[[D, D], pl.FP32, pl.Mem.Vec] = pl.tpop_from_aic(split=0)
        return pl.store(back, [0, 0], o)

    @pl.function(type=pl.FunctionType.AIC)
    def cube(self, x: pl.Tensor[[D, D], pl.FP32], o: pl.Out[pl.Tensor[[D, D], pl.FP32]]):
        got: pl.Tile[[D, D], pl.FP32, pl.Mem.Mat] = pl.tpop_from_aiv(split=0)
        acc: pl.Tile[[D, D], pl.FP32] = pl.matmul(pl.move(got, target_memory=pl.Mem.Left),
                                                  pl.move(got, target_memory=pl.Mem.Right))
        pl.tpush_to_aiv(acc, split=0)

    @pl.function(type=pl.FunctionType.Group)
    def group(self, x: pl.Tensor[[D, D], pl.FP32], o: pl.Out[pl.Tensor[[D, D], pl.FP32]]) -> pl.Tensor[[D, D], pl.FP32]:
        self.cube(x, o)
        return self.vec(x, o)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[D, D], pl.FP32], o: pl.Out[pl.Tensor[[D, D], pl.FP32]]) -> pl.Tensor[[D, D], pl.FP32]:
        return self.group(x, o)


@pl.program
class PushInLoop:
    @pl.function(type=pl.FunctionType.AIV)
    def vec(self, x: pl.Tensor[[D, D], pl.FP32], o: pl.Out[pl.Tensor[[D, D], pl.FP32]]):
        for _ in pl.range(2):
            xt: pl.Tile[[D, D], pl.FP32, pl.Mem.Vec] = pl.load(x, [0, 0], [D, D])
            pl.tpush_to_aic(xt, split=0)

    @pl.function(type=pl.FunctionType.AIC)
    def cube(self, x: pl.Tensor[[D, D], pl.FP32], o: pl.Out[pl.Tensor[[D, D], pl.FP32]]) -> pl.Tensor[[D, D], pl.FP32]:
        got: pl.Tile[[D, D], pl.FP32, pl.Mem.Mat] = pl.tpop_from_aiv(split=0)
        acc: pl.Tile[[D, D], pl.FP32] = pl.matmul(pl.move(got, target_memory=pl.Mem.Left),
                                                  pl.move(got, target_memory=pl.Mem.Right))
        return pl.store(acc, [0, 0], o)

    @pl.function(type=pl.FunctionType.Group)
    def group(self, x: pl.Tensor[[D, D], pl.FP32], o: pl.Out[pl.Tensor[[D, D], pl.FP32]]) -> pl.Tensor[[D, D], pl.FP32]:
        self.vec(x, o)
        return self.cube(x, o)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[D, D], pl.FP32], o: pl.Out[pl.Tensor[[D, D], pl.FP32]]) -> pl.Tensor[[D, D], pl.FP32]:
        return self.group(x, o)


@pl.program
class Unpaired:
    @pl.function(type=pl.FunctionType.AIV)
    def vec(self, x: pl.Tensor[[D, D], pl.FP32], o: pl.Out[pl.Tensor[[D, D], pl.FP32]]):
        xt: pl.Tile[[D, D], pl.FP32, pl.Mem.Vec] = pl.load(x, [0, 0], [D, D])
        pl.tpush_to_aic(xt, split=0)
        pl.tpush_to_aic(xt, split=0)

    @pl.function(type=pl.FunctionType.AIC)
    def cube(self, x: pl.Tensor[[D, D], pl.FP32], o: pl.Out[pl.Tensor[[D, D], pl.FP32]]) -> pl.Tensor[[D, D], pl.FP32]:
        got: pl.Tile[[D, D], pl.FP32, pl.Mem.Mat] = pl.tpop_from_aiv(split=0)
        acc: pl.Tile[[D, D], pl.FP32] = pl.matmul(pl.move(got, target_memory=pl.Mem.Left),
                                                  pl.move(got, target_memory=pl.Mem.Right))
        return pl.store(acc, [0, 0], o)

    @pl.function(type=pl.FunctionType.Group)
    def group(self, x: pl.Tensor[[D, D], pl.FP32], o: pl.Out[pl.Tensor[[D, D], pl.FP32]]) -> pl.Tensor[[D, D], pl.FP32]:
        self.vec(x, o)
        return self.cube(x, o)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[D, D], pl.FP32], o: pl.Out[pl.Tensor[[D, D], pl.FP32]]) -> pl.Tensor[[D, D], pl.FP32]:
        return self.group(x, o)


@pl.program
class Ungrouped:
    @pl.function(type=pl.FunctionType.AIV)
    def vec(self, x: pl.Tensor[[D, D], pl.FP32], o: pl.Out[pl.Tensor[[D, D], pl.FP32]]):
        xt: pl.Tile[[D, D], pl.FP32, pl.Mem.Vec] = pl.load(x, [0, 0], [D, D])
        pl.tpush_to_aic(xt, split=0)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[D, D], pl.FP32], o: pl.Out[pl.Tensor[[D, D], pl.FP32]]) -> pl.Tensor[[D, D], pl.FP32]:
        self.vec(x, o)
        return o


@pl.program
class BarrierInLoop:
    @pl.function(type=pl.FunctionType.InCore)
    def step(self, x: pl.Tensor[[SR, SC], pl.FP32], out: pl.Out[pl.Tensor[[SR, SC], pl.FP32]]) -> pl.Tensor[[SR, SC], pl.FP32]:
        for _ in pl.range(2):
            xt = pl.load(x, [0, 0], [SR, SC])
            pl.system.syncall(core_type="aiv_only")
            out = pl.store(xt, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[SR, SC], pl.FP32], out: pl.Out[pl.Tensor[[SR, SC], pl.FP32]]) -> pl.Tensor[[SR, SC], pl.FP32]:
        with pl.spmd(2):
            out = self.step(x, out)
        return out


@pl.program
class SpmdMixedRunTimeCount:
    @pl.function(type=pl.FunctionType.InCore)
    def band(self, x: pl.Tensor[[B * RT, K], pl.FP32], w: pl.Tensor[[K, 16], pl.FP32],
             out: pl.Out[pl.Tensor[[B * RT, 16], pl.FP32]]) -> pl.Tensor[[B * RT, 16], pl.FP32]:
        r0 = pl.tile.get_block_idx() * RT
        acc = pl.matmul(pl.mul(pl.load(x, [r0, 0], [RT, K]), 0.5), pl.load(w, [0, 0], [K, 16]))
        out = pl.store(pl.add(acc, 1.0), [r0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[B * RT, K], pl.FP32], w: pl.Tensor[[K, 16], pl.FP32], ns: pl.Tensor[[1], pl.INDEX],
             out: pl.Out[pl.Tensor[[B * RT, 16], pl.FP32]]) -> pl.Tensor[[B * RT, 16], pl.FP32]:
        n: pl.Scalar[pl.INDEX] = pl.tensor.read(ns, [0])
        with pl.spmd(n):
            out = self.band(x, w, out)
        return out


@pytest.mark.parametrize(("prog", "match"), [
    (TwoWay, "push tiles to each other; ptoas 0.1.1 has no cross-core pipe"),
    (PushInLoop, "tile.tpush_to_aic inside a loop or if; ptoas 0.1.1"),
    (Unpaired, "pipe v2c id 0 has 2 push\\(es\\) but 1 pop"),
    (Ungrouped, "uses tile.tpush_to_aic but is not called from a pl.FunctionType.Group"),
    (BarrierInLoop, "pl.system.syncall inside a loop or if; ptoas 0.1.1 has no SYNCALL"),
])
def test_what_gm_cannot_carry_is_a_located_error(prog, match):
    with pytest.raises(UnsupportedFeatureError, match=match) as exc:
        _lower(prog)
    assert exc.value.span.line > 0 and exc.value.span.file.endswith("test_cross_core_pipes.py")
    if prog is not Unpaired:
        assert exc.value.hint


def test_a_run_time_block_count_sizes_the_gm_bands_per_launch():
    prog = _lower(SpmdMixedRunTimeCount)
    names = _kernel_calls(prog)
    temps = [p for n in names for p in prog[n].params if p.name.endswith("_gm")]  # crossing tiles' GM bands
    assert temps and all(not isinstance(t.var_type.shape[0], int) for t in temps)  # rows known per launch
    assert {tuple(t.var_type.shape[1:]) for t in temps} == {(K,), (16,)}
    orch = prog.orchestrations()[0]
    creates = [c for c in calls(orch.body) if c.op == "tensor.create"]
    rows = [c.args[0].elements[0] for c in creates]
    assert rows and all(r.op is BinOp.Mul and r.rhs.value in (RT, K) and r.lhs.name.startswith("n") for r in rows)


@pytest.mark.sim
@pytest.mark.ptoas
@pytest.mark.parametrize("blocks", [2, 3])
def test_a_run_time_block_count_over_a_mixed_kernel_matches_numpy(blocks, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(blocks)
    x = rng.standard_normal((B * RT, K)).astype(np.float32)
    w = rng.standard_normal((K, 16)).astype(np.float32)
    o = np.zeros((B * RT, 16), np.float32)
    ir.compile(SpmdMixedRunTimeCount, platform="a2a3sim")(x, w, np.array([blocks], np.int64), o)
    want = np.zeros_like(o)
    want[:blocks * RT] = (0.5 * x[:blocks * RT]) @ w + 1
    np.testing.assert_allclose(o, want, rtol=1e-4, atol=1e-4)

