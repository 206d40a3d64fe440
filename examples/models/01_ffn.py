"""FFN with SwiGLU: gate/up projections (cube), SwiGLU (vector), down projection (cube).

Three ``@pl.jit.incore`` kernel calls from one ``@pl.jit`` orchestration; the intermediate
``gate``/``up``/``act`` tensors are created with ``pl.create_tensor``. 64x64 f32 tiles.

    python examples/models/01_ffn.py [a2a3sim|a5sim]
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
def matmul_kernel(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]):
    a_l1 = pl.load(a, [0, 0], [64, 64], target_memory=pl.Mem.Mat)
    b_l1 = pl.load(b, [0, 0], [64, 64], target_memory=pl.Mem.Mat)
    a_l0 = pl.move(a_l1, target_memory=pl.Mem.Left)
    b_l0 = pl.move(b_l1, target_memory=pl.Mem.Right)
    c = pl.matmul(a_l0, b_l0)
    pl.store(c, [0, 0], out)
    return out


@pl.jit.incore
def swiglu_kernel(gate: pl.Tensor, up: pl.Tensor, out: pl.Out[pl.Tensor]):
    g = pl.load(gate, [0, 0], [64, 64])
    u = pl.load(up, [0, 0], [64, 64])
    sig = pl.recip(pl.adds(pl.exp(pl.muls(g, -1.0)), 1.0))
    res = pl.mul(pl.mul(g, sig), u)
    pl.store(res, [0, 0], out)
    return out


@pl.jit
def ffn(x: pl.Tensor, w_gate: pl.Tensor, w_up: pl.Tensor, w_down: pl.Tensor, out: pl.Out[pl.Tensor]):
    gate = pl.create_tensor([64, 64], dtype=pl.FP32)
    gate = matmul_kernel(x, w_gate, gate)
    up = pl.create_tensor([64, 64], dtype=pl.FP32)
    up = matmul_kernel(x, w_up, up)
    act = pl.create_tensor([64, 64], dtype=pl.FP32)
    act = swiglu_kernel(gate, up, act)
    out = matmul_kernel(act, w_down, out)
    return out


def reference(x: np.ndarray, wg: np.ndarray, wu: np.ndarray, wd: np.ndarray) -> np.ndarray:
    g, u = x @ wg, x @ wu
    return ((g / (1.0 + np.exp(-g))) * u) @ wd


# Sample shapes (the CLI's `pypto compile FILE::NAME` and tests/roundtrip use them).
SHAPES = {"ffn": {"x": "64x64:f32", "w_gate": "64x64:f32", "w_up": "64x64:f32", "w_down": "64x64:f32",
                  "out": "64x64:f32"}}


def main(platform: str) -> None:
    cfg = RunConfig(platform=platform)
    x = rand(64, 64, seed=1)
    wg, wu, wd = (rand(64, 64, seed=s) * 0.125 for s in (2, 3, 4))
    out = np.zeros((64, 64), dtype=np.float32)
    ffn(x, wg, wu, wd, out, config=cfg)
    check(f"ffn swiglu on {platform}", out, reference(x, wg, wu, wd), rtol=1e-4, atol=1e-4)


if __name__ == "__main__":
    main(platform_from_argv())
