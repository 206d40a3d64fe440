"""The hello world of ``benchmarks/edit_run.py``: a 128x128 f32 add as a ``@pl.jit`` kernel on torch tensors.

    python benchmarks/models/hello_world.py [a2a3sim|a5sim]
"""

from __future__ import annotations

import sys

import torch

import pypto.language as pl
from pypto.runtime import RunConfig


@pl.jit
def add(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out[:] = pl.add(a, b)
    return out


def main(platform: str) -> None:
    g = torch.Generator().manual_seed(0)
    a, b = torch.randn(128, 128, generator=g), torch.randn(128, 128, generator=g)
    out = torch.zeros(128, 128)
    add(a, b, out, config=RunConfig(platform=platform))
    assert torch.equal(out, a + b), "hello world: wrong sum"
    print(f"hello world add on {platform}: OK")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "a2a3sim")
