"""Upstream's ``pypto.language.*`` module paths: each name is pl's own object with pl's behaviour."""

from __future__ import annotations

import ast
import textwrap

import pytest

import pypto.language as pl
import pypto.language.distributed as pld
from pypto.errors import ParserError, SSAViolationError, UnsupportedFeatureError, UserError
from pypto.ir.enums import ArgDirection, Level, ScopeMode


def test_op_package_names_are_pl_ops_and_work_in_a_dsl_body() -> None:
    from pypto.language import op
    from pypto.language.op import tensor_ops, tile_ops, unified_ops

    assert op.add == pl.add and op.tile is tile_ops and tile_ops.load == pl.tile.load
    assert tensor_ops.create_tensor == pl.tensor.create_tensor and unified_ops.exp == pl.exp
    with pytest.raises(AttributeError):
        op.not_an_op  # noqa: B018
    with pytest.raises(AttributeError):
        op.Tensor  # noqa: B018  (a type, not an op)
    with pytest.raises(UnsupportedFeatureError, match="ptoas 0.1.1"):
        op.cmp()

    @pl.function
    def f(x: pl.Tensor[[16, 16], pl.FP32]) -> pl.Tensor[[16, 16], pl.FP32]:
        y = pl.op.tensor.add(x, x)
        return op.mul(y, 2.0)

    from pypto.ir.printer import python_print

    text = python_print(f)
    assert "pl.tensor.add(x, x)" in text and "pl.tensor.muls(" in text


def test_scope_and_dsl_api_are_the_dsl_constructs() -> None:
    import importlib

    import pypto.language.dsl_api as api
    from pypto.language import dsl
    from pypto.language import scope as scope_construct

    mod = importlib.import_module("pypto.language.scope")
    assert mod.ScopeMode is ScopeMode and mod.submit is dsl.submit and scope_construct is dsl.scope
    assert pl.scope is dsl.scope  # importing the module does not rebind pl.scope
    assert api.range is pl.range and api.at is pl.at and api.yield_ is pl.yield_
    assert list(api.RangeIterator(7, 1, 3)) == [1, 4]
    assert list(api.RangeIterator(2, init_values=(5,))) == [(0, (5,)), (1, (5,))]
    assert list(api.WhileIterator(init_values=(1, 2))) == [(1, 2)]
    with pytest.raises(ValueError, match="init_values"):
        api.WhileIterator()
    with pytest.raises(UserError, match="with-statement inside a @pl.function"), api.AtContext(Level.CORE_GROUP):
        pass
    with pytest.raises(UnsupportedFeatureError, match="split_aiv"):
        iter(api.SplitAivContext(2))


def test_arg_direction_markers_are_ir_arg_directions() -> None:
    from pypto.language import arg_direction as ad

    assert ad.input is ArgDirection.Input is pl.adir.input and ad.no_dep is ArgDirection.NoDep
    assert ad.NAME_TO_DIRECTION["output_existing"] is ArgDirection.OutputExisting
    assert {ad.DIRECTION_TO_NAME[d] for d in ArgDirection} == set(ad.NAME_TO_DIRECTION)


def test_typing_paths_and_predicate_to_expr() -> None:
    from pypto.ir.dtypes import DataType
    from pypto.ir.expr import ConstBool, Var
    from pypto.ir.types import ScalarType
    from pypto.jit import RUNTIME
    from pypto.language import typing as t
    from pypto.language.typing import scalar, tensor

    assert t.Tensor is pl.Tensor is tensor.Tensor and t.RUNTIME is RUNTIME is pl.RUNTIME
    assert isinstance(RUNTIME, scalar.RuntimeScalarMarker)
    assert scalar.predicate_to_expr(None) is None
    const = scalar.predicate_to_expr(True)
    assert isinstance(const, ConstBool) and const.value is True
    v = Var("p", ScalarType(DataType.BOOL))
    assert scalar.predicate_to_expr(v) is v
    with pytest.raises(TypeError):
        scalar.predicate_to_expr("yes")
    with pytest.raises(UnsupportedFeatureError):
        t.BoolLike[int]


def test_parser_package_names_and_diagnostics() -> None:
    from pypto.language import parser
    from pypto.language.parser import diagnostics as d
    from pypto.language.parser.diagnostics.error_codes import ErrorCategory

    assert parser.function is pl.function and parser.parse is pl.parse and parser.range is pl.range
    assert d.ParserError is ParserError and issubclass(d.UnsupportedFeatureError, UserError)
    assert d.get_error_code(d.SSAViolationError) is d.ErrorCode.SSA_VIOLATION
    assert d.ErrorCode.UNDEFINED_VARIABLE.category is ErrorCategory.NAME and d.get_error_code(ValueError) is None
    with pytest.raises(d.UndefinedVariableError) as info:
        pl.parse("@pl.function\ndef f(x: pl.Tensor[[4], pl.FP32]) -> pl.Tensor[[4], pl.FP32]:\n    return y\n")
    assert d.concise_error_message(info.value) == info.value.message and "\n" not in info.value.message
    assert d.concise_error_message(RuntimeError("a\n\nb")) == "a"
    assert "\033[1;31merror:" in d.ErrorRenderer(use_color=True).render(info.value)
    assert d.ErrorRenderer(use_color=False).render(info.value) == info.value.render()


def test_parser_helpers() -> None:
    from pypto.language.parser.enum_utils import LEVEL_MAP, extract_enum_value
    from pypto.language.parser.scope_manager import ScopeManager
    from pypto.language.parser.source_lookup import get_class_source_lines
    from pypto.language.parser.span_tracker import SpanTracker, active_source_map, ast_column_to_span_column

    node = ast.parse("pl.Level.HOST", mode="eval").body
    assert extract_enum_value(node, LEVEL_MAP, "Level", "pl.Level") is Level.HOST
    with pytest.raises(ParserError, match="unknown pl.Level value 'NOPE'"):
        extract_enum_value(ast.parse("pl.Level.NOPE", mode="eval").body, LEVEL_MAP, "Level", "pl.Level")
    sm = ScopeManager(strict_ssa=True)
    sm.enter_scope("function")
    sm.define_var("a", 1)
    sm.enter_scope("for")
    sm.define_var("b", 2)
    assert sm.lookup_var("a") == 1 and sm.in_scope_type("function") and sm.current_scope_type() == "for"
    sm.exit_scope(leak_vars=True)
    assert sm.is_defined("b")
    with pytest.raises(SSAViolationError):
        sm.define_var("a", 3)
    lines, first = get_class_source_lines(ScopeManager)
    assert lines[0].startswith("class ScopeManager") and first > 1
    src = textwrap.dedent("x = 'é' + y\n")
    name = ast.parse(src).body[0].value.right
    assert ast_column_to_span_column(src, name.col_offset) == 11
    span = SpanTracker("f.py", src.splitlines(), line_offset=9).get_span(name)
    assert (span.file, span.line, span.col) == ("f.py", 10, 11)
    with active_source_map({10: 42}):
        assert SpanTracker("f.py", src.splitlines(), line_offset=9).get_span(name).line == 42
    from pypto.language.parser.ast_parser import ASTParser

    with pytest.raises(UnsupportedFeatureError, match="parser internals"):
        ASTParser()


def test_distributed_paths_are_the_pld_constructs() -> None:
    from pypto.language.distributed.op import system_ops, tensor_ops, tile_ops, unified_ops
    from pypto.language.distributed.typing import CommCtx, CommCtxType, DistributedTensor

    assert system_ops.world_size is pld.world_size is pld.system.world_size and pld.system.rank is pld.rank
    assert tensor_ops.alloc_window_buffer is pld.alloc_window_buffer and unified_ops.remote_load is pld.tile.remote_load
    assert pld.remote_store is pld.tile.remote_store and DistributedTensor is pld.DistributedTensor
    assert CommCtxType.get() is CommCtxType.get() and CommCtxType() == CommCtxType.get()
    with pytest.raises(RuntimeError, match="placeholder"):
        CommCtx().unwrap()
    for stand_in in (tile_ops.get, tile_ops.put, tensor_ops.all_to_all_v, tensor_ops.remote_store):
        with pytest.raises(UnsupportedFeatureError, match="distributed lowering"):
            stand_in()
    with pytest.raises(UserError, match="called as plain Python"):
        system_ops.world_size()
