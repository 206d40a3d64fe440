"""Hello world: a 128x128 f32 add as a ``@pl.jit`` kernel, compiled and run on a sim platform.

    python examples/beginner/01_hello_world.py [a2a3sim|a5sim]

The kernel follows the quickstart of the compile page: ``out[:] = pl.add(a, b)`` inside a
``pl.at(level=pl.Level.CORE_GROUP)`` scope; ``add.compile(...)`` stops after compiling and returns
the cached CompiledProgram, ``add(...)`` compiles (cached) and runs.
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
def add(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out[:] = pl.add(a, b)
    return out


# Sample shapes and the golden let the CLI compile and check this kernel too:
#   pypto compile examples/beginner/01_hello_world.py
#   pypto run examples/beginner/01_hello_world.py --platform a5sim
SHAPES = {"add": {"a": "128x128:f32", "b": "128x128:f32", "out": "128x128:f32"}}


def golden_add(a: np.ndarray, b: np.ndarray, out: np.ndarray) -> np.ndarray:
    return a + b


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
