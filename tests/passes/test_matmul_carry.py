"""ExpandMixedKernel: a loop adding a matmul into a carried vector tile carries the matmul's accumulator
instead (``pypto.passes._matmul_carry``): the loop becomes cube-only, the vector work after it a second stage.
A loop that does more with the carried tile is split in two loops instead (``_loop_fission``)."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto.ir.function import FunctionType
from tests.passes.filecheck import filecheck

M, K, N, KB = 16, 32, 64, 20  # KB > 16: too many iterations to unroll the mixed loop


_SHAPES = {"x": "[M, K * KB]", "w": "[K * KB, N]", "wt": "[N, K * KB]", "bias": "[M, N]"}
ZERO = "pl.full([M, N], dtype=pl.FP32, value=0.0)"
X_BLOCK = "pl.slice(x, [M, K], [0, kb * K])"
PRODUCT = f"pl.matmul({X_BLOCK}, pl.slice(w, [K, N], [kb * K, 0]))"


def _sum_kernel(name: str, *steps: str, result: str, init: str = ZERO,
                inputs: tuple[str, ...] = ("x", "w")) -> str:
    """DSL source of ``name(*inputs, y)``: on one core group, ``acc = init``, then ``KB`` times the loop body
    ``steps`` (statements updating ``acc``), then ``y[:] = result``."""
    params = "".join(f"{t}: pl.Tensor[{_SHAPES[t]}, pl.FP32], " for t in inputs)
    body = "\n".join(" " * 16 + step for step in steps)
    return f"""import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.Orchestration)
    def {name}(self, {params}y: pl.Out[pl.Tensor[[M, N], pl.FP32]]) -> pl.Tensor[[M, N], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            acc = {init}
            for kb in pl.range(KB):
{body}
            y[:] = {result}
        return y
"""


ZERO_SUM = _sum_kernel("zero_sum", f"acc = pl.add(acc, {PRODUCT})", result="pl.exp(pl.mul(acc, 0.01))")
BIASED_SUM = _sum_kernel("biased_sum", f"acc = pl.add({PRODUCT}, acc)", result="pl.relu(acc)",
                         init="pl.slice(bias, [M, N], [0, 0])", inputs=("x", "w", "bias"))
TRANSPOSED_SUM = _sum_kernel(
    "transposed_sum", f"acc = pl.add(acc, pl.matmul({X_BLOCK}, pl.slice(wt, [N, K], [0, kb * K]), b_trans=True))",
    result="pl.relu(acc)", inputs=("x", "wt"))
# the carried tile is read again: not a plain sum
READ_TWICE = _sum_kernel("read_twice", f"acc = pl.add(acc, {PRODUCT})", "acc = pl.mul(acc, 0.5)", result="acc")


def _parse(src: str) -> pl.Program:
    return pl.parse(src, env={"M": M, "K": K, "N": N, "KB": KB})


def _lower(src: str) -> pl.Program:
    from pypto.driver import lower

    return lower(_parse(src))


def _inputs(seed: int = 0, bias: bool = False) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((M, K * KB)).astype(np.float32)
    w = rng.standard_normal((K * KB, N)).astype(np.float32)
    out = (x, w, rng.standard_normal((M, N)).astype(np.float32)) if bias else (x, w)
    return (*out, np.zeros((M, N), np.float32))


def _kernels(prog, kind):
    return [f for f in prog.functions.values() if f.func_type is kind]


def test_a_matmul_sum_from_zero_is_carried_on_the_cube():
    prog = _lower(ZERO_SUM)
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
    prog = _lower(BIASED_SUM)
    (aic,), (aiv,) = _kernels(prog, FunctionType.AIC), _kernels(prog, FunctionType.AIV)
    assert "pl.tile.add(" not in aic.as_python()
    filecheck(aiv.as_python(), """
        CHECK: pl.tile.add(
        CHECK: pl.tile.relu(
    """)


def test_a_loop_reading_its_sum_again_is_split_in_two_loops():
    # not a plain sum, so not carried on the cube; the loop is split instead (see test_loop_fission.py)
    prog = _lower(READ_TWICE)
    (aic,), (aiv,) = _kernels(prog, FunctionType.AIC), _kernels(prog, FunctionType.AIV)
    filecheck(aic.as_python(), """
        CHECK: pl.range(20)
        CHECK: pl.tile.matmul(
        CHECK: pl.tile.store(
    """)
    filecheck(aiv.as_python(), """
        CHECK: pl.range(20, init_values=
        CHECK: pl.tile.load(
        CHECK: pl.tile.add(
        CHECK: pl.tile.muls(
    """)


def _run(src, args, platform, tmp_path):
    from pypto import ir

    ir.compile(_parse(src), platform=platform, output_dir=str(tmp_path / "build"))(*args)


@pytest.mark.sim
@pytest.mark.ptoas
@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_zero_sum_matches_numpy(platform, tmp_path):
    x, w, y = _inputs(seed=1)
    _run(ZERO_SUM, (x, w, y), platform, tmp_path)
    np.testing.assert_allclose(y, np.exp(0.01 * (x @ w)), rtol=1e-3, atol=1e-3)


@pytest.mark.sim
@pytest.mark.ptoas
def test_biased_sum_matches_numpy(tmp_path):
    x, w, bias, y = _inputs(seed=2, bias=True)
    _run(BIASED_SUM, (x, w, bias, y), "a2a3sim", tmp_path)
    np.testing.assert_allclose(y, np.maximum(x @ w + bias, 0), rtol=1e-3, atol=1e-3)


@pytest.mark.sim
@pytest.mark.ptoas
def test_a_split_loop_reading_its_sum_again_matches_numpy(tmp_path):
    x, w, y = _inputs(seed=4)
    _run(READ_TWICE, (x, w, y), "a2a3sim", tmp_path)
    acc = np.zeros((M, N), np.float32)
    for kb in range(KB):
        acc = (acc + x[:, kb * K:(kb + 1) * K] @ w[kb * K:(kb + 1) * K]) * 0.5
    np.testing.assert_allclose(y, acc, rtol=1e-3, atol=1e-3)


@pytest.mark.sim
@pytest.mark.ptoas
def test_transposed_sum_matches_numpy(tmp_path):
    x, w, y = _inputs(seed=3)
    wt = np.ascontiguousarray(w.T)
    _run(TRANSPOSED_SUM, (x, wt, y), "a2a3sim", tmp_path)
    np.testing.assert_allclose(y, np.maximum(x @ w, 0), rtol=1e-3, atol=1e-3)
