"""MaterializeDistTensorCtx: a kernel's int-to-float cast of a scalar parameter moves to its callers."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.driver import lower
from pypto.ir.expr import UnaryExpr, UnOp
from pypto.ir.types import ScalarType
from pypto.ir.verifier import calls as calls_in
from pypto.toolchain.ptoas import find_ptoas


@pl.program
class Offset:
    @pl.function(type=pl.FunctionType.InCore)
    def shift(self, x: pl.Tensor[[8, 16], pl.FP32], y: pl.Out[pl.Tensor[[8, 16], pl.FP32]],
              k: pl.Scalar[pl.INT32]) -> pl.Tensor[[8, 16], pl.FP32]:
        kf = pl.cast(k, target_type=pl.FP32)
        t = pl.load(x, [0, 0], [8, 16])
        return pl.store(pl.add(t, kf), [0, 0], y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[8, 16], pl.FP32], y: pl.Out[pl.Tensor[[8, 16], pl.FP32]],
             k: pl.Scalar[pl.INT32]) -> pl.Tensor[[8, 16], pl.FP32]:
        return self.shift(x, y, k)


def test_the_cast_becomes_a_float_parameter_computed_by_the_caller():
    lowered = lower(Offset)
    kernel = lowered.get_function("shift")
    assert [p.type for p in kernel.params[3:]] == [ScalarType(pl.FP32)]
    call = next(c for c in calls_in(lowered.get_function("main").body) if getattr(c.op, "name", "") == "shift")
    extra = call.args[-1]
    assert isinstance(extra, UnaryExpr) and extra.op is UnOp.Cast and extra.dtype is pl.FP32
    assert call.attrs["arg_directions"][-1].name == "Scalar"


@pytest.mark.skipif(find_ptoas() is None or shutil.which("g++") is None, reason="needs ptoas and g++")
def test_a_runtime_int_offset_is_added_as_a_float(tmp_path):
    compiled = ir.compile(Offset, output_dir=tmp_path / "o", platform="a2a3sim", dump_passes=False)
    x = np.random.default_rng(0).standard_normal((8, 16)).astype(np.float32)
    for k in (0, 7, -3):
        y = np.zeros_like(x)
        compiled(x, y, k)
        np.testing.assert_allclose(y, x + k, rtol=1e-6, atol=1e-6)
