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


@pl.jit.inline
def _add_one(a: pl.Tensor, c: pl.Tensor):
    with pl.at(level=pl.Level.CORE_GROUP):
        pl.store(pl.add(pl.load(a, [0, 0], [16, 16]), 1.0), [0, 0], c)
    return c


@pl.jit
def _tagged_through_inline(a: pl.Tensor, c: pl.Out[pl.Tensor]):
    mid = pl.create_tensor([16, 16], dtype=pl.FP32)
    pl.dump_tag(mid)
    mid = _add_one(a, mid)
    c = _add_one(mid, c)
    return c


def test_a_tag_before_an_inline_call_reaches_its_spliced_scopes(tmp_path) -> None:
    from pypto.passes.inline_functions import InlineFunctions

    x = np.arange(256, dtype=np.float32).reshape(16, 16)
    prog = _tagged_through_inline.specialize(*_tagged_through_inline._classify(
        _tagged_through_inline._bind((x, np.zeros_like(x)), {})))
    entry = next(f for f in prog.functions if f.name == "_tagged_through_inline")
    assert 'attrs={"dump_tags": [mid]}' in prog.as_python()
    inlined = next(f for f in InlineFunctions()(prog).functions if f.name == "_tagged_through_inline")
    scopes = _scopes(inlined)
    # the tag names the tensor as created: the first call passes it, the second its next version
    assert [[d.name for d in s.dumps] for s in scopes] == [["mid"], []]
    assert entry is not None
    c = np.zeros_like(x)
    _tagged_through_inline(x, c)
    np.testing.assert_array_equal(c, x + 2)


def test_a_tag_with_no_scope_or_inline_call_after_it_is_a_located_error() -> None:
    text = '''
import pypto.language as pl

@pl.function(type=pl.FunctionType.Orchestration)
def f(a: pl.Tensor[[16, 16], pl.FP32]) -> pl.Tensor[[16, 16], pl.FP32]:
    pl.dump_tag(a)
    return a
'''
    with pytest.raises(ParserError, match="not followed by any pl.at.* scope or inline-function call"):
        pl.parse(text)


SUBMIT = '''
import pypto.language as pl

@pl.program
class Dumps:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 16], pl.FP32], o: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        return pl.store(pl.load(x, [0, 0], [16, 16]), [0, 0], o)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 16], pl.FP32], o: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        with pl.manual_scope():
            o, _ = pl.submit(self.k, x, o, dumps=[x])
        return o
'''


def test_submit_dumps_mark_the_named_arguments(tmp_path) -> None:
    from pathlib import Path

    from pypto import ir

    prog = pl.parse(SUBMIT)
    assert '"dump_args": [0]' in prog.as_python()
    compiled = ir.compile(prog, output_dir=str(tmp_path), skip_ptoas=True)
    cpp = (Path(compiled.output_dir) / "orchestration" / "main.cpp").read_text()
    assert ".dump(" in cpp


def test_submit_dumps_of_a_value_that_is_not_an_argument_is_a_located_error() -> None:
    with pytest.raises(ParserError, match="which is not an argument of the call") as ei:
        pl.parse(SUBMIT.replace("dumps=[x]", "dumps=[o, pl.create_tensor([4, 4], dtype=pl.FP32)]"))
    assert ei.value.span.line == 13
