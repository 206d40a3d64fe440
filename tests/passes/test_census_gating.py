"""Passes skip functions that hold nothing they rewrite, judged by the per-function census
(:mod:`pypto.ir.census`); where the op (or operator) is present, the rewrite still runs."""

from __future__ import annotations

import pypto.language as pl
from pypto.ir.census import census
from pypto.ir.expr import BinOp
from pypto.ir.stmt import ForStmt, IfStmt
from pypto.passes.unroll_loops import UnrollLoops

MODULO_KERNEL = """import pypto.language as pl

@pl.program
class Mod:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[128, 64], pl.FP32], c: pl.InOut[pl.Tensor[[128, 64], pl.FP32]],
          d: pl.InOut[pl.Tensor[[128, 64], pl.FP32]]) -> pl.Tensor[[128, 64], pl.FP32]:
        for i in pl.range(8):
            if i % 2 != 0:
                continue
            t = pl.load(a, [i * 16, 0], [16, 64])
            c = pl.store(pl.muls(t, 3.0), [i * 16, 0], c)
        for j in pl.range(4, 12, 2):
            t2 = pl.load(a, [(j // 4) * 16, 0], [16, 64])
            d = pl.store(pl.muls(t2, 2.0), [(j % 4) * 16 + (j // 4) * 32, 0], d)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[128, 64], pl.FP32], c: pl.InOut[pl.Tensor[[128, 64], pl.FP32]],
             d: pl.InOut[pl.Tensor[[128, 64], pl.FP32]]) -> pl.Tensor[[128, 64], pl.FP32]:
        c = self.k(a, c, d)
        return c
"""

SCALES = """import pypto.language as pl

@pl.program
class Scales:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[8, 64], pl.FP32], inv: pl.Out[pl.Tensor[[8], pl.FP32]]) -> pl.Tensor[[8], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            rs = pl.recip(pl.row_sum(pl.mul(x, x)))
            for b in pl.unroll(8):
                pl.tensor.write(inv, [b], pl.tensor.read(rs, [b, 0]) * 2.0)
        return inv
"""


def _fn(prog, name: str):
    return next(f for f in prog.functions if f.name == name)


def test_census_counts_ops_callees_operators_and_statement_kinds() -> None:
    prog = pl.parse(MODULO_KERNEL)
    k, main = census(_fn(prog, "k")), census(_fn(prog, "main"))
    assert {"tile.load", "tile.store", "tile.muls"} <= k.ops
    assert {BinOp.FloorDiv, BinOp.FloorMod, BinOp.Mul} <= k.binops
    assert {ForStmt, IfStmt} <= k.stmts
    assert main.callees == frozenset({"k"}) and not main.ops & k.ops
    assert census(_fn(prog, "k")) is k  # remembered per Function object


def test_unroll_loops_hands_on_a_function_without_modulo_element_reads_or_unroll_loops() -> None:
    prog = pl.parse(MODULO_KERNEL.replace("i % 2 != 0", "i > 9").replace("(j // 4) * 16", "j * 16")
                    .replace("(j % 4) * 16 + (j // 4) * 32", "j * 8"))
    assert census(_fn(prog, "k")).binops.isdisjoint({BinOp.FloorDiv, BinOp.FloorMod})
    out = UnrollLoops()(prog)
    assert _fn(out, "k") is _fn(prog, "k")


def test_unroll_loops_still_strip_mines_where_modulo_is_present() -> None:
    prog = pl.parse(MODULO_KERNEL)
    text = UnrollLoops()(prog).as_python()
    assert " % " not in text and " // " not in text


def test_unroll_loops_still_vectorizes_element_reads() -> None:
    prog = pl.parse_program(SCALES)
    assert "tensor.read" in census(_fn(prog, "main")).ops
    text = UnrollLoops()(prog).as_python()
    assert "pl.tensor.read(" not in text and "tensor.write(" not in text
