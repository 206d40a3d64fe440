"""A dynamic-shape kernel: ``M = pl.dynamic("M")`` rows, compiled once, run for several M.

``out = relu(x * 2 + y)`` over ``[M, 128]`` f32 tensors, processed in 64-row tiles by a loop
whose bound is the dynamic ``M``. The ``@pl.jit.incore`` kernel receives M as a trailing
``index`` argument (the orchestration reads it from the tensor's ``shapes[]``); the jit cache
key has ``None`` for dynamic dims, so every M reuses one compiled artifact. M must be a multiple
of the 64-row tile here: the partial last tile would need ``M - r`` as a valid size, and
ptoas 0.1.1 cannot lower ``arith.subi`` (see the property tests for static partial tiles).

    python examples/models/04_dynamic_shape.py [a2a3sim|a5sim]
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _common import check, platform_from_argv, rand  # noqa: E402

import pypto.language as pl  # noqa: E402
from pypto.runtime import RunConfig  # noqa: E402

M = pl.dynamic("M")
COLS, TILE = 128, 64


@pl.jit.incore
def scale_add_relu(x: pl.Tensor[[M, COLS], pl.FP32], y: pl.Tensor[[M, COLS], pl.FP32],
                   out: pl.Out[pl.Tensor[[M, COLS], pl.FP32]]):
    for r in pl.range(0, M, TILE):
        a = pl.load(x, [r, 0], [TILE, COLS])
        b = pl.load(y, [r, 0], [TILE, COLS])
        pl.store(pl.relu(pl.add(pl.muls(a, 2.0), b)), [r, 0], out)
    return out


@pl.jit
def dyn_rows(x: pl.Tensor[[M, COLS], pl.FP32], y: pl.Tensor[[M, COLS], pl.FP32],
             out: pl.Out[pl.Tensor[[M, COLS], pl.FP32]]):
    out = scale_add_relu(x, y, out)
    return out


# Sample shapes (the CLI's `pypto compile FILE::NAME` and tests/roundtrip use them).
SHAPES = {"dyn_rows": {p: f"192x{COLS}:f32" for p in ("x", "y", "out")}}


def main(platform: str) -> None:
    cfg = RunConfig(platform=platform)
    artifacts = set()
    for rows in (64, 192, 320):
        x, y = rand(rows, COLS, seed=rows), rand(rows, COLS, seed=rows + 1)
        out = np.zeros((rows, COLS), dtype=np.float32)
        artifacts.add(dyn_rows.compile(x, y, out, config=cfg).output_dir)
        dyn_rows(x, y, out, config=cfg)
        check(f"dynamic M={rows} on {platform}", out, np.maximum(x * 2.0 + y, 0.0), rtol=1e-6, atol=1e-6)
    assert len(artifacts) == 1, f"expected one compiled artifact for all M, got {len(artifacts)}"
    print(f"dynamic shape on {platform}: OK (one artifact for M in 64, 192, 320)")


if __name__ == "__main__":
    main(platform_from_argv())
