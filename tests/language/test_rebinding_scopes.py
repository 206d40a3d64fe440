"""A name rebound after loops and inside ifs: a read sees the most recent binding on its path, as in
Python, or gets a located error when the IR has no value for it there (a finished loop's local name)."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import UserError

TOL = {"rtol": 1e-5, "atol": 1e-5}
_LINES = {}


def _line(tag: str) -> int:
    """The line of this file whose comment is ``# <tag>``."""
    if not _LINES:
        with open(__file__) as f:
            for no, text in enumerate(f, 1):
                if "  # @" in text:
                    _LINES[text.rsplit("# @", 1)[1].strip()] = no
    return _LINES[tag]


@pl.jit
def earlier_loop_then_both_branches(a: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for i in pl.range(0, 2):
            t = pl.load(a, [i * 64, 0], [64, 64])
            pl.store(pl.adds(t, 5.0), [i * 64, 0], out)
        for j in pl.range(0, 2):
            if j == 0:
                t = pl.load(a, [j * 64, 0], [64, 64])
            else:
                t = pl.exp(pl.load(a, [j * 64, 0], [64, 64]))
            pl.store(t, [j * 64, 0], out)  # must read the if's t, not the first loop's
    return out


@pl.jit
def nested_loops_then_both_branches(a: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for i in pl.range(0, 2):
            for r in pl.range(0, 2):
                t = pl.load(a, [i * 64 + r * 32, 0], [32, 64])
                pl.store(pl.adds(t, 5.0), [i * 64 + r * 32, 0], out)
        for i in pl.range(0, 2):
            for r in pl.range(0, 2):
                if r == 0:
                    t = pl.neg(pl.load(a, [i * 64, 0], [32, 64]))
                else:
                    t = pl.exp(pl.load(a, [i * 64 + 32, 0], [32, 64]))
                pl.store(t, [i * 64 + r * 32, 0], out)
    return out


@pl.jit
def bound_before_then_both_branches(a: pl.Tensor, out: pl.Out[pl.Tensor]):
    for j in pl.range(0, 2):
        row = j * 32  # a scalar of the orchestration (ptoas 0.1.1 kernels cannot choose computed scalars)
        if j == 0:
            row = j * 32 + 96
        else:
            row = j * 64
        with pl.at(level=pl.Level.CORE_GROUP):
            t = pl.load(a, [j * 32, 0], [32, 64])
            if j == 0:
                t = pl.exp(pl.load(a, [j * 32, 0], [32, 64]))
            else:
                t = pl.neg(pl.load(a, [j * 32, 0], [32, 64]))
            pl.store(t, [row, 0], out)  # the scalar and the tile of the branch taken
    return out


@pl.jit
def bound_before_then_one_branch(a: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0], [64, 64])
        for j in pl.range(0, 2):
            if j == 1:
                t = pl.exp(pl.load(a, [64, 0], [64, 64]))
            pl.store(t, [j * 64, 0], out)  # j == 0: the value from before the loop
    return out


@pl.jit
def scalar_of_an_earlier_loop_then_one_branch(a: pl.Tensor, out: pl.Out[pl.Tensor]):
    for i in pl.range(0, 2):
        row = i * 64  # after the loop: 64, the last iteration's value
    for j in pl.range(0, 2):
        if j == 1:
            row = j * 0
        with pl.at(level=pl.Level.CORE_GROUP):
            pl.store(pl.exp(pl.load(a, [row, 0], [64, 64])), [row, 0], out)  # rows 64.., then rows 0..
    return out


def _data() -> tuple[np.ndarray, np.ndarray]:
    a = np.random.default_rng(7).random((128, 64), dtype=np.float32)
    return a, np.zeros_like(a)


def test_earlier_loop_name_rebound_in_both_branches_of_a_later_loop():
    a, out = _data()
    earlier_loop_then_both_branches(a, out)
    np.testing.assert_allclose(out, np.concatenate([a[:64], np.exp(a[64:])]), **TOL)


def test_nested_loops():
    a, out = _data()
    nested_loops_then_both_branches(a, out)
    ref = np.concatenate([-a[0:32], np.exp(a[32:64]), -a[64:96], np.exp(a[96:128])])
    np.testing.assert_allclose(out, ref, **TOL)


def test_scalar_and_tile_bound_before_and_rebound_in_both_branches():
    a, out = _data()
    bound_before_then_both_branches(a, out)
    ref = np.zeros_like(a)
    ref[64:96], ref[96:] = -a[32:64], np.exp(a[:32])  # rows 0..63 stay untouched
    np.testing.assert_allclose(out, ref, **TOL)


def test_bound_before_the_loop_and_rebound_in_one_branch():
    a, out = _data()
    bound_before_then_one_branch(a, out)
    np.testing.assert_allclose(out, np.concatenate([a[:64], np.exp(a[64:])]), **TOL)


def test_scalar_of_an_earlier_loop_keeps_its_last_value_on_the_other_path():
    a, out = _data()
    scalar_of_an_earlier_loop_then_one_branch(a, out)
    np.testing.assert_allclose(out, np.exp(a), **TOL)


# -- no value in the IR: located errors, never a dangling Var -------------------------------------


@pl.jit
def loop_local_read_after_the_loop(a: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for i in pl.range(0, 2):  # @loop-a
            t = pl.load(a, [i * 64, 0], [64, 64])
        pl.store(t, [0, 0], out)  # @read-a
    return out


@pl.jit
def earlier_loop_then_one_branch(a: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for i in pl.range(0, 2):  # @loop-b
            t = pl.load(a, [i * 64, 0], [64, 64])
            pl.store(t, [i * 64, 0], out)
        for j in pl.range(0, 2):
            if j == 1:  # @if-b
                t = pl.exp(pl.load(a, [j * 64, 0], [64, 64]))
            pl.store(t, [j * 64, 0], out)  # @read-b
    return out


@pl.jit
def loop_variable_read_after_the_loop(a: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for i in pl.range(0, 2):  # @loop-c
            pl.store(pl.load(a, [i * 64, 0], [64, 64]), [i * 64, 0], out)
        pl.store(pl.load(a, [0, 0], [64, 64]), [i * 64, 0], out)  # @read-c
    return out


def _error(kernel) -> UserError:
    a, out = _data()
    with pytest.raises(UserError) as info:
        kernel(a, out)
    err = info.value
    assert err.span is not None and err.span.file == __file__
    return err


def test_loop_local_read_after_the_loop_is_a_located_error():
    err = _error(loop_local_read_after_the_loop)
    assert err.span.line == _line("read-a")
    assert f"'t' is read here but is first bound inside the loop at {__file__}:{_line('loop-a')}:" in err.message
    assert "bind 't' before the loop" in err.hint


def test_earlier_loop_local_rebound_in_one_branch_is_a_located_error():
    err = _error(earlier_loop_then_one_branch)
    assert err.span.line == _line("read-b")
    assert f"bound in only one branch of the if at {__file__}:{_line('if-b')}:" in err.message
    assert f"from the loop at {__file__}:{_line('loop-b')}:" in err.message
    assert "assign it in both branches" in err.hint


def test_loop_variable_read_after_the_loop_is_a_located_error():
    err = _error(loop_variable_read_after_the_loop)
    assert err.span.line == _line("read-c")
    assert f"'i' is read here but is the loop variable or a carried name of the loop at {__file__}:" \
           f"{_line('loop-c')}:" in err.message


@pl.jit
def branches_of_two_shapes(a: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0], [64, 64])
        for j in pl.range(0, 2):
            if j == 0:  # @if-d
                t = pl.load(a, [0, 0], [32, 64])
            else:
                t = pl.load(a, [64, 0], [64, 64])
            pl.store(t, [0, 0], out)
    return out


def test_branches_binding_two_shapes_is_a_located_error():
    """Once stored the tile from before the loop (silently), then reached ptoas as an ill-typed merge."""
    err = _error(branches_of_two_shapes)
    assert err.span.line == _line("if-d")
    assert "'t' is pl.Tile[[32, 64], pl.FP32, pl.Mem.Vec] at the end of the then-branch but " \
           "pl.Tile[[64, 64], pl.FP32, pl.Mem.Vec] at the end of the else-branch" in err.message
