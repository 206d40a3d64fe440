"""``pl.Tensor[shape, dtype]`` with the shape held in a Python variable of the enclosing scope."""

from __future__ import annotations

import pytest

import pypto.language as pl
from pypto.errors import ParserTypeError
from pypto.ir.types import TensorType


def _program(shape):
    @pl.program
    class Shaped:
        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[shape, pl.FP32]) -> pl.Tensor[shape, pl.FP32]:
            return x
    return Shaped


def test_a_list_variable_is_a_shape() -> None:
    (f,) = _program([2, 8, 16]).functions
    t = f.params[0].type
    assert isinstance(t, TensorType) and tuple(t.shape) == (2, 8, 16)


@pytest.mark.parametrize("shape", [3, [2, "8"], (2, True)])
def test_a_variable_that_is_not_a_list_of_ints_is_a_located_error(shape) -> None:
    with pytest.raises(ParserTypeError) as ei:
        _program(shape)
    assert "a shape must be a list such as [64, 64]" in ei.value.message
    assert ei.value.span.line == 16
