"""The IR printer: dump layout, name uniquing, precedence, constants; text re-parses structurally equal."""

from __future__ import annotations

import pypto.language as pl
from pypto.ir.callgraph import callee_first
from pypto.ir.dtypes import DataType
from pypto.ir.enums import FunctionType, ParamDirection
from pypto.ir.expr import BinaryExpr, BinOp, ConstFloat, ConstInt, Var
from pypto.ir.function import Function, Program
from pypto.ir.printer import python_print
from pypto.ir.stmt import AssignStmt, ReturnStmt, SeqStmts
from pypto.ir.structural import structural_diff
from pypto.ir.types import ScalarType

IDX = ScalarType(DataType.INDEX)


def _prog(stmts, params=(), rets=(IDX,)) -> Program:
    f = Function("f", tuple(params), tuple(ParamDirection.In for _ in params), rets, SeqStmts(tuple(stmts)),
                 FunctionType.Orchestration)
    return Program("P", (f,))


def test_live_vars_sharing_a_hint_get_unique_names() -> None:
    x1, x2, y = Var("x", IDX), Var("x", IDX), Var("y", IDX)
    p = _prog([AssignStmt(x1, ConstInt(1)), AssignStmt(x2, BinaryExpr(BinOp.Add, x1, ConstInt(1), DataType.INDEX)),
               AssignStmt(y, BinaryExpr(BinOp.Add, x1, x2, DataType.INDEX)), ReturnStmt((y,))])
    text = python_print(p)
    assert "        x_1: pl.Scalar[pl.INDEX] = x + 1\n        y: pl.Scalar[pl.INDEX] = x + x_1\n" in text
    assert structural_diff(p, pl.parse(text)) is None


def test_dead_name_is_reused() -> None:
    x1, x2 = Var("x", IDX), Var("x", IDX)
    p = _prog([AssignStmt(x1, ConstInt(1)), AssignStmt(x2, BinaryExpr(BinOp.Mul, x1, ConstInt(3), DataType.INDEX)),
               ReturnStmt((x2,))])
    assert "x: pl.Scalar[pl.INDEX] = x * 3" in python_print(p)


def test_var_named_like_a_custom_prefix_is_renamed() -> None:
    # no two Vars share a hint, but one is the DSL prefix: the naming run must still rename it
    ir_, y = Var("ir", IDX), Var("y", IDX)
    p = _prog([AssignStmt(ir_, ConstInt(1)), AssignStmt(y, BinaryExpr(BinOp.Add, ir_, ir_, DataType.INDEX)),
               ReturnStmt((y,))])
    text = python_print(p, prefix="ir")
    assert "        ir_1: ir.Scalar[ir.INDEX] = 1\n        y: ir.Scalar[ir.INDEX] = ir_1 + ir_1\n" in text


def test_hints_equal_after_sanitizing_get_unique_names() -> None:
    a, b, y = Var("a.b", IDX), Var("a_b", IDX), Var("y", IDX)
    p = _prog([AssignStmt(a, ConstInt(1)), AssignStmt(b, ConstInt(2)),
               AssignStmt(y, BinaryExpr(BinOp.Add, a, b, DataType.INDEX)), ReturnStmt((y,))])
    assert "y: pl.Scalar[pl.INDEX] = a_b + a_b_1" in python_print(p)


def test_local_sharing_a_free_vars_hint_is_renamed() -> None:
    n_free, n_local, y = Var("n", IDX), Var("n", IDX), Var("y", IDX)
    p = _prog([AssignStmt(n_local, ConstInt(1)),
               AssignStmt(y, BinaryExpr(BinOp.Add, n_free, n_local, DataType.INDEX)), ReturnStmt((y,))])
    assert "y: pl.Scalar[pl.INDEX] = n + n_1" in python_print(p.functions[0])


def test_precedence_and_constants() -> None:
    n = Var("n", IDX)
    e = BinaryExpr(BinOp.Mul, BinaryExpr(BinOp.Add, n, ConstInt(1), DataType.INDEX),
                   BinaryExpr(BinOp.Sub, n, ConstInt(2), DataType.INDEX), DataType.INDEX)
    assert python_print(e) == "(n + 1) * (n - 2)"
    assert python_print(BinaryExpr(BinOp.Sub, n, BinaryExpr(BinOp.Sub, n, ConstInt(1), DataType.INDEX),
                                   DataType.INDEX)) == "n - (n - 1)"
    assert python_print(ConstInt(0, DataType.INT64)) == "pl.const(0, pl.INT64)"
    assert python_print(ConstFloat(-1.0)) == "-1.0"
    assert python_print(ConstFloat(2.0, DataType.FP16)) == "pl.const(2.0, pl.FP16)"


def test_program_layout_and_function_order() -> None:
    text = """import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[8, 8], pl.FP32]) -> pl.Tensor[[8, 8], pl.FP32]:
        b = self.zk(a)
        c = self.ak(b)
        return c

    @pl.function(type=pl.FunctionType.InCore)
    def zk(self, a: pl.Tensor[[8, 8], pl.FP32]) -> pl.Tensor[[8, 8], pl.FP32]:
        return a

    @pl.function(type=pl.FunctionType.InCore)
    def ak(self, a: pl.Tensor[[8, 8], pl.FP32]) -> pl.Tensor[[8, 8], pl.FP32]:
        return a
"""
    p = pl.parse(text)
    out = python_print(p)
    lines = out.splitlines()
    assert lines[:5] == ["# pypto.program: P", "import pypto.language as pl", "", "@pl.program", "class P:"]
    assert [ln.split("(")[0].strip() for ln in lines if ln.strip().startswith("def ")] == ["def ak", "def zk", "def main"]
    assert "    def ak(a: pl.Tensor[[8, 8], pl.FP32]) -> pl.Tensor[[8, 8], pl.FP32]:" in lines
    assert [f.name for f in callee_first(p.functions)] == ["ak", "zk", "main"]
    assert p.as_python() == out


def test_alloc_prints_positionally_and_decorator_defaults() -> None:
    text = """import pypto.language as pl

@pl.program
class P:
    @pl.function
    def f(self) -> pl.Ptr:
        m: pl.Ptr = pl.tile.alloc(pl.Mem.Vec, 1024, pinned=True)
        return m
"""
    out = python_print(pl.parse(text))
    assert "    @pl.function\n    def f(self) -> pl.Ptr:\n" in out
    assert "m: pl.Ptr = pl.tile.alloc(pl.Mem.Vec, 1024, pinned=True)" in out


def test_explicit_layout_states_implicit_views_and_parses_back() -> None:
    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[64, 64], pl.FP32],
              out: pl.Out[pl.Tensor[[64, 1], pl.FP32]]) -> pl.Tensor[[64, 1], pl.FP32]:
            t: pl.Tile[[64, 64], pl.FP32] = pl.load(x, [0, 0], [64, 64])
            s: pl.Tile[[64, 1], pl.FP32] = pl.row_sum(t)
            out = pl.store(s, [0, 0], out)
            return out

    concise, explicit = python_print(P), python_print(P, explicit_layout=True)
    assert "TileView" not in concise
    # a [64, 1] vector tile's implicit layout is column-major; a [64, 64] one's is row-major
    assert "pl.Tile[[64, 64], pl.FP32, pl.Mem.Vec, pl.TileView(blayout=pl.TileLayout.row_major, " \
        "slayout=pl.TileLayout.none_box, fractal=512)]" in explicit
    assert "pl.Tile[[64, 1], pl.FP32, pl.Mem.Vec, pl.TileView(blayout=pl.TileLayout.col_major" in explicit
    # the parser stores a view equal to the memory space's implicit one as None (the canonical form)
    back = pl.parse_program(explicit)
    assert python_print(back) == concise
    assert structural_diff(back, pl.parse_program(concise)) is None
