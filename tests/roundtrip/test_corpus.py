"""print -> parse round trip (structural equality, stable text) over a corpus of DSL programs."""

from __future__ import annotations

import pytest

import pypto.language as pl
from pypto.ir.printer import python_print
from pypto.ir.structural import structural_diff

H = "import pypto.language as pl\n\n"
T64 = "pl.Tensor[[64, 64], pl.FP32]"

CORPUS = {
    "elementwise": H + f"""
@pl.program
class Elem:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: {T64}, b: {T64}, out: pl.Out[{T64}]) -> {T64}:
        ta = pl.load(a, [0, 0], [64, 64])
        tb = pl.load(b, [0, 0], [64, 64])
        c = pl.exp(pl.sub(ta, tb)) * 2.0 + tb / ta
        d = pl.maximum(c, pl.neg(ta))
        e = pl.cast(d, pl.FP16)
        f = pl.cast(e, target_type=pl.FP32)
        out = pl.store(pl.relu(f), [0, 0], out)
        return out
""",
    "loops_iter_args": H + f"""
@pl.program
class Loops:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[256, 64], pl.FP32], out: pl.Out[{T64}]) -> {T64}:
        acc = pl.create_tile([64, 64], dtype=pl.FP32, target_memory=pl.Mem.Vec)
        for i, (x, n) in pl.range(0, 4, 1, init_values=(acc, 0)):
            t = pl.load(a, [i * 64, 0], [64, 64])
            s = pl.add(x, t)
            x2, n2 = pl.yield_(s, n + 1)
        for j in pl.range(2, 8, 2):
            if j == 4:
                continue
            if j > 6:
                break
        for u in pl.unroll(2):
            y = pl.adds(x2, 1.0)
        out = pl.store(x2, [0, 0], out)
        return out
""",
    "if_else_yield": H + f"""
@pl.program
class Branches:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: {T64}, n: pl.Scalar[pl.INT32], out: pl.Out[{T64}]) -> {T64}:
        t = pl.load(a, [0, 0], [64, 64])
        if n > 3 and n != 7:
            r = pl.exp(t)
            v = pl.yield_(r)
        else:
            v = pl.yield_(t)
        if not n < 0:
            w = pl.muls(v, 0.5)
        out = pl.store(v, [0, 0], out)
        return out
""",
    "scopes": H + f"""
@pl.program
class Scopes:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: {T64}, out: pl.Out[{T64}]) -> {T64}:
        with pl.scope():
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="first") as tid:
                out[:] = pl.add(a, a)
            with pl.at(level=pl.Level.CORE_GROUP, deps=[tid]):
                out[0:32, :] = pl.mul(a[0:32, :], a[32:64, :])
        with pl.manual_scope():
            with pl.cluster(name_hint="grp"):
                x = pl.add(out, a)
        with pl.at(level=pl.Level.HOST, role=pl.Role.Orchestrator):
            y = pl.add(a, a)
        return out
""",
    "matmul": H + f"""
@pl.program
class Mm:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[64, 32], pl.FP16], b: pl.Tensor[[32, 64], pl.FP16], c: pl.Out[{T64}]) -> {T64}:
        a1 = pl.load(a, [0, 0], [64, 32], target_memory=pl.Mem.Mat)
        b1 = pl.load(b, [0, 0], [32, 64], target_memory=pl.Mem.Mat)
        a0 = pl.move(a1, target_memory=pl.Mem.Left)
        b0 = pl.move(b1, pl.Mem.Right)
        acc: pl.Tile[[64, 64], pl.FP32, pl.Mem.Acc] = pl.matmul(a0, b0)
        acc2: pl.Tile[[64, 64], pl.FP32, pl.Mem.Acc] = pl.matmul_acc(acc, a0, b0)
        m = pl.row_max(pl.load(c, [0, 0], [64, 64]))
        c = pl.store(acc2, [0, 0], c)
        return c
""",
    "multi_function_calls": H + f"""
@pl.program
class Multi:
    @pl.function(type=pl.FunctionType.Orchestration, auto_scope=False)
    def main(self, a: {T64}, out: pl.Out[{T64}]) -> tuple[{T64}, {T64}]:
        t = pl.create_tensor([64, 64], dtype=pl.FP32)
        t2 = self.k(a, t, attrs={{"arg_directions": [pl.adir.input, pl.adir.output_existing]}})
        out = self.k(t2, out)
        return out, t2

    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: {T64}, y: pl.Out[{T64}]) -> {T64}:
        pl.store(pl.load(x, [0, 0], [64, 64]), [0, 0], y)
        return y
""",
    "dynamic_and_consts": H + """M = pl.dynamic("M")

@pl.program
class Dyn:
    @pl.function(type=pl.FunctionType.Opaque, level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def f(self, a: pl.Tensor[[M, 64], pl.FP32], n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[M, 64], pl.FP32]:
        pl.func_attr({"note": "x", "k": 3})
        c = pl.const(7, pl.INT64)
        d = pl.const(1.5, pl.FP16)
        m = n // 2 - (n % 3) * 4
        e = -(n + 1)
        return a
""",
    "while_loop": H + f"""
@pl.program
class W:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: {T64}, n: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
        for (i, s) in pl.while_(init_values=(0, n)):
            pl.cond(i < 10)
            i2, s2 = pl.yield_(i + 1, s + i)
        return s2
""",
    "views_and_memrefs": H + """
@pl.program
class V:
    @pl.function(type=pl.FunctionType.AIV)
    def k(self, a: pl.Tensor[[64, 64], pl.FP32, pl.MemRef("mem_ddr_0", pl.const(0, pl.INT64), 16384)], b: pl.Tensor[[64, 64], pl.FP32, pl.TensorView(stride=[1, 64], layout=pl.TensorLayout.DN)]) -> pl.Tensor[[64, 64], pl.FP32]:
        mem_vec_0: pl.Ptr = pl.tile.alloc(pl.Mem.Vec, 16384)
        t: pl.Tile[[64, 1], pl.FP32, pl.MemRef(mem_vec_0, pl.const(256, pl.INT64), 256), pl.Mem.Vec, pl.TileView(blayout=pl.TileLayout.col_major, fractal=1024)] = pl.tile.row_sum(pl.tile.load(a, [0, 0], [64, 64], [64, 64], target_memory=pl.Mem.Vec))
        return a
""",
    "name_collisions": H + f"""
@pl.program
class N:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: {T64}, out: pl.Out[{T64}]) -> {T64}:
        t = pl.load(a, [0, 0], [64, 64])
        u = t
        t = pl.exp(t)
        v = pl.add(t, u)
        t = pl.add(v, t)
        out = pl.store(t, [0, 0], out)
        return out
""",
}


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_corpus_round_trip(name: str) -> None:
    program = pl.parse(CORPUS[name])
    text = python_print(program)
    again = pl.parse(text)
    assert structural_diff(program, again) is None, text
    assert python_print(again) == text


def test_concise_print_reparses() -> None:
    program = pl.parse(CORPUS["loops_iter_args"])
    assert structural_diff(program, pl.parse(python_print(program, concise=True))) is None


def test_other_prefix() -> None:
    program = pl.parse(CORPUS["elementwise"])
    text = python_print(program, prefix="dsl")
    assert text.splitlines()[1] == "from pypto import language as dsl"
    assert "dsl.tile.load(" in text
    assert structural_diff(program, pl.parse(text)) is None


def test_decorated_program_round_trips() -> None:
    n = 64

    @pl.program
    class Prog:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[n, 64], pl.FP32], out: pl.Out[pl.Tensor[[n, 64], pl.FP32]]) -> pl.Tensor[[n, 64], pl.FP32]:
            t = pl.load(a, [0, 0], [n, 64])
            out = pl.store(pl.mul(t, t), [0, 0], out)
            return out

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[n, 64], pl.FP32], out: pl.Out[pl.Tensor[[n, 64], pl.FP32]]) -> pl.Tensor[[n, 64], pl.FP32]:
            out = self.k(a, out)
            return out

    assert [f.name for f in Prog.functions] == ["k", "main"]
    assert structural_diff(Prog, pl.parse(Prog.as_python())) is None
