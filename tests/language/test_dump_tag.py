"""pl.dump_tag / pl.at(..., dumps=[...]): parsed onto the scope, printed, re-parsed, checked."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import ParserError
from pypto.ir.stmt import InCoreScopeStmt, flatten
from pypto.ir.structural import structural_diff


@pl.jit
def marked(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]):
    pl.dump_tag(a)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="k", dumps=[b]):
        out[:] = pl.add(a, b)
    return out


def _scopes(fn) -> list[InCoreScopeStmt]:
    return [s for s in flatten(fn.body) if isinstance(s, InCoreScopeStmt)]


def test_marks_land_on_the_scope_and_round_trip() -> None:
    x = np.zeros((16, 16), np.float32)
    prog = marked.specialize(*marked._classify(marked._bind((x, x, x), {})))
    (fn,) = prog.functions
    (scope,) = _scopes(fn)
    assert [d.name for d in scope.dumps] == ["b", "a"]  # explicit first, then the pl.dump_tag marks
    text = prog.as_python()
    assert "dumps=[b, a]" in text
    again = pl.parse(text)
    assert structural_diff(prog, again) is None


def test_dump_tag_is_rejected_in_kernels_and_needs_a_tensor() -> None:
    text_kernel = '''
import pypto.language as pl

@pl.function(type=pl.FunctionType.InCore)
def k(a: pl.Tensor[[16, 16], pl.FP32]) -> pl.Tensor[[16, 16], pl.FP32]:
    pl.dump_tag(a)
    return a
'''
    with pytest.raises(ParserError, match="not supported in a kernel"):
        pl.parse(text_kernel)
    text_scalar = '''
import pypto.language as pl

@pl.function(type=pl.FunctionType.Orchestration)
def f(a: pl.Tensor[[16, 16], pl.FP32], n: pl.Scalar[pl.INT32]) -> pl.Tensor[[16, 16], pl.FP32]:
    pl.dump_tag(n)
    return a
'''
    with pytest.raises(ParserError, match="marks tensors"):
        pl.parse(text_scalar)
