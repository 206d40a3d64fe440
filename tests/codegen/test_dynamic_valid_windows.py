"""A window whose valid extent is computed in the kernel: ``valid = pl.min(256, n - s0)`` (integer min/max
lower without arith.minsi/maxsi/select, which ptoas 0.1.1 lacks) and an N-D window with a run-time valid
extent (the 2-D tile gets the flattened valid region)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir

SRC = """import pypto.language as pl

@pl.program
class Valid:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, s: pl.Tensor[[{shape}], pl.FP32], lens: pl.Tensor[[1], pl.INT32],
             out: pl.Out[pl.Tensor[[3, 8], pl.FP32]]) -> pl.Tensor[[3, 8], pl.FP32]:
        n = pl.read(lens, [0])
        blocks = (n + 255) // 256
        with pl.at(level=pl.Level.CORE_GROUP):
            for sb in pl.range(blocks):
                s0 = sb * 256
                valid = pl.{fn}(256, n - s0)
                w = pl.slice(s, {window}, {offset}, valid_shape={valid_shape})
                p = pl.fillpad({pre}w{post}, pad_value=pl.PadValue.min)
                m = pl.row_max(pl.reshape(p, [8, 256]))
                out = pl.assemble(out, pl.reshape(m, [1, 8]), [sb, 0])
        return out
"""
ND = {"shape": "3, 1, 8, 256", "window": "[1, 1, 8, 256]", "offset": "[sb, 0, 0, 0]",
      "valid_shape": "[1, 1, 8, valid]"}
FLAT = {"shape": "8, 768", "window": "[8, 256]", "offset": "[0, s0]", "valid_shape": "[8, valid]"}


def _src(layout: dict[str, str], fn: str = "min", reshaped: bool = False) -> str:
    """``reshaped``: the partly valid N-D window is reshaped to its 2-D shape before the fillpad."""
    pre, post = ("pl.reshape(", ", [8, 256])") if reshaped else ("", "")
    return SRC.format(fn=fn, pre=pre, post=post, **layout)


def _want(blocks: np.ndarray, n: int) -> np.ndarray:
    """``blocks``: [3, 8, 256]; row maxima of the first ``min(256, n - 256 * sb)`` columns of block sb."""
    return np.stack([blocks[sb, :, :max(1, min(256, n - sb * 256))].max(1) for sb in range(3)])


def test_min_lowers_to_compare_and_index_arithmetic(tmp_path: Path) -> None:
    ir.compile(pl.parse(_src(FLAT)), output_dir=str(tmp_path), skip_ptoas=True)
    (pto,) = tmp_path.glob("kernels/*/*.pto")
    text = pto.read_text()
    assert "arith.minsi" not in text and "arith.select" not in text
    assert "arith.cmpi slt" in text and "arith.index_cast" in text
    assert "v_col=?" in text  # the loaded tile's valid width is the run-time value


def test_max_lowers_too(tmp_path: Path) -> None:
    ir.compile(pl.parse(_src(FLAT, "max")), output_dir=str(tmp_path), skip_ptoas=True)
    (pto,) = tmp_path.glob("kernels/*/*.pto")
    assert "arith.maxsi" not in pto.read_text() and "arith.cmpi sgt" in pto.read_text()


@pytest.mark.parametrize("reshaped", [False, True])
def test_an_nd_window_keeps_its_runtime_valid_width(tmp_path: Path, reshaped: bool) -> None:
    ir.compile(pl.parse(_src(ND, reshaped=reshaped)), output_dir=str(tmp_path), skip_ptoas=True)
    (pto,) = tmp_path.glob("kernels/*/*.pto")
    assert "rows=8, cols=256, v_row=8, v_col=?" in pto.read_text()


@pytest.mark.sim
@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
@pytest.mark.parametrize("layout", ["flat", "nd", "nd_reshaped"])
def test_windows_match_numpy(platform: str, layout: str, tmp_path: Path) -> None:
    blocks = np.random.default_rng(7).standard_normal((3, 8, 256)).astype(np.float32)
    nd = layout.startswith("nd")
    s = blocks.reshape(3, 1, 8, 256) if nd else np.ascontiguousarray(blocks.transpose(1, 0, 2).reshape(8, 768))
    src = _src(ND if nd else FLAT, reshaped=layout == "nd_reshaped")
    compiled = ir.compile(pl.parse(src), output_dir=str(tmp_path), platform=platform)
    for n in (700, 512, 3):
        out = np.zeros((3, 8), np.float32)
        compiled(s, np.array([n], np.int32), out)
        want = _want(blocks, n)
        used = -(-n // 256)
        np.testing.assert_allclose(out[:used], want[:used], rtol=1e-6, atol=1e-6)
