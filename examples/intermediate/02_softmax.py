"""Row softmax of a 64x64 tile: subtract the row max, exponentiate, divide by the row sum.

``row_max`` / ``row_sum`` reduce each row to a [64, 1] column; ``row_expand_sub`` and
``row_expand_div`` broadcast that column back over the row. ``pl.create_tile`` makes the scratch
tiles the tile-level reductions take.

    python examples/intermediate/02_softmax.py [a2a3sim|a5sim]
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
def row_softmax(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [64, 64])
        scratch = pl.create_tile([64, 64], dtype=pl.FP32, target_memory=pl.Mem.Vec)
        row_max = pl.row_max(t, scratch)
        e = pl.exp(pl.row_expand_sub(t, row_max))
        row_sum = pl.row_sum(e, scratch)
        pl.store(pl.row_expand_div(e, row_sum), [0, 0], out)
    return out


# Sample shapes (the CLI's `pypto compile FILE::NAME` and tests/roundtrip use them).
SHAPES = {"row_softmax": {"x": "64x64:f32", "out": "64x64:f32"}}


def main(platform: str) -> None:
    cfg = RunConfig(platform=platform)
    x = rand(64, 64, seed=1) * 4.0
    out = np.zeros_like(x)
    row_softmax(x, out, config=cfg)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    check(f"row softmax 64x64 on {platform}", out, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-6)


if __name__ == "__main__":
    main(platform_from_argv())
