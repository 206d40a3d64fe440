"""A @pl.program whose function uses an upstream construct ptoas 0.1.1 cannot express still defines.

The function keeps a located ``system.unsupported`` statement; the module imports, the program's other
functions parse as usual, and compiling it (or running its passes) raises the construct's
UnsupportedFeatureError at the construct's location.
"""

from __future__ import annotations

import pytest

import pypto.language as pl
from pypto import ir
from pypto.errors import ParserTypeError, UnsupportedFeatureError
from pypto.passes import run_pipeline

SRC = """import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 32], pl.UINT32], o: pl.Out[pl.Tensor[[16, 32], pl.UINT32]]) -> pl.Tensor[[16, 32], pl.UINT32]:
        t: pl.Tile[[16, 32], pl.UINT32] = pl.tile.tri(1, 2, 3, 4, 5, 6, [16, 32])
        return pl.store(t, [0, 0], o)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 32], pl.UINT32], o: pl.Out[pl.Tensor[[16, 32], pl.UINT32]]) -> pl.Tensor[[16, 32], pl.UINT32]:
        o = self.k(x, o)
        return o
"""


def _check(err: UnsupportedFeatureError) -> None:
    assert err.message.startswith("pl.tile.tri is not supported by pypto with ptoas 0.1.1: ")
    assert "ttri" in err.message and err.hint == "build the mask on the host and load it"
    assert (err.span.line, err.span.col) == (7, 43)


def test_the_program_defines_and_compiling_it_raises_the_located_error(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    program = pl.parse(SRC)
    assert [f.name for f in program.functions] == ["k", "main"]
    with pytest.raises(UnsupportedFeatureError) as ei:
        ir.compile(program, platform="a2a3sim")
    _check(ei.value)
    assert not (tmp_path / "build_output").exists()  # refused before an output dir is claimed
    with pytest.raises(UnsupportedFeatureError) as ei:
        run_pipeline(program)
    _check(ei.value)


def test_the_marker_prints_and_reparses_to_the_same_refusal(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    text = ir.python_print(pl.parse(SRC))
    assert 'pl.system.unsupported(construct="pl.tile.tri"' in text
    again = pl.parse(text)
    assert ir.python_print(again) == text
    with pytest.raises(UnsupportedFeatureError, match="pl.tile.tri is not supported"):
        ir.compile(again, platform="a2a3sim")


def test_a_decorated_class_defines_too():
    @pl.program
    class Q:
        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[16, 32], pl.FP32]) -> pl.Tensor[[16, 32], pl.FP32]:
            pl.prefetch.wait(None, None)
            return x

    with pytest.raises(UnsupportedFeatureError, match=r"pl[.]prefetch[.]wait is not supported"):
        ir.compile(Q, platform="a2a3sim")


def test_the_torch_rendering_of_the_function_raises(torch):
    from pypto.debug import torch_codegen

    text = torch_codegen(pl.parse(SRC))
    assert "_unsupported(" in text and "pl.tile.tri is not supported" in text


def test_other_errors_and_standalone_functions_still_fail_at_definition():
    with pytest.raises(ParserTypeError):
        pl.parse(SRC.replace("pl.tile.tri(1, 2, 3, 4, 5, 6, [16, 32])", "pl.load(x, [0, 0])"))
    with pytest.raises(UnsupportedFeatureError, match="pl.tile.tri is not supported"):
        pl.parse(SRC.replace("@pl.program\nclass P:\n", "").replace("(self, ", "(")
                 .split("\n    @pl.function(type=pl.FunctionType.Orchestration)")[0].replace("\n    ", "\n"))
