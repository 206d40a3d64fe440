"""ExpandMixedKernel: a loop adding a matmul into a carried vector tile carries the matmul's accumulator
instead (``pypto.passes._matmul_carry``): the loop becomes cube-only, the vector work after it a second stage.
A loop that does more with the carried tile keeps the located refusal."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import UnsupportedFeatureError
from pypto.ir.function import FunctionType
from tests.passes.filecheck import filecheck

M, K, N, KB = 16, 32, 64, 20  # KB > 16: too many iterations to unroll the mixed loop


@pl.jit
def zero_sum(x: pl.Tensor, w: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        acc = pl.full([M, N], dtype=pl.FP32, value=0.0)
        for kb in pl.range(KB):
            acc = pl.add(acc, pl.matmul(pl.slice(x, [M, K], [0, kb * K]), pl.slice(w, [K, N], [kb * K, 0])))
        y[:] = pl.exp(pl.mul(acc, 0.01))
    return y


@pl.jit
def biased_sum(x: pl.Tensor, w: pl.Tensor, bias: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        acc = pl.slice(bias, [M, N], [0, 0])
        for kb in pl.range(KB):
            acc = pl.add(pl.matmul(pl.slice(x, [M, K], [0, kb * K]), pl.slice(w, [K, N], [kb * K, 0])), acc)
        y[:] = pl.relu(acc)
    return y


@pl.jit
def transposed_sum(x: pl.Tensor, wt: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        acc = pl.full([M, N], dtype=pl.FP32, value=0.0)
        for kb in pl.range(KB):
            acc = pl.add(acc, pl.matmul(pl.slice(x, [M, K], [0, kb * K]), pl.slice(wt, [N, K], [0, kb * K]),
                                        b_trans=True))
        y[:] = pl.relu(acc)
    return y


@pl.jit
def read_twice(x: pl.Tensor, w: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        acc = pl.full([M, N], dtype=pl.FP32, value=0.0)
        for kb in pl.range(KB):
            acc = pl.add(acc, pl.matmul(pl.slice(x, [M, K], [0, kb * K]), pl.slice(w, [K, N], [kb * K, 0])))
            acc = pl.mul(acc, 0.5)  # the carried tile is read again: not a plain sum
        y[:] = acc
    return y


def _inputs(seed: int = 0, bias: bool = False) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((M, K * KB)).astype(np.float32)
    w = rng.standard_normal((K * KB, N)).astype(np.float32)
    out = (x, w, rng.standard_normal((M, N)).astype(np.float32)) if bias else (x, w)
    return (*out, np.zeros((M, N), np.float32))


def _kernels(prog, kind):
    return [f for f in prog.functions.values() if f.func_type is kind]


def test_a_matmul_sum_from_zero_is_carried_on_the_cube():
    prog = zero_sum.lower(*_inputs())
    (aic,), (aiv,) = _kernels(prog, FunctionType.AIC), _kernels(prog, FunctionType.AIV)
    filecheck(aic.as_python(), """
        CHECK: pl.tile.matmul(
        CHECK: pl.range(1, 20, init_values=
        CHECK-NOT: pl.tile.add(
        CHECK: pl.tile.matmul_acc(
        CHECK: pl.tile.store(
    """)
    filecheck(aiv.as_python(), """
        CHECK-NOT: pl.tile.full(
        CHECK: pl.tile.load(
        CHECK-NOT: pl.tile.add(
        CHECK: pl.tile.exp(
    """)


def test_a_matmul_sum_from_a_tile_adds_it_after_the_loop():
    prog = biased_sum.lower(*_inputs(bias=True))
    (aic,), (aiv,) = _kernels(prog, FunctionType.AIC), _kernels(prog, FunctionType.AIV)
    assert "pl.tile.add(" not in aic.as_python()
    filecheck(aiv.as_python(), """
        CHECK: pl.tile.add(
        CHECK: pl.tile.relu(
    """)


def test_a_loop_reading_its_sum_again_keeps_the_refusal():
    with pytest.raises(UnsupportedFeatureError, match="for-loop that mixes cube ops .* with vector ops") as exc:
        read_twice.lower(*_inputs())
    assert exc.value.span.line > 0


def _run(fn, args, platform, tmp_path):
    from pypto.runtime import RunConfig

    fn(*args, config=RunConfig(platform=platform, save_kernels_dir=str(tmp_path / "build")))


@pytest.mark.sim
@pytest.mark.ptoas
@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_zero_sum_matches_numpy(platform, tmp_path):
    x, w, y = _inputs(seed=1)
    _run(zero_sum, (x, w, y), platform, tmp_path)
    np.testing.assert_allclose(y, np.exp(0.01 * (x @ w)), rtol=1e-3, atol=1e-3)


@pytest.mark.sim
@pytest.mark.ptoas
def test_biased_sum_matches_numpy(tmp_path):
    x, w, bias, y = _inputs(seed=2, bias=True)
    _run(biased_sum, (x, w, bias, y), "a2a3sim", tmp_path)
    np.testing.assert_allclose(y, np.maximum(x @ w + bias, 0), rtol=1e-3, atol=1e-3)


@pytest.mark.sim
@pytest.mark.ptoas
def test_transposed_sum_matches_numpy(tmp_path):
    x, w, y = _inputs(seed=3)
    wt = np.ascontiguousarray(w.T)
    _run(transposed_sum, (x, wt, y), "a2a3sim", tmp_path)
    np.testing.assert_allclose(y, np.maximum(x @ w, 0), rtol=1e-3, atol=1e-3)
