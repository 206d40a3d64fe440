"""A merge of separate sorted lists at the top of a kernel (pl.mrgsort(a, b[, c[, d]])) runs on ptoas 0.1.1
as one merge of a GM row the lists fill (two tasks cut at a barrier); a window write into a kernel's own
pl.full / pl.create_tensor is a tile.assemble of it. Checked on the simulators against numpy."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir

W = 128  # values per list: sort32 + one mrgsort give a sorted list of 2 * W slots


def _merge(k: int) -> str:
    lists = "\n".join(
        f"            s{i} = pl.mrgsort(pl.sort32(x[:, {i * W}:{(i + 1) * W}], pl.arange({i * W}, [1, {W}], "
        f"dtype=pl.UINT32)), block_len=64)" for i in range(k))
    return f"""import pypto.language as pl

@pl.program
class Merge:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[1, {k * W}], pl.FP32], vals: pl.Out[pl.Tensor[[1, {k * W}], pl.FP32]],
             idx: pl.Out[pl.Tensor[[1, {k * W}], pl.INT32]], y: pl.Out[pl.Tensor[[1, {W}], pl.FP32]]) -> pl.Tensor[[1, {k * W}], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            head = pl.muls(x[:, 0:{W}], 2.0)
{lists}
            m = pl.mrgsort({", ".join(f"s{i}" for i in range(k))})
            vals[:, :] = pl.gather(m, mask_pattern=pl.tile.MaskPattern.P0101)
            idx[:, :] = pl.gather(m, mask_pattern=pl.tile.MaskPattern.P1010, output_dtype=pl.INT32)
            y[:, :] = pl.adds(head, 1.0)
        return vals
"""


@pytest.mark.parametrize(("k", "platform"), [(2, "a2a3sim"), (3, "a2a3sim"), (4, "a2a3sim"), (2, "a5sim")])
def test_a_merge_of_sorted_lists_is_a_stable_descending_sort(k, platform, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    compiled = ir.compile(pl.parse(_merge(k)), platform=platform)
    text = "\n".join(p.read_text() for p in Path(compiled.output_dir).glob("ptoas/*.pto"))
    assert f"blockLen = {2 * W}" in text and text.count("func.func") >= 2  # one merge, cut in two kernels
    x = np.random.default_rng(k).standard_normal((1, k * W)).astype(np.float32)
    x[0, 5] = x[0, (k - 1) * W + 9] = 7.0  # a tie across lists: the earlier list's entry first
    x[0, W + 11] = -3.0e38  # near the lowest float: still ahead of the unused runs
    vals, idx = np.zeros((1, k * W), np.float32), np.zeros((1, k * W), np.int32)
    y = np.zeros((1, W), np.float32)
    compiled(x, vals, idx, y)
    order = np.argsort(-x, axis=1, kind="stable")
    np.testing.assert_array_equal(idx, order)
    np.testing.assert_array_equal(vals, np.take_along_axis(x, order, axis=1))
    assert list(idx[0, :2]) == [5, (k - 1) * W + 9] and idx[0, -1] == W + 11
    np.testing.assert_array_equal(y, x[:, :W] * 2 + 1)  # a tile computed before the merge, used after it


WINDOWS = """import pypto.language as pl

@pl.program
class Windows:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[4, 32], pl.FP32], out: pl.Out[pl.Tensor[[4, 96], pl.FP32]]) -> pl.Tensor[[4, 96], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            row = pl.full([4, 96], dtype=pl.FP32, value=-1.0)
            row = pl.assemble(row, pl.exp(a), [0, 0])
            row = pl.assemble(row, pl.muls(a, 3.0), [0, 64])
            out[:, :] = row
        return out
"""


def test_window_writes_into_a_kernel_tile_assemble_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    compiled = ir.compile(pl.parse(WINDOWS), platform="a2a3sim")
    a = np.random.default_rng(0).standard_normal((4, 32)).astype(np.float32)
    out = np.zeros((4, 96), np.float32)
    compiled(a, out)
    want = np.full((4, 96), -1.0, np.float32)
    want[:, :32], want[:, 64:] = np.exp(a), a * 3
    np.testing.assert_allclose(out, want, rtol=1e-6)
