"""The jit signature rewrite: specialized scalars leave the signature as valid Python, on the same lines."""

from __future__ import annotations

import ast

import pytest

from pypto.ir.dtypes import DataType
from pypto.jit.meta import TensorMeta
from pypto.jit.specialize import rewrite_signature, source_info

META = TensorMeta((8, 8), DataType.FP32)


def only_scalar(n,):
    return n


def tail_two(a, m, n,):
    return a


def tail_multiline(
    a,
    m: int,
    n: float = 2.0,
):
    return a


def middle(a, m, b):
    return a


def defaults_kept(a, n: int = 4):
    return a


@pytest.mark.parametrize("func,scalars,params", [
    (only_scalar, {"n": 1}, []),
    (tail_two, {"m": 1, "n": 2}, ["a"]),
    (tail_multiline, {"m": 1, "n": 2.0}, ["a"]),
    (tail_multiline, {"n": 2.0}, ["a", "m"]),
    (middle, {"m": 1}, ["a", "b"]),
    (defaults_kept, {}, ["a", "n"]),
])
def test_removed_parameters_leave_valid_python_on_the_same_lines(func, scalars, params):
    info = source_info(func)
    text = rewrite_signature(info, {}, scalars, "@pl.function")
    tree = ast.parse(text).body[0]
    assert [a.arg for a in tree.args.args] == params
    assert tree.args.defaults == []  # defaults only feed signature mode; the DSL has none
    assert tree.body[-1].lineno == info.tree.body[-1].lineno  # body lines (and spans) unchanged
    assert text.count("\n") == info.text.count("\n")
