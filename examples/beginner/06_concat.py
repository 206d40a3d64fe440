"""Column concat of two 32x16 tiles into a 32x32 result.

ptoas 0.1.1 has no ``tconcat`` instruction (and no ``tinsert``), so a concat whose result is only
stored is lowered to one store per half, each at its column offset in the output tensor. Using a
concat result in further tile arithmetic is rejected at compile time with a message naming the
alternative (store the halves at column offsets, then load the joined tile back in another kernel).

    python examples/beginner/06_concat.py [a2a3sim|a5sim]
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
def concat_cols(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        ta = pl.load(a, [0, 0], [32, 16])
        tb = pl.load(b, [0, 0], [32, 16])
        pl.store(pl.concat(ta, tb), [0, 0], out)
    return out


# Sample shapes (the CLI's `pypto compile FILE::NAME` and tests/roundtrip use them).
SHAPES = {"concat_cols": {"a": "32x16:f32", "b": "32x16:f32", "out": "32x32:f32"}}


def main(platform: str) -> None:
    cfg = RunConfig(platform=platform)
    a, b = rand(32, 16, seed=1), rand(32, 16, seed=2)
    out = np.zeros((32, 32), dtype=np.float32)
    concat_cols(a, b, out, config=cfg)
    check(f"concat 2 x (32x16) -> 32x32 on {platform}", out, np.concatenate([a, b], axis=1), rtol=0, atol=0)


if __name__ == "__main__":
    main(platform_from_argv())
