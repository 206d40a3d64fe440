"""Activations built from elementwise ops: relu(a + b), SiLU and GELU.

SiLU is ``x * sigmoid(x)`` with ``sigmoid(x) = 1 / (1 + exp(-x))`` (neg, exp, adds, recip, mul).
GELU uses the sigmoid approximation ``x * sigmoid(1.702 * x)`` written with a division.

    python examples/beginner/04_activation.py [a2a3sim|a5sim]
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
def add_relu(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        ta = pl.load(a, [0, 0], [64, 64])
        tb = pl.load(b, [0, 0], [64, 64])
        pl.store(pl.relu(pl.add(ta, tb)), [0, 0], out)
    return out


@pl.jit
def silu(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [64, 64])
        denom = pl.add(pl.exp(pl.neg(t)), 1.0)
        pl.store(pl.mul(t, pl.recip(denom)), [0, 0], out)
    return out


@pl.jit
def gelu(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [64, 64])
        denom = pl.add(pl.exp(pl.mul(t, -1.702)), 1.0)
        pl.store(pl.div(t, denom), [0, 0], out)
    return out


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


# Sample shapes (the CLI's `pypto compile FILE::NAME` and tests/roundtrip use them).
SHAPES = {
    "add_relu": {"a": "64x64:f32", "b": "64x64:f32", "out": "64x64:f32"},
    "silu": {"x": "64x64:f32", "out": "64x64:f32"},
    "gelu": {"x": "64x64:f32", "out": "64x64:f32"},
}


def main(platform: str) -> None:
    cfg = RunConfig(platform=platform)
    a, b = rand(64, 64, seed=1), rand(64, 64, seed=2)
    out = np.zeros_like(a)
    add_relu(a, b, out, config=cfg)
    check(f"relu(a + b) on {platform}", out, np.maximum(a + b, 0.0))

    x = rand(64, 64, seed=3) * 3.0
    silu(x, out, config=cfg)
    check(f"silu on {platform}", out, x * _sigmoid(x), rtol=1e-5, atol=1e-5)
    gelu(x, out, config=cfg)
    check(f"gelu (sigmoid approximation) on {platform}", out, x * _sigmoid(1.702 * x), rtol=1e-5, atol=1e-5)


if __name__ == "__main__":
    main(platform_from_argv())
