"""ExpandMixedKernel (cube+vector kernels split into AIC/AIV stages through GM temps) and
OutlineIncoreScopes regions writing several tensors; structure after the pipeline and sim runs."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import UnsupportedFeatureError
from pypto.ir import AssignStmt, Call, FunctionType, GlobalVar, ParamDirection, TupleGetItem
from pypto.ir.properties import IRProperty
from pypto.ir.stmt import flatten, preorder
from pypto.ir.verifier import calls, verify

M = 64


@pl.jit
def fused_linear(x: pl.Tensor, w: pl.Tensor, bias: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        a_l1 = pl.tile.load(x, [0, 0], [64, 64], [64, 64], target_memory=pl.Mem.Mat)
        b_l1 = pl.tile.load(w, [0, 0], [64, 64], [64, 64], target_memory=pl.Mem.Mat)
        a_l0 = pl.tile.move(a_l1, target_memory=pl.Mem.Left)
        b_l0 = pl.tile.move(b_l1, target_memory=pl.Mem.Right)
        c = pl.tile.matmul(a_l0, b_l0)
        bt = pl.tile.load(bias, [0, 0], [64, 64], [64, 64], target_memory=pl.Mem.Vec)
        r = pl.tile.relu(pl.tile.add(c, bt))
        pl.tile.store(r, [0, 0], y)
    return y


@pl.jit
def fused_linear_tensor(x: pl.Tensor, w: pl.Tensor, bias: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        y[:] = pl.relu(pl.add(pl.matmul(x, w), bias))
    return y


@pl.jit
def scale_matmul_bias(x: pl.Tensor, w: pl.Tensor, bias: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        xv = pl.tile.load(x, [0, 0], [64, 64], [64, 64], target_memory=pl.Mem.Vec)
        xm = pl.tile.move(pl.tile.muls(xv, 2.0), target_memory=pl.Mem.Mat)
        wm = pl.tile.load(w, [0, 0], [64, 64], [64, 64], target_memory=pl.Mem.Mat)
        c = pl.tile.matmul(pl.tile.move(xm, target_memory=pl.Mem.Left), pl.tile.move(wm, target_memory=pl.Mem.Right))
        bt = pl.tile.load(bias, [0, 0], [64, 64], [64, 64], target_memory=pl.Mem.Vec)
        pl.tile.store(pl.tile.add(c, bt), [0, 0], y)
    return y


@pl.jit
def mixed_loop(x: pl.Tensor, w: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for _i in pl.range(32):  # too many iterations to unroll (a 2-iteration loop would be)
            # the cube half reads y, which the vector half writes: it cannot be split in two loops either
            a = pl.tile.load(y, [0, 0], [64, 64], [64, 64], target_memory=pl.Mem.Mat)
            b = pl.tile.load(w, [0, 0], [64, 64], [64, 64], target_memory=pl.Mem.Mat)
            c = pl.tile.matmul(pl.tile.move(a, target_memory=pl.Mem.Left), pl.tile.move(b, target_memory=pl.Mem.Right))
            pl.tile.store(pl.tile.relu(c), [0, 0], y)
    return y


@pl.jit
def two_outputs(a: pl.Tensor, b: pl.Tensor, o1: pl.Out[pl.Tensor], o2: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        o1[:] = a + b
        o2[:] = a * b
    with pl.at(level=pl.Level.CORE_GROUP):
        o1[:] = o1 + o2
    return o1, o2


@pl.jit
def passes_tensor(a: pl.Tensor, o1: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = a + a
    with pl.at(level=pl.Level.CORE_GROUP):
        o1[:] = t
    return o1


@pl.jit
def leaks_tile(a: pl.Tensor, o1: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0], [M, M])
    with pl.at(level=pl.Level.CORE_GROUP):
        pl.store(t, [0, 0], o1)
    return o1


def _inputs(n: int, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.standard_normal((M, M)).astype(np.float32) for _ in range(n)]


def _op_names(body) -> set[str]:
    return {c.op for c in calls(body) if isinstance(c.op, str)}


def _kernel_calls(prog) -> list[str]:
    orch = prog.orchestrations()[0]
    return [s.value.op.name for s in preorder(orch.body)
            if isinstance(s, AssignStmt) and isinstance(s.value, Call) and isinstance(s.value.op, GlobalVar)]


def _creates(prog) -> int:
    orch = prog.orchestrations()[0]
    return sum(1 for s in preorder(orch.body) if isinstance(s, AssignStmt) and isinstance(s.value, Call)
               and s.value.op == "tensor.create")


@pytest.mark.parametrize("fn", [fused_linear, fused_linear_tensor])
def test_cube_then_vector_splits_into_aic_and_aiv(fn):
    prog = fn.lower(*_inputs(4))
    name = f"{fn.__name__}_incore_0"
    aic, aiv = prog[f"{name}_aic"], prog[f"{name}_aiv"]
    assert (aic.func_type, aiv.func_type) == (FunctionType.AIC, FunctionType.AIV)
    assert not any(f.func_type is FunctionType.InCore for f in prog.functions)
    assert _kernel_calls(prog) == [aic.name, aiv.name]
    assert _creates(prog) == 1
    # the AIC stores the Acc tile into a GM temp (Out); the AIV loads it (In) and writes y
    assert aic.param_directions[-1] is ParamDirection.Out and aic.params[-1].name.endswith("_gm")
    assert aiv.params[0].name == aic.params[-1].name and aiv.param_directions[0] is ParamDirection.In
    assert "tile.matmul" in _op_names(aic.body) and "tile.matmul" not in _op_names(aiv.body)
    assert verify(prog, {IRProperty.MixedKernelExpanded}) == []


def test_vector_cube_vector_makes_three_stages():
    prog = scale_matmul_bias.lower(*_inputs(4))
    kinds = [prog[n].func_type for n in _kernel_calls(prog)]
    assert kinds == [FunctionType.AIV, FunctionType.AIC, FunctionType.AIV]
    assert _creates(prog) == 2
    cube = prog[_kernel_calls(prog)[1]]
    # the vector->cube move became a load of the GM temp straight into Mat
    loads = [s.value for s in flatten(cube.body) if isinstance(s, AssignStmt) and isinstance(s.value, Call)
             and s.value.op == "tile.load"]
    assert any(ld.args[0] is cube.params[0] and ld.kwargs["target_memory"] is pl.Mem.Mat for ld in loads)


def test_loop_mixing_cube_and_vector_is_rejected():
    with pytest.raises(UnsupportedFeatureError, match="for-loop that mixes cube ops .* with vector ops") as exc:
        mixed_loop.lower(*_inputs(3))
    assert exc.value.span.line > 0
    assert "(both halves touch 'y' and one of them writes it)" in str(exc.value)


def test_region_writing_two_tensors_returns_a_tuple():
    prog = two_outputs.lower(*_inputs(4))
    k0 = prog["two_outputs_incore_0"]
    assert [d for d in k0.param_directions] == [ParamDirection.In, ParamDirection.In, ParamDirection.Out,
                                                ParamDirection.Out]
    assert len(k0.return_types) == 2
    assert prog["two_outputs_incore_1"].param_directions[0] is ParamDirection.InOut
    orch = prog.orchestrations()[0]
    items = [s for s in preorder(orch.body) if isinstance(s, AssignStmt) and isinstance(s.value, TupleGetItem)]
    assert [s.value.index for s in items] == [0, 1]


def test_tensor_escaping_a_region_goes_through_a_gm_buffer():
    prog = passes_tensor.lower(*_inputs(2))
    orch = prog.orchestrations()[0]
    assert _creates(prog) == 1 and len(_kernel_calls(prog)) == 2
    assert orch is not None


def test_tile_escaping_a_region_is_rejected():
    with pytest.raises(UnsupportedFeatureError, match="computed inside a pl.at\\(CORE_GROUP\\) region is used"):
        leaks_tile.lower(*_inputs(2))


def _run(fn, args, platform, tmp_path):
    from pypto.runtime import RunConfig

    fn(*args, config=RunConfig(platform=platform, save_kernels_dir=str(tmp_path / "build")))


@pytest.mark.sim
@pytest.mark.ptoas
@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
@pytest.mark.parametrize("fn", [fused_linear, fused_linear_tensor])
def test_fused_linear_matches_numpy(fn, platform, tmp_path):
    x, w, bias = _inputs(3, seed=1)
    y = np.zeros_like(x)
    _run(fn, (x, w, bias, y), platform, tmp_path)
    np.testing.assert_allclose(y, np.maximum(x @ w + bias, 0), rtol=1e-4, atol=1e-4)


@pytest.mark.sim
@pytest.mark.ptoas
def test_three_stage_kernel_matches_numpy(tmp_path):
    x, w, bias = _inputs(3, seed=2)
    y = np.zeros_like(x)
    _run(scale_matmul_bias, (x, w, bias, y), "a2a3sim", tmp_path)
    np.testing.assert_allclose(y, (2 * x) @ w + bias, rtol=1e-4, atol=1e-4)


@pytest.mark.sim
@pytest.mark.ptoas
def test_two_output_regions_match_numpy(tmp_path):
    a, b = _inputs(2, seed=3)
    o1, o2 = np.zeros_like(a), np.zeros_like(a)
    _run(two_outputs, (a, b, o1, o2), "a2a3sim", tmp_path)
    np.testing.assert_allclose(o2, a * b, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(o1, a + b + a * b, rtol=1e-5, atol=1e-5)
