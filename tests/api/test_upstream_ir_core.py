"""Upstream's pypto.ir additions and the pypto.pypto_core face: real behaviour, stand-ins that raise."""

from __future__ import annotations

import threading

import pytest

import pypto.ir as ir
from pypto.errors import InternalError, UnsupportedFeatureError, UserError
from pypto.ir.dtypes import DataType
from pypto.ir.enums import ArgDirection, MemorySpace
from pypto.ir.expr import BinaryExpr, BinOp, ConstInt, GlobalVar, Var
from pypto.ir.types import ScalarType, TensorType, TileType


def _t(name: str = "t") -> Var:
    return Var(name, TensorType((16, 16), DataType.FP32))


def test_ir_op_builders_make_typed_registry_calls() -> None:
    t = _t()
    c = ir.op.tensor.add(t, t)
    assert c.op == "tensor.add" and c.type == t.type
    tile = ir.op.tile.load(t, [0, 0], [16, 16], [16, 16])
    assert isinstance(tile.type, TileType) and tile.type.memory_space is MemorySpace.Vec
    assert ir.op.tile.muls(tile, 2.0).type.shape == (16, 16)
    with pytest.raises(AttributeError):
        ir.op.tile.no_such_op  # noqa: B018
    with pytest.raises(UserError):
        ir.op.tensor.add(t)
    with pytest.raises(UnsupportedFeatureError, match="pld DSL"):
        ir.op.distributed.allreduce(t)
    with pytest.raises(UnsupportedFeatureError, match="tprefetch"):
        ir.op.prefetch.async_prefetch(t)


def test_make_call_records_directions() -> None:
    from pypto.ir.directions import make_call

    g, a, b = GlobalVar("k"), _t("a"), _t("b")
    call = make_call(g, [a, b], directions=[ir.input, ir.output])
    assert call.attrs["arg_directions"] == (ArgDirection.Input, ArgDirection.Output) and call.args == (a, b)
    assert "arg_directions" not in make_call(g, [a]).attrs and ir.scalar_dir is ArgDirection.Scalar
    with pytest.raises(ValueError, match="directions length"):
        make_call(g, [a, b], directions=[ir.input])


def test_ir_utils_and_operators() -> None:
    from pypto.ir import operators, utils

    assert utils.resolve_cast_mode("floor") == 3 and utils.resolve_cast_mode(6) == 6
    for bad in (7, True, "nearest"):
        with pytest.raises(ValueError):
            utils.resolve_cast_mode(bad)
    assert [e.value for e in utils._normalize_shape([4, 8])] == [4, 8]
    assert utils._to_make_tuple([1, 2.0]).elements[1].value == 2.0
    with pytest.raises(TypeError):
        utils._normalize_expr("x")
    i = Var("i", ScalarType(DataType.INDEX))
    assert utils._to_int32_scalar(i, i.span).dtype is DataType.INT32
    tile = Var("x", TileType((16, 16), DataType.FP32))
    assert utils._normalize_scalar_operand(2, tile).dtype is DataType.FP32
    with pytest.raises(UserError, match="cast it first"):
        utils._normalize_scalar_operand(i, tile)
    assert not utils.has_partial_valid_region(_t())
    with utils.use_parser_span(i.span):
        assert utils._get_span_or_capture() is i.span
    assert utils._get_span_or_capture().line > 0
    e = operators.binary(BinOp.Lt, i, 4)
    assert e.dtype is DataType.BOOL and e.rhs.dtype is DataType.INDEX


def test_op_conversion_rules_drive_convert_tensor_to_tile_ops() -> None:
    import pypto.language as pl
    from pypto.ir.op_conversion import unregister_op_conversion
    from pypto.ir.printer import python_print
    from pypto.passes import get_pass
    from pypto.passes.context import PassContext

    @pl.program
    class P:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]
              ) -> pl.Tensor[[16, 16], pl.FP32]:
            y = pl.exp(x)
            out = pl.assemble(out, y, [0, 0])
            return out

    def run() -> str:
        prog = P
        for name in ("ConvertToSSA", "ConvertTensorToTileOps"):
            prog = get_pass(name).from_context(PassContext()).run(prog)
        return python_print(prog)

    assert "pl.tile.exp(" in run()
    ir.register_op_conversion("tensor.exp", "tile.sqrt")
    try:
        assert "pl.tile.sqrt(" in run() and "pl.tile.exp(" not in run()

        @ir.op_conversion("tensor.exp")
        def _rule(ctx, args, kwargs, span):  # noqa: ANN001, ANN202
            a = ctx.let("abs_in", ir.op.tile.abs(args[0]))
            return ir.op.tile.exp(a)

        text = run()
        assert "abs_in" in text and "pl.tile.abs(" in text
    finally:
        unregister_op_conversion("tensor.exp")
    with pytest.raises(UserError, match="not a tensor"):
        ir.register_op_conversion("tile.exp", "tile.sqrt")


def test_ir_faces_and_option_types() -> None:
    from pypto.ir.compile import compile as driver_compile
    from pypto.passes.context import PassContext
    from pypto.passes.manager import PassManager

    assert ir.PassManager is PassManager and ir.PassContext is PassContext and callable(ir.compile)
    assert ir.compile.compile is driver_compile if hasattr(ir.compile, "compile") else True
    s = ir.DiagnosticCheckSet([ir.DiagnosticCheck.UnusedVariable])
    s.insert(ir.DiagnosticCheck.OutParamWriteDropped)
    assert s.contains(ir.DiagnosticCheck.UnusedVariable) and not s.empty()
    assert s.difference(ir.DiagnosticCheckSet([ir.DiagnosticCheck.UnusedVariable])).to_list() == [
        ir.DiagnosticCheck.OutParamWriteDropped]
    with pytest.raises(TypeError):
        hash(s)
    assert PassContext(disabled_diagnostics=s).disabled_diagnostics == frozenset(s.to_list())
    assert [m.name for m in ir.VerificationMode] == ["NONE", "BEFORE", "AFTER", "BEFORE_AND_AFTER"]
    from pypto.ir.formatter import ruff_format

    assert "x = 1" in ruff_format("x=1\n")


def test_pypto_core_names_used_by_upstream_tests_resolve() -> None:
    from pypto.pypto_core import LogLevel, _clear_thread_log_level, _set_thread_log_level  # noqa: F401
    from pypto.pypto_core import ir as core_ir
    from pypto.pypto_core import passes as core_passes
    from pypto.pypto_core.passes import MemoryPlanner

    assert MemoryPlanner.PTOAS.name == "PTOAS" and core_ir.CoreType.VECTOR.name == "VECTOR"
    assert core_ir.Program is ir.Program and core_ir.Function is ir.Function
    cfg = core_passes.l0_tile_chooser.L0TileConfig()
    cfg.M, cfg.N, cfg.K = 16, 256, 512
    cfg.l0a_bytes = cfg.l0b_bytes = 64 * 1024
    cfg.l0c_bytes = 128 * 1024
    r = core_passes.l0_tile_chooser.choose_l0_tile(cfg)
    assert (r.m, r.n, r.k, r.stationarity) == (16, 256, 64, core_passes.l0_tile_chooser.Stationarity.OutputStationary)
    with pytest.raises(AttributeError, match="no field 'max_m'"):
        cfg.max_m = 4
    with pytest.raises(ValueError, match="allow_padding=false but M=7"):
        cfg.M = 7
        core_passes.l0_tile_chooser.choose_l0_tile(cfg)
    assert core_passes.convert_to_ssa().name == "ConvertToSSA"
    with pytest.raises(UnsupportedFeatureError, match="not available in pypto"):
        core_ir.DistributedTensorType()


def test_pypto_core_ir_operator_classes() -> None:
    from pypto.pypto_core import ir as core_ir

    one, two = ConstInt(1, DataType.INDEX), ConstInt(2, DataType.INDEX)
    e = core_ir.Add(one, two, DataType.INDEX)
    assert isinstance(e, BinaryExpr) and isinstance(e, core_ir.Add) and not isinstance(e, core_ir.Sub)
    assert core_ir.sub(e, 1).op is BinOp.Sub and core_ir.lt(e, 3).dtype is DataType.BOOL
    assert isinstance(core_ir.Neg(e, DataType.INDEX), core_ir.Neg)
    assert core_ir.cast(e, DataType.INT32).dtype is DataType.INT32
    at = ir.Span("k.py", 7, 2)
    assert core_ir.add(e, 1, span=at).span is at and core_ir.neg(e, span=at).span is at


def test_pypto_core_checks_and_thread_log_level() -> None:
    import pypto.pypto_core as core

    core.check(True, "fine")
    with pytest.raises(ValueError, match="bad"):
        core.check(False, "bad")
    with pytest.raises(InternalError, match="broken"):
        core.internal_check(False, "broken")
    with pytest.raises(InternalError, match=r"broken \["):
        core.internal_check_span(False, "broken", ir.Span("f.py", 3, 1))
    from pypto.pypto_core.logging import _THREAD, _thread_filter

    before = core.get_log_level()
    core._set_thread_log_level(core.LogLevel.ERROR)
    try:
        import structlog

        with pytest.raises(structlog.DropEvent):
            _thread_filter(None, "info", {})
        assert _thread_filter(None, "error", {"e": 1}) == {"e": 1}
        seen = []
        th = threading.Thread(target=lambda: seen.append(_thread_filter(None, "info", {"x": 1})))
        th.start()
        th.join()
        assert seen == [{"x": 1}]  # another thread keeps the process level
    finally:
        core._clear_thread_log_level()
    assert getattr(_THREAD, "level", None) is None and core.get_log_level() == before
    core.set_log_level(core.LogLevel.WARN)
    try:
        with pytest.raises(ValueError, match="below the process level"):
            core._set_thread_log_level(core.LogLevel.INFO)
    finally:
        core.set_log_level(before)


def test_pypto_core_testing_helpers_raise_what_they_name() -> None:
    from pypto.pypto_core import testing

    for fn, exc in ((testing.raise_value_error, ValueError), (testing.raise_index_error, IndexError),
                    (testing.raise_internal_error, InternalError)):
        with pytest.raises(exc, match="m"):
            fn("m")
    with pytest.raises(UnsupportedFeatureError):
        testing.is_no_duplicate_op("x")


def test_pypto_core_verification_instrument_modes() -> None:
    from pypto.errors import VerificationError
    from pypto.passes.instruments import PassStep
    from pypto.pypto_core import passes as core_passes

    ib = ir.IRBuilder()
    with ib.program("p") as p:
        p.declare_function("f")
        with ib.function("f") as f:
            f.return_type(ScalarType(DataType.INDEX))
            ib.return_stmt(Var("never_defined", ScalarType(DataType.INDEX)))
        p.add_function(f.get_result())
    bad = p.get_result()
    step = PassStep(1, core_passes.simplify(), bad, bad)
    core_passes.VerificationInstrument(ir.VerificationMode.NONE).after_pass(step)
    for mode in (ir.VerificationMode.AFTER, ir.VerificationMode.BEFORE):
        with pytest.raises(VerificationError, match="never_defined"):
            core_passes.VerificationInstrument(mode).after_pass(step)
    pipeline = core_passes.PassPipeline()
    pipeline.add_pass(core_passes.simplify())
    assert pipeline.get_pass_names() == ["Simplify"]
    with pytest.raises(VerificationError):
        core_passes.verify_properties(core_passes.get_structural_properties(), bad)


def test_compiled_program_helpers_used_by_pypto_lib(torch) -> None:

    from pypto.compiled import CompiledProgram
    from pypto.ir.compiled_program import CompiledProgram as Face
    from pypto.ir.compiled_program import _to_runtime_shape, _to_torch_dtype

    assert Face is CompiledProgram
    assert _to_torch_dtype(DataType.BF16) is torch.bfloat16 and _to_torch_dtype(DataType.INDEX) is None
    assert _to_runtime_shape([4, 8], DataType.FP4) == [4, 4] and _to_runtime_shape([4, 8], DataType.FP16) == [4, 8]
    assert _to_runtime_shape([4, -1], DataType.FP4) == [4, -1]


def test_thread_log_level_drops_this_threads_lines(capsys: pytest.CaptureFixture[str]) -> None:
    import pypto.pypto_core as core

    core._set_thread_log_level(core.LogLevel.ERROR)
    try:
        core.log_warn("hidden-line-1234")
        core.log_error("shown-line-5678")
    finally:
        core._clear_thread_log_level()
    core.log_warn("shown-again-9012")
    err = capsys.readouterr().err
    assert "hidden-line-1234" not in err and "shown-line-5678" in err and "shown-again-9012" in err


def test_pypto_core_ir_helpers() -> None:
    from pypto.ir.op_conversion import unregister_op_conversion
    from pypto.ir.stmt import AssignStmt, SeqStmts, YieldStmt
    from pypto.pypto_core import ir as core_ir

    t = _t()
    call = core_ir.create_op_call("tensor.add", [t, t], ir.Span.unknown())
    assert call.op == "tensor.add" and call.type == t.type
    assert core_ir.create_op_call("tensor.adds", [t, ConstInt(1, DataType.FP32)], {}, ir.Span.unknown()).op == "tensor.adds"
    assert core_ir.is_incore_type(ir.FunctionType.AIV) and not core_ir.is_incore_type(ir.FunctionType.Orchestration)
    assert core_ir.python_print_type(t.type) == "pl.Tensor[[16, 16], pl.FP32]"
    a, b = Var("a", ScalarType(DataType.INDEX)), Var("b", ScalarType(DataType.INDEX))
    inner = SeqStmts((AssignStmt(b, a), YieldStmt((b,))))
    body = SeqStmts((AssignStmt(a, ConstInt(1, DataType.INDEX)), inner))
    assert core_ir.flatten_to_stmts(body)[0].var is a and len(core_ir.flatten_to_stmts(body)) == 3
    assert core_ir.collect_def_vars(body) == [a, b]
    assert core_ir.find_yield_stmt(body) is inner.stmts[1] and core_ir.get_last_yield_stmt(body) is inner.stmts[1]
    assert core_ir.get_last_yield_stmt(SeqStmts((YieldStmt((a,)), AssignStmt(b, a)))) is None
    c = Var("c", ScalarType(DataType.INDEX))
    assert core_ir.substitute_expr(BinaryExpr(BinOp.Add, a, b, DataType.INDEX), [(a, c)]).lhs is c
    assert core_ir.substitute_stmt(inner, [(a, c)]).stmts[0].value is c
    assert not core_ir.has_op_conversion("tensor.exp")
    core_ir.register_op_conversion_custom("tensor.exp", lambda args, kwargs, span: args[0])
    try:
        assert core_ir.has_op_conversion("tensor.exp")
    finally:
        unregister_op_conversion("tensor.exp")
