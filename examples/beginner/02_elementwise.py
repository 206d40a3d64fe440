"""Elementwise kernels: add and mul on 128x128 and 64x64 tiles, and a row-chunk loop.

``chunked_add`` adds two 512x128 tensors that do not fit one tile: a ``pl.range`` loop walks the
rows in 64-row chunks and each ``pl.load`` / ``pl.store`` gets its chunk's row offset.

    python examples/beginner/02_elementwise.py [a2a3sim|a5sim]
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
def add_128(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        ta = pl.load(a, [0, 0], [128, 128])
        tb = pl.load(b, [0, 0], [128, 128])
        pl.store(pl.add(ta, tb), [0, 0], out)
    return out


@pl.jit
def mul_128(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        ta = pl.load(a, [0, 0], [128, 128])
        tb = pl.load(b, [0, 0], [128, 128])
        pl.store(pl.mul(ta, tb), [0, 0], out)
    return out


@pl.jit
def add_64(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out[:] = pl.add(a, b)
    return out


@pl.jit
def mul_add_64(a: pl.Tensor, b: pl.Tensor, c: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        ta = pl.load(a, [0, 0], [64, 64])
        tb = pl.load(b, [0, 0], [64, 64])
        tc = pl.load(c, [0, 0], [64, 64])
        pl.store(pl.add(pl.mul(ta, tb), tc), [0, 0], out)
    return out


@pl.jit
def chunked_add(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for i in pl.range(8):
            ta = pl.load(a, [i * 64, 0], [64, 128])
            tb = pl.load(b, [i * 64, 0], [64, 128])
            pl.store(pl.add(ta, tb), [i * 64, 0], out)
    return out


# Sample shapes (the CLI's `pypto compile FILE::NAME` and tests/roundtrip use them).
SHAPES = {
    "add_128": {"a": "128x128:f32", "b": "128x128:f32", "out": "128x128:f32"},
    "mul_128": {"a": "128x128:f32", "b": "128x128:f32", "out": "128x128:f32"},
    "add_64": {"a": "64x64:f32", "b": "64x64:f32", "out": "64x64:f32"},
    "mul_add_64": {"a": "64x64:f32", "b": "64x64:f32", "c": "64x64:f32", "out": "64x64:f32"},
    "chunked_add": {"a": "512x128:f32", "b": "512x128:f32", "out": "512x128:f32"},
}


def main(platform: str) -> None:
    cfg = RunConfig(platform=platform)
    a, b = rand(128, 128, seed=1), rand(128, 128, seed=2)
    out = np.zeros_like(a)
    add_128(a, b, out, config=cfg)
    check(f"elementwise add 128x128 on {platform}", out, a + b)
    mul_128(a, b, out, config=cfg)
    check(f"elementwise mul 128x128 on {platform}", out, a * b)

    x, y, z = rand(64, 64, seed=3), rand(64, 64, seed=4), rand(64, 64, seed=5)
    out64 = np.zeros_like(x)
    add_64(x, y, out64, config=cfg)
    check(f"elementwise add 64x64 on {platform}", out64, x + y)
    mul_add_64(x, y, z, out64, config=cfg)
    check(f"elementwise mul+add 64x64 on {platform}", out64, x * y + z)

    big_a, big_b = rand(512, 128, seed=6), rand(512, 128, seed=7)
    big_out = np.zeros_like(big_a)
    chunked_add(big_a, big_b, big_out, config=cfg)
    check(f"chunked add 512x128 (8 x 64 rows) on {platform}", big_out, big_a + big_b)


if __name__ == "__main__":
    main(platform_from_argv())
