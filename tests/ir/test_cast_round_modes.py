"""A cast's rounding mode: a name or upstream's int code; anything else is the user's error at the call."""

from __future__ import annotations

import pytest

import pypto.language as pl
from pypto.errors import UserError
from pypto.ir.ops.common import round_mode


@pytest.mark.parametrize(("mode", "name"), [("round", "round"), ("RINT", "rint"), (0, "none"), (3, "floor"),
                                            (6, "odd"), ("cast_rint", "cast_rint"), (None, "none")])
def test_known_modes(mode, name):
    assert round_mode(mode) == name


@pytest.mark.parametrize("mode", ["banker", 7, -1, True])
def test_unknown_modes_name_nothing(mode):
    assert round_mode(mode) is None


def test_an_unknown_mode_is_rejected_at_the_cast():
    src = """
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(a: pl.Tensor[[16, 16], pl.FP32]) -> pl.Tile[[16, 16], pl.FP16, pl.Mem.Vec]:
        t: pl.Tile[[16, 16], pl.FP32, pl.Mem.Vec] = pl.tile.load(a, [0, 0], [16, 16], [16, 16])
        h: pl.Tile[[16, 16], pl.FP16, pl.Mem.Vec] = pl.tile.cast(t, pl.FP16, mode="banker")
        return h
"""
    with pytest.raises(UserError, match="unknown rounding mode 'banker'") as exc:
        pl.parse(src, filename="cast.py")
    assert "cast.py:9" in str(exc.value)
