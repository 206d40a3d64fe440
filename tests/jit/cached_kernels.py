"""@pl.jit kernels for the disk-cache tests (defined in a file: the jit reads their source)."""

import pypto.language as pl

SCALE = 2.0


@pl.jit
def scaled_add(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out[:] = pl.mul(pl.add(a, b), SCALE)
    return out
