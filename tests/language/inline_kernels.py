"""A program using a module-level ``pl.inline`` helper (imported by test_inline.py)."""

import pypto.language as pl


@pl.inline
def axpy(x: pl.Tile[[64, 64], pl.FP32], y: pl.Tile[[64, 64], pl.FP32]) -> pl.Tile[[64, 64], pl.FP32]:
    t: pl.Tile[[64, 64], pl.FP32] = pl.mul(x, 2.0)
    return pl.add(t, y)


@pl.program
class Axpy:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[64, 64], pl.FP32], b: pl.Tensor[[64, 64], pl.FP32],
          out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        ta: pl.Tile[[64, 64], pl.FP32] = pl.load(a, [0, 0], [64, 64])
        tb: pl.Tile[[64, 64], pl.FP32] = pl.load(b, [0, 0], [64, 64])
        r: pl.Tile[[64, 64], pl.FP32] = axpy(ta, tb)
        twice: pl.Tile[[64, 64], pl.FP32] = axpy(r, tb)
        return pl.store(twice, [0, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[64, 64], pl.FP32], b: pl.Tensor[[64, 64], pl.FP32],
             out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        out = self.k(a, b, out)
        return out
