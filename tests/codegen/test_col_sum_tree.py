"""``col_sum(x, tmp)``: the binary-tree column sum, bit for bit against a numpy model of the tree.

ptoas 0.1.1 drops TCOLSUM's ``isBinary``, so pypto writes the tree out (pypto/codegen/pto_colsum.py).
FP16 sums round at every add, so the tree and the sequential sum differ in the last bits: both forms
are compared exactly with their own numpy model, for even and odd row counts (an odd level adds its
last row into row 0) on both simulators.
"""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir

SRC = """import pypto.language as pl

@pl.program
class ColSums:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[{R}, 64], pl.FP16], tree: pl.Out[pl.Tensor[[1, 64], pl.FP16]],
          seq: pl.Out[pl.Tensor[[1, 64], pl.FP16]]) -> pl.Tensor[[1, 64], pl.FP16]:
        t = pl.load(x, [0, 0], [{R}, 64])
        tmp = pl.tile.create([{R}, 64], dtype=pl.FP16, target_memory=pl.MemorySpace.Vec)
        tree = pl.store(pl.tile.col_sum(t, tmp), [0, 0], tree)
        seq = pl.store(pl.tile.col_sum(t), [0, 0], seq)
        return tree

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[{R}, 64], pl.FP16], tree: pl.Out[pl.Tensor[[1, 64], pl.FP16]],
             seq: pl.Out[pl.Tensor[[1, 64], pl.FP16]]) -> pl.Tensor[[1, 64], pl.FP16]:
        tree = self.k(x, tree, seq)
        return tree
"""


def tree_sum(x: np.ndarray) -> np.ndarray:
    buf, count = x.copy(), x.shape[0]
    while count > 1:
        half = count // 2
        buf[:half] = buf[0:2 * half:2] + buf[1:2 * half:2]
        if count % 2:
            buf[0] = buf[0] + buf[count - 1]
        count = half
    return buf[:1]


def sequential_sum(x: np.ndarray) -> np.ndarray:
    acc = x[0].copy()
    for row in x[1:]:
        acc = acc + row
    return acc[None]


@pytest.mark.sim
@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
@pytest.mark.parametrize("rows", [32, 14, 7])
def test_col_sum_with_a_scratch_is_the_fp16_binary_tree(rows, platform, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    compiled = ir.compile(pl.parse(SRC.replace("{R}", str(rows))), platform=platform)
    x = np.random.default_rng(rows).standard_normal((rows, 64)).astype(np.float16) * np.float16(8)
    tree, seq = np.zeros((1, 64), np.float16), np.zeros((1, 64), np.float16)
    compiled(x, tree, seq)
    want_tree, want_seq = tree_sum(x), sequential_sum(x)
    assert not np.array_equal(want_tree, want_seq)  # the inputs tell the two orders apart
    np.testing.assert_array_equal(tree, want_tree)
    np.testing.assert_array_equal(seq, want_seq)
