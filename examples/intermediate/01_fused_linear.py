"""Fused linear layer ``y = relu(x @ w + bias)`` as two InCore kernels in one program.

The matmul runs on the cube unit (``linear_cube``), the bias add and relu on the vector unit
(``bias_relu_vec``). The ``@pl.jit`` orchestration allocates the intermediate GM tensor with
``pl.create_tensor`` and calls both kernels; the runtime orders them through the tensor they share.

    python examples/intermediate/01_fused_linear.py [a2a3sim|a5sim]
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _common import check, platform_from_argv, rand  # noqa: E402

import pypto.language as pl  # noqa: E402
from pypto.runtime import RunConfig  # noqa: E402


@pl.jit.incore
def linear_cube(x: pl.Tensor, w: pl.Tensor, out: pl.Out[pl.Tensor]):
    x_l1 = pl.load(x, [0, 0], [64, 64], target_memory=pl.Mem.Mat)
    w_l1 = pl.load(w, [0, 0], [64, 64], target_memory=pl.Mem.Mat)
    acc = pl.matmul(pl.move(x_l1, target_memory=pl.Mem.Left), pl.move(w_l1, target_memory=pl.Mem.Right))
    pl.store(acc, [0, 0], out)
    return out


@pl.jit.incore
def bias_relu_vec(h: pl.Tensor, bias: pl.Tensor, out: pl.Out[pl.Tensor]):
    th = pl.load(h, [0, 0], [64, 64])
    tb = pl.load(bias, [0, 0], [64, 64])
    pl.store(pl.relu(pl.add(th, tb)), [0, 0], out)
    return out


@pl.jit
def fused_linear(x: pl.Tensor, w: pl.Tensor, bias: pl.Tensor, y: pl.Out[pl.Tensor]):
    h = pl.create_tensor([64, 64], dtype=pl.FP32)
    h = linear_cube(x, w, h)
    y = bias_relu_vec(h, bias, y)
    return y


# Sample shapes (the CLI's `pypto compile FILE::NAME` and tests/roundtrip use them).
SHAPES = {"fused_linear": {"x": "64x64:f32", "w": "64x64:f32", "bias": "64x64:f32", "y": "64x64:f32"}}


def main(platform: str) -> None:
    cfg = RunConfig(platform=platform)
    x, w, bias = rand(64, 64, seed=1), rand(64, 64, seed=2), rand(64, 64, seed=3)
    y = np.zeros((64, 64), dtype=np.float32)
    fused_linear(x, w, bias, y, config=cfg)
    check(f"fused linear relu(x @ w + bias) on {platform}", y, np.maximum(x @ w + bias, 0.0), rtol=1e-4, atol=1e-4)


if __name__ == "__main__":
    main(platform_from_argv())
