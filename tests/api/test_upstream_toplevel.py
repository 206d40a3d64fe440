"""Upstream's top-level ``pypto`` names: dtypes, logging, checks, submodules, ``pypto.testing``, compile profiling."""

from __future__ import annotations

import subprocess
import sys

import pytest

import pypto
from pypto.errors import InternalError, PyptoError
from pypto.ir.dtypes import DataType
from pypto.span import Span


def test_dtype_constants_are_the_data_types() -> None:
    assert pypto.DataType is DataType
    for name in ("BOOL", "INT4", "INT8", "INT64", "UINT64", "FP8E4M3FN", "FP16", "FP32", "BF16", "HF8", "INDEX"):
        assert getattr(pypto, f"DT_{name}") is DataType[name]
    with pytest.raises(AttributeError, match="DT_FP128"):
        pypto.DT_FP128  # noqa: B018


def test_checks_raise_upstreams_error_kinds() -> None:
    pypto.check(True, "fine")
    with pytest.raises(ValueError, match="bad size"):
        pypto.check(False, "bad size")
    with pytest.raises(InternalError, match="broken"):
        pypto.internal_check(False, "broken")
    with pytest.raises(InternalError, match=r"^k\.py:3:5: lost"):
        pypto.internal_check_span(False, "lost", Span("k.py", 3, 5))
    pypto.internal_check_span(True, "fine", Span("k.py", 3, 5))


def test_log_functions_write_at_their_level(capsys: pytest.CaptureFixture[str]) -> None:
    before = pypto.get_log_level()
    try:
        pypto.set_log_level(pypto.LogLevel.WARN)
        pypto.log_info("quiet-info")
        pypto.log_warn("loud-warn")
        pypto.log_event("an-event")
        pypto.log_error("an-error")
        pypto.set_log_level(pypto.LogLevel.DEBUG)
        pypto.log_debug("a-debug")
        pypto.log_fatal("a-fatal")
    finally:
        pypto.set_log_level(before)
    err = capsys.readouterr().err
    assert "quiet-info" not in err and "an-event" not in err  # EVENT writes like INFO: below WARN
    for text in ("loud-warn", "an-error", "a-debug", "a-fatal"):
        assert text in err


def test_submodule_names_are_the_modules() -> None:
    import pypto.codegen
    import pypto.compile_profiling
    import pypto.ir
    import pypto.language
    import pypto.passes
    import pypto.runtime
    import pypto.testing

    for name in ("codegen", "compile_profiling", "ir", "language", "passes", "runtime", "testing"):
        assert getattr(pypto, name) is sys.modules[f"pypto.{name}"]


def test_import_pypto_stays_cheap() -> None:
    code = ("import sys, pypto; pypto.DT_FP32; pypto.log_info; "
            "print(sorted(m for m in ('torch', 'pypto.runtime', 'pypto.language', 'pypto.passes') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_testing_helpers_raise_each_kind() -> None:
    from pypto import testing

    cases = [(testing.raise_value_error, ValueError), (testing.raise_type_error, TypeError),
             (testing.raise_runtime_error, RuntimeError), (testing.raise_index_error, IndexError),
             (testing.raise_not_implemented_error, NotImplementedError), (testing.raise_generic_error, PyptoError),
             (testing.raise_assertion_error, AssertionError), (testing.raise_internal_error, InternalError)]
    for fn, kind in cases:
        with pytest.raises(kind, match="boom"):
            fn("boom")
    with pytest.raises(InternalError, match=r"f\.py:2:7: at"):
        testing.raise_internal_error_with_span("at", "f.py", 2, 7)
    with pytest.raises(IndexError, match="new text") as info:
        testing.rethrow_with_message("index", "old text", "new text")
    assert "old text" in str(info.value.__cause__)
    with pytest.raises(ValueError, match="unknown error kind"):
        testing.rethrow_with_message("nope", "a", "b")


def test_compile_profiler_records_each_compile(tmp_path) -> None:
    from upstream_programs import AddProg

    from pypto import ir
    from pypto.compile_profiling import CompileProfiler, get_active_profiler

    assert get_active_profiler() is None
    with CompileProfiler() as prof:
        assert get_active_profiler() is prof
        with prof.stage("mine"):
            pass
        ir.compile(AddProg, output_dir=tmp_path / "out", skip_ptoas=True, dump_passes=False)
    assert get_active_profiler() is None
    names = [s.name for s in prof.stages]
    assert names == ["mine", "compile AddProg"]
    compile_stage = prof.stages[1]
    assert [c.name for c in compile_stage.children][:1] == ["passes"]
    assert compile_stage.children[0].children, "one child per pass"
    assert prof.total_seconds() >= compile_stage.duration > 0
    assert (tmp_path / "out" / "report" / "pipeline_profile.json").is_file()  # an active profiler turns profiling on
    assert "compile AddProg" in prof.summary() and prof.to_dict()["stages"][1]["name"] == "compile AddProg"
    prof.write_report(str(tmp_path / "rep"))
    assert (tmp_path / "rep" / "pipeline_profile.txt").read_text() == prof.summary()
