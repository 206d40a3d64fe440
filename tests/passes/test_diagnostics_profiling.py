"""Diagnostic checks, perf hints, profile formats and dumps."""

from __future__ import annotations

import json

import pytest
from kernels import IN, OUT, add_program, matmul_acc_program, orch, tensor

from pypto.diagnostics import Severity
from pypto.ir import AssignStmt, DiagnosticCheck, DiagnosticPhase, Program, Var
from pypto.passes.context import PassContext
from pypto.passes.diagnostics import format_warning
from pypto.passes.manager import PassManager, run_pipeline
from pypto.passes.profiling import format_duration, format_profile_json, format_profile_txt


def _rebinding_program() -> Program:
    a, out = tensor("a", 4, 4), tensor("out", 4, 4)
    out2 = Var("out", out.var_type)
    unused = Var("unused", a.var_type)
    return Program("p", (orch("f", [a, out], [IN, OUT], [AssignStmt(unused, a), AssignStmt(out2, a)], out2),))


def test_prepipeline_warnings_and_disabling():
    from pypto.passes.diagnostics import DiagnosticsRunner

    runner = DiagnosticsRunner(PassContext(), None)
    runner.pre_pipeline(_rebinding_program())
    rules = sorted(d.rule for d in runner.found)
    assert rules == ["OutParamWriteDropped", "UnusedVariable"]
    line = format_warning(runner.found[0], DiagnosticPhase.PRE_PIPELINE)
    assert line.startswith("[warning] [") and "(pipeline_input)" in line
    off = DiagnosticsRunner(PassContext(disabled_diagnostics={DiagnosticCheck.UnusedVariable}), None)
    off.pre_pipeline(_rebinding_program())
    assert [d.rule for d in off.found] == ["OutParamWriteDropped"]
    silent = DiagnosticsRunner(PassContext(diagnostic_phase=DiagnosticPhase.NONE), None)
    silent.pre_pipeline(_rebinding_program())
    assert silent.found == []


def test_perf_hints_go_to_report_dir(tmp_path):
    result = run_pipeline(matmul_acc_program(), ctx=PassContext(), report_dir=tmp_path)
    hints = [d for d in result.diagnostics if d.severity is Severity.PERF_HINT]
    assert hints and all(d.rule == "TileInnermostDimGranularity" for d in hints)
    text = (tmp_path / "perf_hints.log").read_text()
    assert text.startswith("[perf_hint PH001] TileInnermostDimGranularity: tile.load has innermost dim = 128B")
    assert "recommended >= 512B for backend a2a3" in text


def test_no_perf_hint_for_512_byte_rows(tmp_path):
    result = run_pipeline(add_program(), ctx=PassContext(), report_dir=tmp_path)
    assert not [d for d in result.diagnostics if d.severity is Severity.PERF_HINT]


def test_profile_formats():
    stages = [{"name": "passes", "seconds": 0.0125, "children": [{"name": "ConvertToSSA", "seconds": 0.0005,
                                                                    "children": []}]},
              {"name": "codegen", "seconds": 1.5, "children": []}]
    txt = format_profile_txt(stages).splitlines()
    assert txt[:4] == ["PyPTO Compile Profile", "=" * 22, "Total: 1.512s", ""]
    assert txt[4] == f"{'passes':<28}{'12.5ms':>10}  (0.8%)"
    assert txt[5] == f"{'  ConvertToSSA':<28}{'500us':>10}  (0.0%)"
    doc = json.loads(format_profile_json(stages))
    assert doc["total_seconds"] == 1.5125 and doc["stages"][0]["children"][0]["seconds"] == 0.0005
    assert [format_duration(x) for x in (2e-5, 0.25, 3.0)] == ["20us", "250.0ms", "3.000s"]


def test_run_passes_requires_output_dir_for_dumps():
    with PassContext():
        pm = PassManager.get_strategy()
        with pytest.raises(ValueError, match="needs output_dir"):
            pm.run_passes(add_program(), dump_ir=True)


def test_dumps_written_with_upstream_names(tmp_path):
    pytest.importorskip("pypto.ir.printer")
    with PassContext():
        PassManager.get_strategy().run_passes(add_program(), dump_ir=True, output_dir=tmp_path)
    names = sorted(p.name for p in tmp_path.glob("*.py"))
    assert names[0] == "00_frontend.py" and len(names) == 55
    assert names[5] == "05_after_ConvertToSSA.py" and names[-1] == "54_after_MaterializeValidShapeSymbols.py"


def test_a_lowered_program_compiles_again_without_unused_variable_warnings():
    """Re-lowering (``ir.compile(k.lower(...))``): alloc bases used only by MemRef types, and a store's
    result that nothing reads (``out[:] = ...``), are not unused variables."""
    import numpy as np

    import pypto.language as pl
    from pypto.passes.diagnostics import DiagnosticsRunner

    @pl.jit
    def twice(a: pl.Tensor, out: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            out[:] = pl.add(a, a)
        return out

    x = np.zeros((64, 64), np.float32)
    lowered = twice.lower(x, x)
    text = lowered.as_python()
    assert "pl.tile.alloc" in text and "pl.tile.store" in text  # the forms the check must accept
    runner = DiagnosticsRunner(PassContext(), None)
    runner.pre_pipeline(lowered)
    assert [d.message for d in runner.found if d.rule == "UnusedVariable"] == []


def test_unused_result_of_a_store_is_kept_for_its_effect_but_a_dead_value_is_not():
    from pypto.ir import Call
    from pypto.ir.ops.registry import get_op
    from pypto.passes.diagnostics import DiagnosticsRunner

    assert get_op("tile.store").writes == "output_tensor" and get_op("tile.add").writes is None
    a, out = tensor("a", 4, 4), tensor("out", 4, 4)
    written = Var("written", out.var_type)
    dead = Var("dead", a.var_type)
    store = Call("tensor.write", (out, ), {}, {}, out.var_type)
    body = [AssignStmt(written, store), AssignStmt(dead, a)]
    runner = DiagnosticsRunner(PassContext(), None)
    runner.pre_pipeline(Program("p", (orch("f", [a, out], [IN, OUT], body, out),)))
    assert [d.message for d in runner.found if d.rule == "UnusedVariable"] == [
        "Variable 'dead' is defined but never used"]
