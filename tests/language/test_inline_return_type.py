"""An unannotated ``@pl.jit.inline`` helper's call has the type of the value it returns."""

from __future__ import annotations

import numpy as np

import pypto.language as pl
from pypto.ir.enums import FunctionType
from pypto.ir.types import TensorType

N, K = 512, 8


@pl.jit.inline
def _row_head(x: pl.Tensor[[4, N], pl.FP32], r: pl.Scalar[pl.INDEX]):
    ramp = pl.arange(0, [1, N], dtype=pl.UINT32)
    pairs = pl.sort32(x[r:r + 1, :], ramp)
    pairs = pl.mrgsort(pairs, block_len=64)
    pairs = pl.mrgsort(pairs, block_len=256)
    return pairs[:, 0:2 * K]


@pl.jit
def _top_values(x: pl.Tensor[[4, N], pl.FP32], vals: pl.Out[pl.Tensor[[4, K], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for r in pl.range(4):
            head = _row_head(x, r)  # no annotation on the helper: the call is typed by its return
            vals[r:r + 1, :] = pl.gather(head, mask_pattern=pl.tile.MaskPattern.P0101)
    return vals


@pl.inline
def _scaled(x: pl.Tensor[[4, N], pl.FP32]):
    y = pl.mul(x, 2.0)
    return y


@pl.inline
def _returns_nothing(x: pl.Tensor[[4, N], pl.FP32]):
    pl.mul(x, 2.0)


def test_the_helper_returns_the_type_of_its_returned_value() -> None:
    x = np.zeros((4, N), np.float32)
    prog = _top_values.specialize(*_top_values._classify(_top_values._bind((x, np.zeros((4, K), np.float32)), {})))
    helper = next(f for f in prog.functions if f.func_type is FunctionType.Inline)
    (ret,) = helper.return_types
    assert isinstance(ret, TensorType) and tuple(ret.shape) == (1, 2 * K) and ret.dtype == pl.FP32


def test_pl_inline_helpers_too_and_one_returning_nothing_has_no_type() -> None:
    (ret,) = _scaled.ir_function().return_types
    assert isinstance(ret, TensorType) and tuple(ret.shape) == (4, N)
    assert _returns_nothing.ir_function().return_types == ()


def test_top_values_through_an_unannotated_helper_match_numpy() -> None:
    rng = np.random.default_rng(5)
    x = rng.standard_normal((4, N)).astype(np.float32)
    vals = np.zeros((4, K), np.float32)
    _top_values(x, vals)
    np.testing.assert_array_equal(vals, -np.sort(-x, axis=1)[:, :K])
