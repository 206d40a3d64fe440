"""Dynamic valid shape + fillpad: a tile whose valid row count is only known at run time.

``x`` has ``M = pl.dynamic("M")`` rows (M <= 32), so the kernel loads a 32x64 tile whose valid
region is ``[M, 64]``: the rows past M are not loaded and hold garbage. ``pl.fillpad`` copies the
valid region into a full tile and fills the rest with the pad value (zero here), after which
whole-tile ops are safe: the column sums equal the sums over the M real rows, and the stored
32-row tile has zero rows past M. One compiled artifact serves every M.

    python examples/intermediate/06_dyn_valid_shape.py [a2a3sim|a5sim]
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


@pl.jit
def pad_and_sum(x: pl.Tensor[[M, 64], pl.FP32], padded: pl.Out[pl.Tensor], col_sums: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [32, 64], valid_shape=[M, 64])
        full = pl.fillpad(t, pad_value=pl.PadValue.zero)
        scratch = pl.create_tile([32, 64], dtype=pl.FP32, target_memory=pl.Mem.Vec)
        pl.store(full, [0, 0], padded)
        pl.store(pl.col_sum(full, scratch), [0, 0], col_sums)
    return padded, col_sums


# Sample shapes (the CLI's `pypto compile FILE::NAME` and tests/roundtrip use them).
SHAPES = {"pad_and_sum": {"x": "20x64:f32", "padded": "32x64:f32", "col_sums": "1x64:f32"}}


def main(platform: str) -> None:
    cfg = RunConfig(platform=platform)
    artifacts = set()
    for rows in (32, 20, 7):
        x = rand(rows, 64, seed=rows)
        padded = np.full((32, 64), 99.0, dtype=np.float32)
        sums = np.zeros((1, 64), dtype=np.float32)
        artifacts.add(pad_and_sum.compile(x, padded, sums, config=cfg).output_dir)
        pad_and_sum(x, padded, sums, config=cfg)
        want = np.zeros((32, 64), dtype=np.float32)
        want[:rows] = x
        check(f"fillpad with valid rows M={rows} on {platform}", padded, want, rtol=0, atol=0)
        check(f"column sums over M={rows} rows on {platform}", sums, x.sum(axis=0, keepdims=True),
              rtol=1e-5, atol=1e-5)
    assert len(artifacts) == 1, f"expected one compiled artifact for every M, got {len(artifacts)}"


if __name__ == "__main__":
    main(platform_from_argv())
