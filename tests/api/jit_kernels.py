"""@pl.jit kernels used by test_jit.py (defined in a file: the jit reads their source)."""

import pypto.language as pl


@pl.jit.graph
def graph_add(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out[:] = pl.add(a, b)
    return out


@pl.jit
def scaled(a: pl.Tensor, out: pl.Out[pl.Tensor], factor: float):
    with pl.at(level=pl.Level.CORE_GROUP):
        out[:] = pl.mul(a, factor)
    return out


@pl.jit
def shape_error(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out[:] = pl.add(a, b)
    return out
