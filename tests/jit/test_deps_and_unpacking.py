"""Scalar parameters of jit deps, tuple assignment of multi-result calls, dead loop-carried tiles.

Each construct runs on both sim platforms against numpy and lowers under ROUNDTRIP verification.
"""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import UserError
from pypto.ir.expr import ConstFloat
from pypto.ir.function import Program
from pypto.ir.options import VerificationLevel
from pypto.ir.stmt import ForStmt, preorder
from pypto.passes.context import PassContext
from pypto.runtime import RunConfig

PLATFORMS = ["a2a3sim", "a5sim"]


@pl.jit.incore
def scale_into(
    x: pl.Tensor[[64, 64], pl.FP32],
    out: pl.Out[pl.Tensor[[64, 64], pl.FP32]],
    s: pl.Scalar[pl.FP32],
):
    out = pl.store(pl.mul(pl.load(x, [0, 0], [64, 64]), s), [0, 0], out)
    return out


@pl.jit
def two_scales(
    x: pl.Tensor,
    out1: pl.Out[pl.Tensor],
    out2: pl.Out[pl.Tensor],
    k: float,
):
    out1 = scale_into(x, out1, 3)  # a literal: passed to the task at run time (as 3.0)
    out2 = scale_into(x, out2, k)  # the caller's own specialized scalar: the dep is specialized on it
    return out1, out2


@pl.jit.incore
def split_rows(x: pl.Tensor[[64, 64], pl.FP32], lo: pl.Out[pl.Tensor[[32, 64], pl.FP32]],
               hi: pl.Out[pl.Tensor[[32, 64], pl.FP32]]):
    lo = pl.store(pl.load(x, [0, 0], [32, 64]), [0, 0], lo)
    hi = pl.store(pl.mul(pl.load(x, [32, 0], [32, 64]), 2.0), [0, 0], hi)
    return lo, hi


@pl.jit
def halves(x: pl.Tensor, lo: pl.Out[pl.Tensor], hi: pl.Out[pl.Tensor]):
    lo, hi = split_rows(x, lo, hi)  # one call, one TupleGetItem per name
    return lo, hi


@pl.jit
def overwrite_in_loop(a: pl.Tensor, out: pl.Out[pl.Tensor], out2: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0], [32, 64])
        out = pl.store(t, [0, 0], out)
    with pl.at(level=pl.Level.CORE_GROUP):
        for i in pl.range(1, 2):
            t = pl.load(a, [i * 32, 0], [32, 64])  # overwritten before it is read: not loop-carried
            out = pl.store(pl.add(t, t), [i * 32, 0], out)
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0], [32, 64])  # t again, assigned before it is read: still not carried
        out2 = pl.store(pl.mul(t, 3.0), [0, 0], out2)
    return out, out2


@pl.jit.incore
def copy_n(x: pl.Tensor[[64, 64], pl.FP32], out: pl.Out[pl.Tensor[[64, 64], pl.FP32]], n: int):
    out = pl.store(pl.load(x, [0, 0], [64, 64]), [0, 0], out)
    return out


@pl.jit
def loop_calls(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    for i in pl.range(2):
        out = copy_n(x, out, i)
    return out


@pl.jit.incore
def copy_i32(x: pl.Tensor[[64, 64], pl.FP32], out: pl.Out[pl.Tensor[[64, 64], pl.FP32]], n: pl.Scalar[pl.INT32]):
    out = pl.store(pl.load(x, [0, 0], [64, 64]), [0, 0], out)
    return out


@pl.jit
def fractional_count(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    out = copy_i32(x, out, 2.5)
    return out


@pl.jit.incore
def pick_scale(a: pl.Tensor[[64, 64], pl.FP32], out: pl.Out[pl.Tensor[[64, 64], pl.FP32]],
               flag: pl.Scalar[pl.INDEX]):
    if flag == 1:
        s = pl.mul(pl.load(a, [0, 0], [64, 64]), 2.0)  # first defined in both branches: merged after the if
    else:
        s = pl.mul(pl.load(a, [0, 0], [64, 64]), 3.0)
    out = pl.store(s, [0, 0], out)
    return out


@pl.jit
def pick_two(a: pl.Tensor, out1: pl.Out[pl.Tensor], out0: pl.Out[pl.Tensor]):
    out1 = pick_scale(a, out1, 1)
    out0 = pick_scale(a, out0, 0)
    return out1, out0


def _x(shape=(64, 64)) -> np.ndarray:
    return np.random.default_rng(3).standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("platform", PLATFORMS)
def test_dep_scalar_literal_stays_a_runtime_argument(platform):
    x, out1, out2 = _x(), np.zeros((64, 64), np.float32), np.zeros((64, 64), np.float32)
    cfg = RunConfig(platform=platform)
    compiled = two_scales.compile(x, out1, out2, 0.25, config=cfg)
    funcs = {f.name: f for f in compiled.program.functions}
    runtime, specialized = funcs["scale_into"], funcs["scale_into_1"]
    assert [p.name for p in runtime.params] == ["x", "out", "s"]  # kept: the literal comes at run time
    assert [p.name for p in specialized.params] == ["x", "out"]  # k = 0.25 folded into the copy
    call = next(s.value for s in preorder(funcs["two_scales"].body)
                if getattr(getattr(s, "value", None), "args", None) and len(s.value.args) == 3)
    assert isinstance(call.args[2], ConstFloat) and call.args[2].value == 3.0  # typed like the parameter
    orch = next(compiled.output_dir.joinpath("orchestration").glob("*.cpp")).read_text()
    assert "add_scalar(to_u64(3.0f))" in orch
    two_scales(x, out1, out2, 0.25, config=cfg)
    np.testing.assert_allclose(out1, 3.0 * x, rtol=1e-6)
    np.testing.assert_allclose(out2, 0.25 * x, rtol=1e-6)


@pytest.mark.parametrize("platform", PLATFORMS)
def test_tuple_assignment_runs(platform):
    x = _x()
    lo, hi = np.zeros((32, 64), np.float32), np.zeros((32, 64), np.float32)
    halves(x, lo, hi, config=RunConfig(platform=platform))
    np.testing.assert_allclose(lo, x[:32], rtol=1e-6)
    np.testing.assert_allclose(hi, 2.0 * x[32:], rtol=1e-6)


@pytest.mark.parametrize("platform", PLATFORMS)
def test_dead_loop_carried_tile_is_not_carried(platform):
    a, out, out2 = _x(), np.zeros((64, 64), np.float32), np.zeros((32, 64), np.float32)
    program = overwrite_in_loop.lower(a, out, out2)
    loops = [s for f in program.functions for s in preorder(f.body) if isinstance(s, ForStmt)]
    assert loops and all(not ia.name.startswith("t__") for lp in loops for ia in lp.iter_args)
    kernels = [f for f in program.functions if f.is_incore]
    assert all(p.name.split("__")[0] != "t" for f in kernels for p in f.params)  # no tile parameter
    overwrite_in_loop(a, out, out2, config=RunConfig(platform=platform))
    np.testing.assert_allclose(out[:32], a[:32], rtol=1e-6)
    np.testing.assert_allclose(out[32:], 2.0 * a[32:], rtol=1e-6)
    np.testing.assert_allclose(out2, 3.0 * a[:32], rtol=1e-6)


@pytest.mark.parametrize("platform", PLATFORMS)
def test_name_defined_in_both_branches_is_defined_after_the_if(platform):
    a, out1, out0 = _x(), np.zeros((64, 64), np.float32), np.zeros((64, 64), np.float32)
    pick_two(a, out1, out0, config=RunConfig(platform=platform))
    np.testing.assert_allclose(out1, 2.0 * a, rtol=1e-6)
    np.testing.assert_allclose(out0, 3.0 * a, rtol=1e-6)


@pytest.mark.parametrize("kernel,args", [
    (two_scales, (_x(), np.zeros((64, 64), np.float32), np.zeros((64, 64), np.float32), 0.5)),
    (halves, (_x(), np.zeros((32, 64), np.float32), np.zeros((32, 64), np.float32))),
    (overwrite_in_loop, (_x(), np.zeros((64, 64), np.float32), np.zeros((32, 64), np.float32))),
    (pick_two, (_x(), np.zeros((64, 64), np.float32), np.zeros((64, 64), np.float32))),
], ids=["dep_scalars", "tuple_assign", "dead_carry", "branch_defs"])
def test_constructs_lower_under_roundtrip_verification(kernel, args):
    with PassContext(verification_level=VerificationLevel.ROUNDTRIP):
        assert isinstance(kernel.lower(*args), Program)


def test_runtime_scalar_argument_needs_a_scalar_parameter():
    with pytest.raises(UserError, match="argument 'n' of 'copy_n' is a runtime scalar; annotate the parameter "
                                        "as pl.Scalar"):
        loop_calls.lower(_x(), np.zeros((64, 64), np.float32))


def test_fractional_literal_for_an_integer_scalar_parameter_is_located():
    with pytest.raises(UserError, match="argument 2.5 of 'copy_i32' is passed to a INT32 parameter") as info:
        fractional_count.lower(_x(), np.zeros((64, 64), np.float32))
    assert info.value.span.line == fractional_count.func.__code__.co_firstlineno + 2
