"""A vector task graph: three ``@pl.jit.incore`` kernels, one ``@pl.jit`` orchestration.

``t1 = a + b`` and ``t2 = exp(a) * 0.5`` only read inputs, so the runtime may run them
concurrently; ``out = relu(t1 - t2)`` reads both intermediates (created with
``pl.create_tensor``) and joins them. 128x128 f32 in 64-row chunks inside each kernel.

    python examples/models/02_vector_dag.py [a2a3sim|a5sim]
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _common import check, platform_from_argv, rand  # noqa: E402

import pypto.language as pl  # noqa: E402
from pypto.runtime import RunConfig  # noqa: E402

ROWS, COLS, CHUNK = 128, 128, 64


@pl.jit.incore
def add_kernel(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]):
    for r in pl.range(0, ROWS, CHUNK):
        x = pl.load(a, [r, 0], [CHUNK, COLS])
        y = pl.load(b, [r, 0], [CHUNK, COLS])
        pl.store(pl.add(x, y), [r, 0], out)
    return out


@pl.jit.incore
def exp_scale_kernel(a: pl.Tensor, out: pl.Out[pl.Tensor]):
    for r in pl.range(0, ROWS, CHUNK):
        x = pl.load(a, [r, 0], [CHUNK, COLS])
        pl.store(pl.muls(pl.exp(x), 0.5), [r, 0], out)
    return out


@pl.jit.incore
def join_kernel(t1: pl.Tensor, t2: pl.Tensor, out: pl.Out[pl.Tensor]):
    for r in pl.range(0, ROWS, CHUNK):
        x = pl.load(t1, [r, 0], [CHUNK, COLS])
        y = pl.load(t2, [r, 0], [CHUNK, COLS])
        pl.store(pl.relu(pl.sub(x, y)), [r, 0], out)
    return out


@pl.jit
def vector_dag(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]):
    t1 = pl.create_tensor([ROWS, COLS], dtype=pl.FP32)
    t1 = add_kernel(a, b, t1)
    t2 = pl.create_tensor([ROWS, COLS], dtype=pl.FP32)
    t2 = exp_scale_kernel(a, t2)
    out = join_kernel(t1, t2, out)
    return out


# Sample shapes (the CLI's `pypto compile FILE::NAME` and tests/roundtrip use them).
SHAPES = {"vector_dag": {p: f"{ROWS}x{COLS}:f32" for p in ("a", "b", "out")}}


def main(platform: str) -> None:
    cfg = RunConfig(platform=platform)
    a, b = rand(ROWS, COLS, seed=1), rand(ROWS, COLS, seed=2)
    out = np.zeros((ROWS, COLS), dtype=np.float32)
    vector_dag(a, b, out, config=cfg)
    check(f"vector dag on {platform}", out, np.maximum((a + b) - np.exp(a) * 0.5, 0.0), rtol=1e-5, atol=1e-5)


if __name__ == "__main__":
    main(platform_from_argv())
