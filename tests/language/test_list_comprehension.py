"""``[f(i) for i in range(N)]`` in a DSL body is unrolled at parse time; pl.split(slot_num=) is accepted."""

from __future__ import annotations

import warnings

import pytest

import pypto.language as pl
from pypto import ir
from pypto.errors import ParserTypeError, UnsupportedFeatureError

SRC = """import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[64, 64], pl.FP32], out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP{opt}):
            t = pl.load(a, {offsets}, {shape})
            out = pl.store(t, [0, 0], out)
        return out
"""


def _src(offsets: str = "[0, 0]", shape: str = "[64, 64]", opt: str = "") -> str:
    return SRC.format(offsets=offsets, shape=shape, opt=opt)


@pytest.mark.parametrize(("offsets", "shape"), [
    ("[0 * i for i in range(2)]", "[64 for _ in range(2)]"),
    ("[i - i for i in range(4) if i < 2]", "[n for n in [64, 64]]"),
    ("[i * 0 for i in range(0, 4, 2)]", "[64 for t in range(-1, 1)]"),
])
def test_comprehension_is_the_list_it_unrolls_to(offsets: str, shape: str) -> None:
    assert ir.structural_equal(pl.parse(_src(offsets, shape)), pl.parse(_src()))


def test_the_loop_name_shadows_a_variable_only_inside_the_comprehension() -> None:
    src = _src(offsets="[i * 0 for i in range(2)]").replace("            t = pl.load",
                                                            "            i = 5\n            t = pl.load")
    src = src.replace("pl.store(t, [0, 0]", "pl.store(t, [i - 5, 0]")
    want = src.replace("[i * 0 for i in range(2)]", "[0, 0]")
    assert ir.structural_equal(pl.parse(src), pl.parse(want))


@pytest.mark.parametrize(("comp", "cls", "message", "col"), [
    ("[0 for i in range(a)]", ParserTypeError, "iterates over 'range(a)', which is not known at compile time", 40),
    ("[0 for i in range(2) for j in range(1)]", UnsupportedFeatureError, "more than one 'for'", 28),
    ("[0 for i, j in [(0, 0), (1, 1)]]", UnsupportedFeatureError, "binds one plain name", 35),
    ("[0 for i in range(2) if a]", ParserTypeError, "condition 'a' is not known at compile time", 52),
])
def test_a_comprehension_not_known_at_compile_time_is_a_located_error(comp, cls, message, col) -> None:
    with pytest.raises(cls) as ei:
        pl.parse(_src(offsets=comp))
    assert message in ei.value.message
    assert (ei.value.span.line, ei.value.span.col) == (8, col)


def test_split_slot_num_is_recorded_with_a_deprecation_warning() -> None:
    src = _src(opt=", optimizations=[pl.split(pl.SplitMode.NONE, slot_num=2)]")
    with pytest.warns(DeprecationWarning, match="pl.cross_core_slot"):
        prog = pl.parse(src)
    text = ir.python_print(prog)
    assert "pl.split(pl.SplitMode.NONE, slot_num=2)" in text
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        assert ir.structural_equal(pl.parse(text), prog)
    with pytest.raises(ParserTypeError, match=r"pl.split\(slot_num=...\) takes a positive integer, got 0"):
        pl.parse(src.replace("slot_num=2", "slot_num=0"))
