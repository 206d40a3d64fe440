"""Signature-mode ``compile()`` / ``lower()``: specialize from the annotations, no sample arguments.

Also the compile page's edge case: a compile option passed as a keyword is a TypeError raised before
anything else (keyword names are checked against the kernel signature first).
"""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto.ir.function import Program
from pypto.ir.options import VerificationLevel
from pypto.passes.context import PassContext
from pypto.runtime import RunConfig

M = pl.dynamic("M")
PLATFORMS = ["a2a3sim", "a5sim"]


@pl.jit
def axpy(a: pl.Tensor[[64, 64], pl.FP32], b: pl.Tensor[[64, 64], pl.FP32],
         out: pl.Out[pl.Tensor[[64, 64], pl.FP32]], alpha: pl.Scalar[pl.FP32] = 2.0):
    with pl.at(level=pl.Level.CORE_GROUP):
        out[:] = pl.add(pl.mul(a, alpha), b)
    return out


@pl.jit
def rows_double(x: pl.Tensor[[M, 64], pl.FP32], out: pl.Out[pl.Tensor[[M, 64], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out = pl.store(pl.mul(pl.load(x, [0, 0], [32, 64]), 2.0), [0, 0], out)
    return out


@pl.jit
def bare(a: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out[:] = pl.add(a, a)
    return out


@pl.jit
def needs_n(a: pl.Tensor[[64, 64], pl.FP32], out: pl.Out[pl.Tensor[[64, 64], pl.FP32]], n: pl.Scalar[pl.INT32]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out[:] = pl.add(a, a)
    return out


def _data(rows: int = 64) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(7)
    a = rng.standard_normal((rows, 64)).astype(np.float32)
    return a, rng.standard_normal((rows, 64)).astype(np.float32), np.zeros((rows, 64), np.float32)


@pytest.mark.parametrize("platform", PLATFORMS)
def test_signature_compile_runs_and_shares_the_sample_argument_cache_entry(platform):
    cfg = RunConfig(platform=platform)
    compiled = axpy.compile(config=cfg)  # shapes from the annotations, alpha from its default
    assert compiled.param_names == ["a", "b", "out", "alpha"]  # specialized, yet a parameter (as upstream)
    a, b, out = _data()
    assert axpy.compile(a, b, out, config=cfg) is compiled  # the same key: sample args, default alpha
    axpy(a, b, out, config=cfg)
    np.testing.assert_allclose(out, 2.0 * a + b, rtol=1e-5, atol=1e-5)
    out[:] = 0
    compiled(a, b, out, 2.0, config=cfg)  # the artifact takes every parameter, as upstream's
    np.testing.assert_allclose(out, 2.0 * a + b, rtol=1e-5, atol=1e-5)
    assert axpy.compile(alpha=3.0, config=cfg) is not compiled


@pytest.mark.parametrize("platform", PLATFORMS)
def test_runtime_marker_keeps_the_scalar_a_parameter(platform):
    cfg = RunConfig(platform=platform)
    compiled = axpy.compile(alpha=pl.RUNTIME, config=cfg)
    assert compiled.param_names == ["a", "b", "out", "alpha"]
    a, b, out = _data()
    compiled(a, b, out, 0.5, config=cfg)
    np.testing.assert_allclose(out, 0.5 * a + b, rtol=1e-5, atol=1e-5)
    compiled(a, b, out, -1.0, config=cfg)  # one artifact serves every value
    np.testing.assert_allclose(out, b - a, rtol=1e-5, atol=1e-5)


def test_dynamic_axis_stays_dynamic_and_shares_the_cache_entry():
    cfg = RunConfig(platform="a2a3sim")
    compiled = rows_double.compile(config=cfg)
    x, _, out = _data(96)
    assert rows_double.compile(x, out, config=cfg) is compiled  # the pl.dynamic axis leaves the key
    rows_double(x, out, config=cfg)
    np.testing.assert_allclose(out[:32], 2.0 * x[:32], rtol=1e-6)
    orch = next(f for f in compiled.program.functions if f.name == "rows_double")
    assert orch.params[0].var_type.static_shape() is None  # the program is not specialized to 1 row


def test_signature_lower_with_roundtrip_verification():
    with PassContext(verification_level=VerificationLevel.ROUNDTRIP):
        program = axpy.lower(alpha=pl.RUNTIME)
    assert isinstance(program, Program)
    orch = next(f for f in program.functions if f.name == "axpy")
    assert [p.name.split("__")[0] for p in orch.params] == ["a", "b", "out", "alpha"]


def test_signature_mode_errors_name_the_parameter():
    with pytest.raises(TypeError, match="parameter 'a' has a bare 'pl.Tensor' annotation with no shape"):
        bare.compile()
    with pytest.raises(TypeError, match="parameter 'a' has a bare 'pl.Tensor' annotation"):
        bare.lower()
    with pytest.raises(TypeError, match="scalar parameter 'n' has no value.*compile\\(n=\\.\\.\\.\\)"):
        needs_n.compile()
    with pytest.raises(TypeError, match="scalar parameter 'n' must be an int/float/bool .* got str"):
        needs_n.lower(n="4")
    with pytest.raises(TypeError, match="received pl.RUNTIME, which is a compile-time marker"):
        axpy(*_data(), alpha=pl.RUNTIME)  # calling needs values


def test_compile_options_are_not_kernel_keywords():
    msg = "^@pl.jit function 'bare': got an unexpected keyword argument 'skip_ptoas'$"
    with pytest.raises(TypeError, match=msg):
        bare.compile(skip_ptoas=True)  # checked before the bare-annotation error of signature mode
    with pytest.raises(TypeError, match="got an unexpected keyword argument 'dump_passes'"):
        axpy.compile(dump_passes=False)
