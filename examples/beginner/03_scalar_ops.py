"""Scalar operands: ``(a + b) * 2.0`` and friends lower to the tile-scalar ops tadds/tmuls/tdivs.

    python examples/beginner/03_scalar_ops.py [a2a3sim|a5sim]
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
def add_then_double(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out[:] = (a + b) * 2.0
    return out


@pl.jit
def affine(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [64, 64])
        t = pl.add(pl.mul(t, 0.5), 3.0)  # scalar right operands pick tmuls / tadds
        t = pl.sub(pl.div(t, 4.0), 1.0)  # tdivs / tsubs
        pl.store(t, [0, 0], out)
    return out


# Sample shapes (the CLI's `pypto compile FILE::NAME` and tests/roundtrip use them).
SHAPES = {
    "add_then_double": {"a": "128x128:f32", "b": "128x128:f32", "out": "128x128:f32"},
    "affine": {"x": "64x64:f32", "out": "64x64:f32"},
}


def main(platform: str) -> None:
    cfg = RunConfig(platform=platform)
    a, b = rand(128, 128, seed=1), rand(128, 128, seed=2)
    out = np.zeros_like(a)
    add_then_double(a, b, out, config=cfg)
    check(f"scalar (a + b) * 2.0 on {platform}", out, (a + b) * np.float32(2.0))

    x = rand(64, 64, seed=3)
    y = np.zeros_like(x)
    affine(x, y, config=cfg)
    check(f"scalar affine chain on {platform}", y, (x * 0.5 + 3.0) / 4.0 - 1.0, rtol=1e-6, atol=1e-6)


if __name__ == "__main__":
    main(platform_from_argv())
