"""``@pl.function(external_source=...)``: a signature-only kernel whose body is a hand-written C++ file.

Parsing resolves the path (a ``str`` or a ``pathlib.Path``; relative to the defining file) and keeps it in
the function's attrs; misuse is a located error at the ``def``. Running one is tests/runtime/test_external_kernel_run.py.
"""

from __future__ import annotations

import pathlib

import pytest

import pypto.language as pl
from pypto.errors import ParserSyntaxError, ParserTypeError, UserError

HERE = pathlib.Path(__file__).name


def test_a_path_or_a_str_is_kept_absolute_and_the_body_is_empty(tmp_path) -> None:
    src = tmp_path / "k.cpp"
    src.write_text("// kernel\n")
    for given in (src, str(src)):
        @pl.program
        class Ext:
            @pl.function(type=pl.FunctionType.AIV, external_source=given)
            def ext(self, out: pl.InOut[pl.Tensor[[16], pl.FP32]], n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[16], pl.FP32]:
                """Writes out."""
                ...

        f = Ext.functions[0]
        assert f.attrs["external_source"] == str(src.resolve())
        assert f.body.stmts == ()


def test_a_relative_path_is_relative_to_the_defining_file() -> None:
    with pytest.raises(UserError, match=r"external kernel 'ext': source file not found: .*/language/kernels/nope\.cpp"):
        @pl.program
        class _Ext:
            @pl.function(type=pl.FunctionType.AIV, external_source="kernels/nope.cpp")
            def ext(self, out: pl.InOut[pl.Tensor[[16], pl.FP32]]) -> pl.Tensor[[16], pl.FP32]: ...


def test_a_missing_file_is_a_located_error(tmp_path) -> None:
    missing = tmp_path / "missing.cpp"
    with pytest.raises(UserError, match="source file not found") as e:
        @pl.program
        class _Ext:
            @pl.function(type=pl.FunctionType.AIV, external_source=missing)
            def ext(self, out: pl.InOut[pl.Tensor[[16], pl.FP32]]) -> pl.Tensor[[16], pl.FP32]: ...

    assert pathlib.Path(e.value.span.file).name == HERE
    assert "relative to the file that defines the program" in str(e.value)


def test_a_body_is_refused(tmp_path) -> None:
    src = tmp_path / "k.cpp"
    src.write_text("\n")
    with pytest.raises(ParserSyntaxError, match=r"external kernel 'ext' must have a '\.\.\.' body") as e:
        @pl.program
        class _Ext:
            @pl.function(type=pl.FunctionType.AIV, external_source=src)
            def ext(self, out: pl.InOut[pl.Tensor[[16], pl.FP32]]) -> pl.Tensor[[16], pl.FP32]:
                return out

    assert pathlib.Path(e.value.span.file).name == HERE and "bare '...'" in str(e.value)


def test_only_aiv_and_aic_functions_take_a_source(tmp_path) -> None:
    src = tmp_path / "k.cpp"
    src.write_text("\n")
    with pytest.raises(ParserTypeError, match=r"only valid on FunctionType.AIV or FunctionType.AIC, got "
                                              r"FunctionType.InCore for 'ext'"):
        @pl.program
        class _Ext:
            @pl.function(type=pl.FunctionType.InCore, external_source=src)
            def ext(self, out: pl.InOut[pl.Tensor[[16], pl.FP32]]) -> pl.Tensor[[16], pl.FP32]: ...


def test_a_tile_parameter_is_refused(tmp_path) -> None:
    src = tmp_path / "k.cpp"
    src.write_text("\n")
    with pytest.raises(ParserTypeError, match=r"parameter 't' is a TileType; an external kernel takes tensors and "
                                              r"scalars only"):
        @pl.program
        class _Ext:
            @pl.function(type=pl.FunctionType.AIV, external_source=src)
            def ext(self, t: pl.Tile[[16, 16], pl.FP32]) -> pl.Tile[[16, 16], pl.FP32]: ...



def test_printed_as_a_signature_with_a_bare_ellipsis_and_reparsed(tmp_path) -> None:
    from pypto import ir

    src = tmp_path / "k.cpp"
    src.write_text("\n")

    @pl.program
    class Ext:
        @pl.function(type=pl.FunctionType.AIV, external_source=src)
        def ext(self, out: pl.InOut[pl.Tensor[[16], pl.FP32]]) -> pl.Tensor[[16], pl.FP32]: ...

    text = ir.python_print(Ext)
    assert f'external_source="{src.resolve()}")' in text and text.rstrip().endswith("...")
    again = pl.parse(text, filename="ext.py")
    assert ir.python_print(again) == text and again.functions[0].attrs == Ext.functions[0].attrs


@pytest.mark.torch
def test_the_torch_rendering_raises_when_the_external_kernel_is_called(tmp_path, torch) -> None:
    from pypto.debug import torch_codegen

    src = tmp_path / "k.cpp"
    src.write_text("\n")

    @pl.program
    class Ext:
        @pl.function(type=pl.FunctionType.AIV, external_source=src)
        def ext(self, out: pl.InOut[pl.Tensor[[16], pl.FP32]]) -> pl.Tensor[[16], pl.FP32]: ...

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, out: pl.Out[pl.Tensor[[16], pl.FP32]]) -> pl.Tensor[[16], pl.FP32]:
            out = self.ext(out)
            return out

    env: dict = {}
    exec(compile(torch_codegen(Ext), "ext_torch.py", "exec"), env)
    with pytest.raises(NotImplementedError, match=r"external kernel 'ext' is the C\+\+ file .*k\.cpp: the PyTorch "
                                                  r"rendering has no body"):
        env["main"](torch.zeros(16))
