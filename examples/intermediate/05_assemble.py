"""Assemble: write a smaller block into a bigger target at an offset.

``row_halves`` uses the tensor-level sugar ``out[a:b, :] = expr``: each half of the output gets its
own computation and is stored at its row offset. ``patch_tile`` uses ``pl.assemble`` on tiles: a
16x32 block (scaled by 2) is painted over a 64x64 tile at offset [16, 32] before the store. ptoas
0.1.1 has no ``tinsert``, so the compiler lowers an assembled tile that is only stored into stores
of the target and then of the block at its offset.

    python examples/intermediate/05_assemble.py [a2a3sim|a5sim]
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
def row_halves(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out[0:32, :] = pl.add(a[0:32, :], b[0:32, :])
        out[32:64, :] = pl.mul(a[32:64, :], b[32:64, :])
    return out


@pl.jit
def patch_tile(x: pl.Tensor, y: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        target = pl.load(x, [0, 0], [64, 64])
        block = pl.mul(pl.load(y, [0, 0], [16, 32]), 2.0)
        pl.store(pl.assemble(target, block, [16, 32]), [0, 0], out)
    return out


# Sample shapes (the CLI's `pypto compile FILE::NAME` and tests/roundtrip use them).
SHAPES = {
    "row_halves": {"a": "64x64:f32", "b": "64x64:f32", "out": "64x64:f32"},
    "patch_tile": {"x": "64x64:f32", "y": "16x32:f32", "out": "64x64:f32"},
}


def main(platform: str) -> None:
    cfg = RunConfig(platform=platform)
    a, b = rand(64, 64, seed=1), rand(64, 64, seed=2)
    out = np.zeros_like(a)
    row_halves(a, b, out, config=cfg)
    check(f"out[a:b, :] = ... row halves on {platform}", out, np.concatenate([a[:32] + b[:32], a[32:] * b[32:]]))

    y = rand(16, 32, seed=3)
    out.fill(0)
    patch_tile(a, y, out, config=cfg)
    want = a.copy()
    want[16:32, 32:64] = y * 2.0
    check(f"tile assemble at [16, 32] on {platform}", out, want)


if __name__ == "__main__":
    main(platform_from_argv())
