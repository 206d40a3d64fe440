"""K-split matmul: the reduction dimension is processed in chunks that accumulate in one Acc tile.

``matmul_acc_unrolled`` writes the two K=32 chunks out: ``pl.matmul`` starts the accumulator,
``pl.matmul_acc`` adds the second product. ``matmul_acc_loop`` carries the accumulator through a
``pl.range`` loop over the remaining K=16 chunks (``init_values`` + ``pl.yield_``).

    python examples/intermediate/04_matmul_acc.py [a2a3sim|a5sim]
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _common import check, platform_from_argv, rand  # noqa: E402

import pypto.language as pl  # noqa: E402
from pypto.runtime import RunConfig  # noqa: E402


@pl.jit
def matmul_acc_unrolled(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        a0 = pl.move(pl.load(a, [0, 0], [64, 32], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Left)
        b0 = pl.move(pl.load(b, [0, 0], [32, 64], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Right)
        acc = pl.matmul(a0, b0)
        a1 = pl.move(pl.load(a, [0, 32], [64, 32], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Left)
        b1 = pl.move(pl.load(b, [32, 0], [32, 64], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Right)
        acc = pl.matmul_acc(acc, a1, b1)
        pl.store(acc, [0, 0], c)
    return c


@pl.jit
def matmul_acc_loop(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        a0 = pl.move(pl.load(a, [0, 0], [64, 16], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Left)
        b0 = pl.move(pl.load(b, [0, 0], [16, 64], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Right)
        acc0 = pl.matmul(a0, b0)
        for k, (acc,) in pl.range(1, 4, init_values=(acc0,)):
            ak = pl.move(pl.load(a, [0, k * 16], [64, 16], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Left)
            bk = pl.move(pl.load(b, [k * 16, 0], [16, 64], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Right)
            total = pl.yield_(pl.matmul_acc(acc, ak, bk))
        pl.store(total, [0, 0], c)
    return c


# Sample shapes (the CLI's `pypto compile FILE::NAME` and tests/roundtrip use them).
SHAPES = {
    "matmul_acc_unrolled": {"a": "64x64:f32", "b": "64x64:f32", "c": "64x64:f32"},
    "matmul_acc_loop": {"a": "64x64:f32", "b": "64x64:f32", "c": "64x64:f32"},
}


def main(platform: str) -> None:
    cfg = RunConfig(platform=platform)
    a, b = rand(64, 64, seed=1), rand(64, 64, seed=2)
    c = np.zeros((64, 64), dtype=np.float32)
    matmul_acc_unrolled(a, b, c, config=cfg)
    check(f"matmul + matmul_acc (2 x K=32) on {platform}", c, a @ b, rtol=1e-4, atol=1e-4)
    c.fill(0)
    matmul_acc_loop(a, b, c, config=cfg)
    check(f"matmul_acc carried through pl.range (4 x K=16) on {platform}", c, a @ b, rtol=1e-4, atol=1e-4)


if __name__ == "__main__":
    main(platform_from_argv())
