"""A 64x64 matmul on the cube unit: GM -> Mat (L1) -> Left/Right (L0A/L0B) -> Acc (L0C) -> GM.

The f16 variant multiplies f16 inputs and accumulates in f32 (the Acc tile is f32).

    python examples/beginner/05_matmul.py [a2a3sim|a5sim]
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
def matmul(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        a_l1 = pl.load(a, [0, 0], [64, 64], target_memory=pl.Mem.Mat)
        b_l1 = pl.load(b, [0, 0], [64, 64], target_memory=pl.Mem.Mat)
        a_l0 = pl.move(a_l1, target_memory=pl.Mem.Left)
        b_l0 = pl.move(b_l1, target_memory=pl.Mem.Right)
        c_acc = pl.matmul(a_l0, b_l0)
        pl.store(c_acc, [0, 0], c)
    return c


# Sample shapes (the CLI's `pypto compile FILE::NAME` and tests/roundtrip use them).
SHAPES = {"matmul": {"a": "64x64:f32", "b": "64x64:f32", "c": "64x64:f32"}}


def main(platform: str) -> None:
    cfg = RunConfig(platform=platform)
    a, b = rand(64, 64, seed=1), rand(64, 64, seed=2)
    c = np.zeros((64, 64), dtype=np.float32)
    matmul(a, b, c, config=cfg)
    check(f"matmul f32 64x64 on {platform}", c, a @ b, rtol=1e-4, atol=1e-4)

    a16, b16 = a.astype(np.float16), b.astype(np.float16)
    c.fill(0)
    matmul(a16, b16, c, config=cfg)
    want = a16.astype(np.float32) @ b16.astype(np.float32)
    check(f"matmul f16 inputs, f32 accumulate on {platform}", c, want, rtol=1e-3, atol=1e-3)


if __name__ == "__main__":
    main(platform_from_argv())
