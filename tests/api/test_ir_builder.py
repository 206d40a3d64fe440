"""ir.IRBuilder: programs built call by call are the same IR the DSL parses."""

from __future__ import annotations

import pytest

import pypto.ir as ir
import pypto.language as pl
from pypto.ir.dtypes import DataType
from pypto.ir.expr import BinaryExpr, BinOp, Call, ConstInt
from pypto.ir.types import ScalarType

IDX = ScalarType(DataType.INDEX)


def _idx(v: int) -> ConstInt:
    return ConstInt(v, DataType.INDEX)


def test_builder_loop_with_iter_arg_matches_the_parsed_function() -> None:
    ib = ir.IRBuilder()
    with ib.function("f") as f:
        n = f.param("n", IDX)
        f.return_type(IDX)
        i = ib.var("i", IDX)
        with ib.for_loop(i, 0, n, 1) as loop:
            acc = loop.iter_arg("acc", _idx(0))
            s = ib.let("s", BinaryExpr(BinOp.Add, acc, i, DataType.INDEX))
            ib.emit(ir.YieldStmt((s,)))
            out = loop.return_var("out")
        ib.return_stmt(out)
    built = f.get_result()
    assert loop.get_result().return_vars == (out,) and loop.outputs() == [out]

    @pl.function
    def f(n: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:  # noqa: F811
        for i, (acc,) in pl.range(0, n, 1, init_values=(0,)):
            s = acc + i
            out = pl.yield_(s)
        return out

    ir.assert_structural_equal(built, f)


def test_builder_if_else_program_and_calls() -> None:
    ib = ir.IRBuilder()
    with ib.program("p") as p:
        helper = p.declare_function("helper")
        with ib.function("helper") as fh:
            x = fh.param("x", IDX)
            fh.return_type(IDX)
            with ib.if_stmt(BinaryExpr(BinOp.Lt, x, _idx(4), DataType.BOOL)) as branch:
                ib.emit(ir.YieldStmt((x,)))
                branch.else_()
                ib.emit(ir.YieldStmt((_idx(4),)))
                r = branch.return_var("r", IDX)
            ib.return_stmt(r)
        p.add_function(fh.get_result())
        main = p.declare_function("main")
        with ib.function("main") as fm:
            y = fm.param("y", IDX)
            fm.return_type(IDX)
            res = ib.let("res", Call(helper, (y,), result_type=IDX))
            ib.return_stmt(res)
        p.add_function(fm.get_result())
    prog = p.get_result()
    assert [fn.name for fn in prog.functions] == ["helper", "main"] and p.get_global_var("main") is main
    if_stmt = branch.get_result()
    assert if_stmt.else_body is not None and if_stmt.return_vars == (r,)
    text = ir.python_print(prog)
    ir.assert_structural_equal(pl.parse(text), prog)


def test_builder_misuse_is_a_value_error() -> None:
    ib = ir.IRBuilder()
    with pytest.raises(ValueError, match="inside a function"):
        ib.assign(ib.var("x", IDX), 1)
    with ib.function("g") as f:
        with pytest.raises(ValueError, match="inside a loop"):
            ib.break_stmt()
        with ib.if_stmt(True) as br:
            br.else_()
            with pytest.raises(ValueError, match="once"):
                br.else_()
        with pytest.raises(ValueError, match="does not match"):
            ib.let("t", 1, type=ir.TensorType((4,), DataType.FP32))
    with pytest.raises(ValueError, match="not declared"), ib.program("q") as p:
        p.add_function(f.get_result())
    from pypto.ir.builder import ForLoopBuilder

    with pytest.raises(ValueError, match="once its with-block has closed"):
        ForLoopBuilder(ib).get_result()


def test_builder_spans_point_at_the_caller() -> None:
    ib = ir.IRBuilder()
    with ib.function("h") as f:
        stmt = ib.assign(ib.var("z", IDX), 3)
    assert stmt.span.file == __file__ and stmt.span.line > 0
    assert f.get_result().span.file == __file__
