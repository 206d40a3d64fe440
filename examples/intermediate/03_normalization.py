"""RMSNorm and LayerNorm over the rows of a 32x64 tile, with per-column gamma / beta.

Row statistics are [32, 1] columns (``row_sum`` then a scalar multiply by 1/N); they are broadcast
back over each row with ``row_expand_sub`` / ``row_expand_mul``. gamma and beta are [1, 64] rows
broadcast down the columns with ``col_expand_mul`` / ``col_expand_add``.

    python examples/intermediate/03_normalization.py [a2a3sim|a5sim]
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _common import check, platform_from_argv, rand  # noqa: E402

import pypto.language as pl  # noqa: E402
from pypto.runtime import RunConfig  # noqa: E402

EPS = 1e-5


@pl.jit
def rms_norm(x: pl.Tensor, gamma: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [32, 64])
        g = pl.load(gamma, [0, 0], [1, 64])
        scratch = pl.create_tile([32, 64], dtype=pl.FP32, target_memory=pl.Mem.Vec)
        mean_sq = pl.mul(pl.row_sum(pl.mul(t, t), scratch), 0.015625)  # 1 / 64
        inv_rms = pl.rsqrt(pl.add(mean_sq, 1e-5))
        pl.store(pl.col_expand_mul(pl.row_expand_mul(t, inv_rms), g), [0, 0], out)
    return out


@pl.jit
def layer_norm(x: pl.Tensor, gamma: pl.Tensor, beta: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [32, 64])
        g = pl.load(gamma, [0, 0], [1, 64])
        b = pl.load(beta, [0, 0], [1, 64])
        scratch = pl.create_tile([32, 64], dtype=pl.FP32, target_memory=pl.Mem.Vec)
        mean = pl.mul(pl.row_sum(t, scratch), 0.015625)
        centered = pl.row_expand_sub(t, mean)
        var = pl.mul(pl.row_sum(pl.mul(centered, centered), scratch), 0.015625)
        normed = pl.row_expand_mul(centered, pl.rsqrt(pl.add(var, 1e-5)))
        pl.store(pl.col_expand_add(pl.col_expand_mul(normed, g), b), [0, 0], out)
    return out


# Sample shapes (the CLI's `pypto compile FILE::NAME` and tests/roundtrip use them).
SHAPES = {
    "rms_norm": {"x": "32x64:f32", "gamma": "1x64:f32", "out": "32x64:f32"},
    "layer_norm": {"x": "32x64:f32", "gamma": "1x64:f32", "beta": "1x64:f32", "out": "32x64:f32"},
}


def main(platform: str) -> None:
    cfg = RunConfig(platform=platform)
    x = rand(32, 64, seed=1) * 2.0 + 0.5
    gamma, beta = rand(1, 64, seed=2), rand(1, 64, seed=3)
    out = np.zeros_like(x)

    rms_norm(x, gamma, out, config=cfg)
    want = x / np.sqrt(np.mean(x * x, axis=1, keepdims=True) + EPS) * gamma
    check(f"rms_norm 32x64 on {platform}", out, want, rtol=1e-4, atol=1e-5)

    layer_norm(x, gamma, beta, out, config=cfg)
    mu = x.mean(axis=1, keepdims=True)
    want = (x - mu) / np.sqrt(((x - mu) ** 2).mean(axis=1, keepdims=True) + EPS) * gamma + beta
    check(f"layer_norm 32x64 on {platform}", out, want, rtol=1e-4, atol=1e-5)


if __name__ == "__main__":
    main(platform_from_argv())
