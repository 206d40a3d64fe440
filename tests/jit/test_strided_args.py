"""A transposed tensor (``pl.transpose(k, 0, 1)``, a DN view) passed to a ``@pl.jit.incore`` kernel."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import PartialCodegenError, UserError
from pypto.runtime import RunConfig


@pl.jit.incore
def scores(q: pl.Tensor, kt: pl.Tensor, s: pl.Out[pl.Tensor]):
    a = pl.move(pl.load(q, [0, 0], [16, 64], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Left)
    b = pl.move(pl.load(kt, [0, 0], [64, 32], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Right)
    pl.store(pl.matmul(a, b), [0, 0], s)
    return s


@pl.jit
def attn(q: pl.Tensor, k: pl.Tensor, s: pl.Out[pl.Tensor]):
    kt = pl.transpose(k, 0, 1)
    s = scores(q, kt, s)
    return s


@pl.jit.incore
def scores_dense(q: pl.Tensor, kt: pl.Tensor[[64, 32], pl.FP32], s: pl.Out[pl.Tensor]):
    a = pl.move(pl.load(q, [0, 0], [16, 64], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Left)
    b = pl.move(pl.load(kt, [0, 0], [64, 32], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Right)
    pl.store(pl.matmul(a, b), [0, 0], s)
    return s


@pl.jit
def attn_dense(q: pl.Tensor, k: pl.Tensor, s: pl.Out[pl.Tensor]):
    kt = pl.transpose(k, 0, 1)
    s = scores_dense(q, kt, s)
    return s


def _inputs():
    rng = np.random.default_rng(5)
    return (rng.random((16, 64), dtype=np.float32), rng.random((32, 64), dtype=np.float32),
            np.zeros((16, 32), np.float32))


def test_a_bare_parameter_takes_the_arguments_strides():
    q, k, s = _inputs()
    kernel = attn.lower(q, k, s)["scores"]
    view = kernel.params[1].type.view
    assert view is not None and tuple(view.stride) == (1, 64) and view.layout is pl.TensorLayout.DN


@pytest.mark.sim
def test_the_kernel_reads_the_transposed_tensor(tmp_path, monkeypatch):
    monkeypatch.setenv("PYPTO_PROG_BUILD_DIR", str(tmp_path))
    q, k, s = _inputs()
    attn(q, k, s, config=RunConfig())
    np.testing.assert_allclose(s, q @ k.T, rtol=1e-5, atol=1e-5)


def test_a_dense_parameter_given_a_transposed_argument_is_a_located_error(tmp_path, monkeypatch):
    monkeypatch.setenv("PYPTO_PROG_BUILD_DIR", str(tmp_path))
    q, k, s = _inputs()
    with pytest.raises(PartialCodegenError) as ei:  # upstream's codegen error, holding the user's mistake
        attn_dense.compile(q, k, s, config=RunConfig())
    err = ei.value.user_error
    assert isinstance(err, UserError)
    assert "is a strided view (strides [1, 64], e.g. a pl.transpose) but parameter 'kt' declares a dense" in err.message
    assert err.span.line == _line_of("s = scores_dense(q, kt, s)")
    assert "pl.TensorView(stride=[1, 64]" in err.hint


def _line_of(text: str) -> int:
    lines = open(__file__).read().splitlines()
    return next(i for i, line in enumerate(lines, 1) if line.strip() == text)
