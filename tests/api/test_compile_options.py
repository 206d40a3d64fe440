"""``ir.compile`` resolves its options once, from its arguments and typed settings, into a frozen object."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

import pypto.language as pl
from pypto.driver import CompileOptions, CompileRequest, resolve_options
from pypto.ir.options import RuntimeKind, VerificationLevel
from pypto.toolchain.settings import override


@pl.program
class _Prog:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]
          ) -> pl.Tensor[[16, 16], pl.FP32]:
        t = pl.load(a, [0, 0], [16, 16])
        out = pl.store(t, [0, 0], out)
        return out


def test_settings_fill_what_the_arguments_leave_open(tmp_path: Path):
    with override(emit_pto_loc=False, verify_level="none", prog_build_dir=str(tmp_path),
                  file_prefix_map=f"{tmp_path}=/src") as settings:
        opts = resolve_options(_Prog, CompileRequest(), settings)
    assert opts.emit_source_loc is False
    assert opts.verification_level is VerificationLevel.NONE
    assert opts.output_dir.parent == tmp_path and not opts.explicit_output
    assert opts.file_prefix_map == ((str(tmp_path), "/src"),)
    assert opts.runtime is RuntimeKind.from_name(settings.runtime) and opts.toolchain == settings.toolchain


def test_arguments_beat_settings(tmp_path: Path):
    with override(emit_pto_loc=False) as settings:
        opts = resolve_options(_Prog, CompileRequest(output_dir=tmp_path, emit_source_loc=True,
                                                     verification_level=VerificationLevel.BASIC), settings)
    assert opts.emit_source_loc is True and opts.output_dir == tmp_path and opts.explicit_output


def test_options_are_frozen(tmp_path: Path):
    opts = resolve_options(_Prog, CompileRequest(output_dir=tmp_path))
    assert isinstance(opts, CompileOptions)
    with pytest.raises(dataclasses.FrozenInstanceError):
        opts.output_dir = tmp_path / "other"  # type: ignore[misc]


def test_the_request_mirrors_every_compile_keyword():
    import inspect

    from pypto.driver import compile as driver_compile

    keywords = set(inspect.signature(driver_compile).parameters) - {"program", "distributed_config"}
    assert keywords == {f.name for f in dataclasses.fields(CompileRequest)}


def test_compile_and_the_request_have_the_same_defaults():
    import inspect

    from pypto.driver import compile as driver_compile

    defaults = {n: p.default for n, p in inspect.signature(driver_compile).parameters.items()
                if n not in ("program", "distributed_config")}
    assert defaults == {f.name: f.default for f in dataclasses.fields(CompileRequest)}


def test_disabled_diagnostics_become_a_frozenset(tmp_path: Path):
    from pypto.ir.options import DiagnosticCheck
    from pypto.passes.context import DEFAULT_DISABLED

    given = [DiagnosticCheck.UnusedVariable]
    opts = resolve_options(_Prog, CompileRequest(output_dir=tmp_path, disabled_diagnostics=given))
    assert opts.disabled_diagnostics == frozenset(given) and isinstance(opts.disabled_diagnostics, frozenset)
    assert resolve_options(_Prog, CompileRequest(output_dir=tmp_path)).disabled_diagnostics == DEFAULT_DISABLED


def test_compile_with_settings_takes_platform_and_runtime_from_the_settings(tmp_path: Path, monkeypatch):
    import pypto.driver as driver

    seen: list[CompileOptions] = []
    monkeypatch.setattr(driver, "_compile", lambda program, opts: seen.append(opts))
    with override(platform="a5sim", runtime="host_build_graph", verify_level="roundtrip") as settings:
        driver.compile_with_settings(_Prog, settings, CompileRequest(output_dir=tmp_path))
        driver.compile_with_settings(_Prog, settings, CompileRequest(output_dir=tmp_path, platform="a2a3sim"))
    assert seen[0].platform == "a5sim" and seen[0].runtime is RuntimeKind.HOST_BUILD_GRAPH
    assert seen[0].verification_level is VerificationLevel.ROUNDTRIP
    assert seen[1].platform == "a2a3sim"


def test_lower_takes_pass_context_keywords():
    from pypto.driver import lower
    from pypto.ir.options import MemoryPlanner
    from pypto.passes.context import PassContext

    lowered = lower(_Prog, memory_planner=MemoryPlanner.PTOAS, verification_level=VerificationLevel.NONE)
    assert lowered.name == _Prog.name
    with PassContext(), pytest.raises(RuntimeError, match="lower\\(\\) was called with memory_planner"):
        lower(_Prog, memory_planner=MemoryPlanner.PTOAS)
    with pytest.raises(TypeError):
        lower(_Prog, **{"no_such_option": True})
