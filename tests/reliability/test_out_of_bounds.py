"""Out-of-bounds tensor windows are errors (findings D1, D5): a located UserError at compile time when the
window is static, a KernelFaultError naming task, kernel, core, tensor and window at run time otherwise —
never NaNs with success, heap corruption or a signal."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from relkit import needs_gxx

import pypto.language as pl
from pypto.errors import UserError
from pypto.runtime import KernelFaultError, RunConfig

HERE = Path(__file__).name


def _line_of(text: str) -> int:
    src = Path(__file__).read_text().splitlines()
    return next(i for i, line in enumerate(src, 1) if text in line)


@pl.jit
def oob_load(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        ta = pl.load(a, [0, 0], [64, 64])
        tb = pl.load(b, [1000, 1000], [64, 64])  # OOB-LOAD
        pl.store(pl.add(ta, tb), [0, 0], out)
    return out


@pl.jit
def oob_store(a: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        pl.store(pl.load(a, [0, 0], [64, 64]), [32, 32], out)  # OOB-STORE
    return out


@pl.jit
def tile_bigger(a: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0, 0], [64, 64])  # TILE-BIGGER
        pl.store(t, [0, 0], out)
    return out


@pl.jit
def float_offset(a: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [0.5, 0], [64, 64])  # FLOAT-OFFSET
        pl.store(t, [0, 0], out)
    return out


@pl.jit
def huge_offset(a: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(a, [2**63, 0], [64, 64])  # HUGE-OFFSET
        pl.store(t, [0, 0], out)
    return out


def _f32(*shape: int) -> np.ndarray:
    return np.ones(shape, np.float32)


@pytest.mark.parametrize(("kernel", "args", "marker", "message"), [
    (oob_load, (_f32(64, 64), _f32(64, 64), _f32(64, 64)), "OOB-LOAD",
     "tile.load: window [1000:1064, 1000:1064] is out of bounds of the tensor of shape [64, 64]"),
    (oob_store, (_f32(64, 64), _f32(64, 64)), "OOB-STORE",
     "tile.store: window [32:96, 32:96] is out of bounds of the output tensor of shape [64, 64]"),
    (tile_bigger, (_f32(32, 32), _f32(32, 32)), "TILE-BIGGER",
     "tile.load: window [0:64, 0:64] is out of bounds of the tensor of shape [32, 32]"),
    (float_offset, (_f32(64, 64), _f32(64, 64)), "FLOAT-OFFSET", "'offsets' element 0.5 is not an integer"),
    (huge_offset, (_f32(64, 64), _f32(64, 64)), "HUGE-OFFSET",
     "'offsets' element 9223372036854775808 does not fit in int64"),
], ids=["load", "store", "tile-bigger-than-tensor", "float-offset", "offset-beyond-int64"])
def test_static_window_errors_are_located_user_errors(kernel, args, marker: str, message: str) -> None:
    with pytest.raises(UserError) as exc:
        kernel(*args)
    text = str(exc.value)
    assert message in text, text
    assert re.search(rf"{re.escape(HERE)}:{_line_of(marker)}:\d+: error: ", text), text


M = pl.dynamic("M")


@pl.jit.incore
def rows_kernel(x: pl.Tensor[[M, 128], pl.FP32], out: pl.Out[pl.Tensor[[M, 128], pl.FP32]]):
    for r in pl.range(0, M, 64):
        pl.store(pl.muls(pl.load(x, [r, 0], [64, 128]), 2.0), [r, 0], out)
    return out


@pl.jit
def dyn_rows(x: pl.Tensor[[M, 128], pl.FP32], out: pl.Out[pl.Tensor[[M, 128], pl.FP32]]):
    out = rows_kernel(x, out)
    return out


@pl.jit
def chunked(a: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for i in pl.range(8):
            pl.store(pl.load(a, [i * 64, 0], [64, 128]), [i * 64, 0], out)
    return out


@needs_gxx
@pytest.mark.sim
@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_dynamic_window_past_the_tensor_is_a_kernel_fault(platform: str) -> None:
    cfg = RunConfig(platform=platform)
    x = np.arange(128 * 128, dtype=np.float32).reshape(128, 128)
    out = np.zeros_like(x)
    dyn_rows(x, out, config=cfg)  # M = 128: two whole tiles, in bounds
    np.testing.assert_array_equal(out, 2 * x)
    x96, out96 = x[:96].copy(), np.zeros((96, 128), np.float32)
    with pytest.raises(KernelFaultError) as exc:
        dyn_rows(x96, out96, config=cfg)  # M = 96: the second 64-row tile reads rows 64..127
    text = str(exc.value)
    assert re.search(r"kernel fault in task 0 \(kernel 'rows_kernel', func_id \d+\) on AIV core \d+", text), text
    assert "TLOAD of a 64x128 window: GM out of bounds: tensor 'x' (argument 0) has 12288 elements" in text, text
    assert "the window touches elements [8192, 16383]" in text, text


@needs_gxx
@pytest.mark.sim
@pytest.mark.parametrize(("rows_in", "rows_out", "what"), [(128, 512, "TLOAD of a 64x128 window: GM out of bounds: tensor 'a'"),
                                                      (512, 128, "TSTORE of a 64x128 window: GM out of bounds: tensor 'out'")])
def test_loop_past_a_small_tensor_is_a_kernel_fault(rows_in: int, rows_out: int, what: str) -> None:
    a, out = np.ones((rows_in, 128), np.float32), np.zeros((rows_out, 128), np.float32)
    with pytest.raises(KernelFaultError, match=re.escape(what)):
        chunked(a, out)
