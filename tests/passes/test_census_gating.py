"""Passes skip functions that hold nothing they rewrite (judged by the per-function census of
:mod:`pypto.ir.census`, or a scan for the statements they rewrite); where it is present, the rewrite
still runs."""

from __future__ import annotations

import pypto.language as pl
from pypto.ir.census import census
from pypto.ir.expr import BinOp
from pypto.ir.stmt import ForStmt, IfStmt, preorder
from pypto.passes import get_pass
from pypto.passes._memref import memref_of
from pypto.passes.context import PassContext
from pypto.passes.pipelines import DEFAULT
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


CARRY = """import pypto.language as pl

@pl.program
class Carry:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[16, 64], pl.FP32], out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        acc = pl.load(a, [0, 0], [16, 64])
        for i in pl.range(4):
            t = pl.load(a, [0, 0], [16, 64])
            acc = pl.add(acc, t)
        out = pl.store(acc, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.InCore)
    def flat(self, a: pl.Tensor[[16, 64], pl.FP32], out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        t = pl.load(a, [0, 0], [16, 64])
        out = pl.store(pl.add(t, t), [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 64], pl.FP32], out: pl.Out[pl.Tensor[[16, 64], pl.FP32]],
             o2: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        out = self.k(a, out)
        o2 = self.flat(a, o2)
        return out
"""


def test_semantic_aliases_group_a_carried_tile_and_skip_functions_without_one() -> None:
    prog = pl.parse(CARRY)
    with PassContext() as ctx:
        for name in DEFAULT[:DEFAULT.index("MaterializeSemanticAliases")]:
            prog = get_pass(name).from_context(ctx)(prog)
        after = get_pass("MaterializeSemanticAliases").from_context(ctx)(prog)
    assert _fn(after, "k") is not _fn(prog, "k")  # the carried tile's loop result joins its group
    loop = next(s for s in preorder(_fn(after, "k").body) if isinstance(s, ForStmt))
    assert memref_of(loop.iter_args[0]) is not None
    assert memref_of(loop.iter_args[0]) == memref_of(loop.return_vars[0])
    assert _fn(after, "flat") is _fn(prog, "flat") and _fn(after, "main") is _fn(prog, "main")


NESTED = """import pypto.language as pl

@pl.program
class Nested:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[16, 64], pl.FP32], out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        t = pl.load(a, [0, 0], [16, 64])
        out = pl.store(pl.add(pl.mul(t, t), t), [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.InCore)
    def flat(self, a: pl.Tensor[[16, 64], pl.FP32], out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        t = pl.load(a, [0, 0], [16, 64])
        u = pl.add(t, t)
        out = pl.store(u, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 64], pl.FP32], out: pl.Out[pl.Tensor[[16, 64], pl.FP32]],
             o2: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        out = self.k(a, out)
        o2 = self.flat(a, o2)
        return out
"""


def test_flatten_call_expr_hoists_nested_calls_and_hands_on_flat_functions() -> None:
    prog = pl.parse(NESTED)
    after = get_pass("FlattenCallExpr").from_context(PassContext())(prog)
    assert _fn(after, "flat") is _fn(prog, "flat") and _fn(after, "main") is _fn(prog, "main")
    text = after.as_python()
    assert "__tmp_v0" in text and "pl.add(pl." not in text and "pl.store(pl." not in text
