"""Small programs the upstream-API tests compile (defined in a file: the frontend reads their source)."""

import pypto.language as pl


@pl.program
class AddProg:
    @pl.function(type=pl.FunctionType.InCore)
    def add_kernel(self, a: pl.Tensor[[64, 64], pl.FP32], b: pl.Tensor[[64, 64], pl.FP32],
                   out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        ta = pl.load(a, [0, 0], [64, 64])
        tb = pl.load(b, [0, 0], [64, 64])
        out = pl.store(pl.add(ta, tb), [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def orch(self, a: pl.Tensor[[64, 64], pl.FP32], b: pl.Tensor[[64, 64], pl.FP32],
             out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        out = self.add_kernel(a, b, out)
        return out


ROWS = 128


@pl.jit.incore
def add_scalar_tile(x: pl.Tensor, y: pl.Out[pl.Tensor], a: pl.Scalar[pl.FP32]):
    t = pl.load(x, [0, 0], [ROWS, x.shape[1]])
    y = pl.store(pl.add(t, a), [0, 0], y)
    return y


@pl.jit
def add_scalar(x: pl.Tensor, a: pl.Scalar[pl.FP32], y: pl.Out[pl.Tensor]):
    y = add_scalar_tile(x, y, a)
    return y
