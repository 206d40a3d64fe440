"""Hello world: a 128x128 f32 add as a ``@pl.jit`` kernel, compiled and run on a sim platform.

    python examples/beginner/01_hello_world.py [a2a3sim|a5sim]
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import pypto.language as pl  # noqa: E402
from _common import check, platform_from_argv, rand  # noqa: E402
from pypto.runtime import RunConfig  # noqa: E402


@pl.jit
def add(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out[:] = pl.add(a, b)
    return out


def main(platform: str) -> None:
    cfg = RunConfig(platform=platform)
    a, b = rand(128, 128, seed=1), rand(128, 128, seed=2)
    out = np.zeros((128, 128), dtype=np.float32)
    compiled = add.compile(a, b, out, config=cfg)
    print("artifacts in:", compiled.output_dir)
    assert compiled.param_names == ["a", "b", "out"]
    add(a, b, out, config=cfg)
    check(f"hello_world add on {platform}", out, a + b)


if __name__ == "__main__":
    main(platform_from_argv())
