"""@pl.jit: kinds, specialization and caching, Graph functions, errors that point into the user's file."""

from __future__ import annotations

import numpy as np
import pytest
from jit_kernels import graph_add, scaled, shape_error

import pypto.language as pl
from pypto import ir
from pypto.errors import SettingsError, UserError
from pypto.runtime import RunConfig


@pytest.fixture(autouse=True)
def _cwd(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


def test_repr_and_kind_options():
    assert repr(scaled) == "JITFunction('scaled', func_type='orchestration')"
    with pytest.raises(TypeError, match=r"@pl.jit.opaque does not accept a level= argument"):
        pl.jit.opaque(level=pl.Level.AIC)
    with pytest.raises(TypeError, match=r"@pl.jit.incore does not accept an auto_scope= argument"):
        pl.jit.incore(auto_scope=False)
    with pytest.raises(AttributeError):
        scaled.as_python  # noqa: B018


def test_graph_kernel_uses_host_build_graph_and_runs():
    a = np.full((64, 64), 1.5, np.float32)
    out = np.zeros_like(a)
    compiled = graph_add.compile(a, a, out, config=RunConfig(platform="a2a3sim"))
    assert compiled.runtime_name == "host_build_graph"
    assert compiled.program.functions[-1].func_type is ir.FunctionType.Graph
    graph_add(a, a, out, config=RunConfig(platform="a2a3sim"))
    np.testing.assert_allclose(out, 3.0)
    with pytest.raises(SettingsError, match="Graph function 'graph_add' requires runtime 'host_build_graph'"):
        ir.compile(compiled.program, dump_passes=False, skip_ptoas=True)


def test_scalar_specialization_and_cache_keys():
    a = np.ones((64, 64), np.float32)
    out = np.zeros_like(a)
    cfg = RunConfig(platform="a2a3sim", dump_passes=False)
    two = scaled.compile(a, out, 2.0, config=cfg)
    assert scaled.compile(a, out, 2.0, config=cfg) is two
    three = scaled.compile(a, out, 3.0, config=cfg)
    assert three is not two and three.param_names == ["a", "out"]
    bigger = scaled.compile(np.ones((128, 64), np.float32), np.zeros((128, 64), np.float32), 2.0, config=cfg)
    assert bigger is not two
    scaled(a, out, 3.0, config=cfg)
    np.testing.assert_allclose(out, 3.0)


def test_runtime_marker_and_bad_dtype_are_type_errors():
    a = np.ones((64, 64), np.float32)
    with pytest.raises(TypeError, match="received pl.RUNTIME, which is a compile-time marker"):
        scaled.compile(a, a, pl.RUNTIME)
    with pytest.raises(TypeError, match="complex64 is not supported"):
        scaled.compile(np.ones((4, 4), np.complex64), a, 1.0)


def test_source_errors_point_into_the_users_file():
    a, b = np.ones((64, 64), np.float32), np.ones((64, 32), np.float32)
    with pytest.raises(UserError) as ei:
        shape_error.compile(a, b, np.zeros_like(a))
    span = ei.value.span
    assert span.file.endswith("jit_kernels.py") and span.line == 23
    assert "shape mismatch [64, 64] vs [64, 32]" in str(ei.value)
    assert "out[:] = pl.add(a, b)" in str(ei.value)  # the quoted source line
