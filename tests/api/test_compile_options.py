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
