"""Non-finite float constants through ptoas 0.1.1: it prints them as the undeclared names ``Inff`` / ``NaNf``;
pypto spells them as g++ builtins, so a kernel filling a tile with -inf or NaN builds and runs."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.backend.nonfinite import fix_cpp


def test_the_constants_become_builtins_and_keep_their_sign() -> None:
    cpp = 'float v5 = -Inff;\nhalf v6 = Inff;\nfloat v7 = NaNf;\nfloat v8 = +Inff;\n'
    assert fix_cpp(cpp) == ('float v5 = -__builtin_inff();\nhalf v6 = __builtin_inff();\n'
                            'float v7 = __builtin_nanf("");\nfloat v8 = +__builtin_inff();\n')


def test_names_that_merely_contain_them_are_left_alone() -> None:
    cpp = 'int Inffo = 1; int xNaNf = 2; a.Inff = 3; puts("Inff");\n'
    assert fix_cpp(cpp) == cpp


def _program(dtype: pl.DataType, fill: float):
    @pl.program
    class Fill:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, x: pl.Tensor[[16, 16], dtype], big: pl.Out[pl.Tensor[[16, 16], dtype]],
              filled: pl.Out[pl.Tensor[[16, 16], dtype]]) -> pl.Tensor[[16, 16], dtype]:
            t: pl.Tile[[16, 16], dtype] = pl.load(x, [0, 0], [16, 16])
            c: pl.Tile[[16, 16], dtype] = pl.tile.full([16, 16], dtype=dtype, value=fill)
            big = pl.store(pl.maximum(t, pl.tile.full([16, 16], dtype=dtype, value=-math.inf)), [0, 0], big)
            filled = pl.store(c, [0, 0], filled)
            return filled

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[16, 16], dtype], big: pl.Out[pl.Tensor[[16, 16], dtype]],
                 filled: pl.Out[pl.Tensor[[16, 16], dtype]]) -> pl.Tensor[[16, 16], dtype]:
            filled = self.k(x, big, filled)
            return filled
    return Fill


@pytest.mark.sim
@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
@pytest.mark.parametrize(("dtype", "np_dtype"), [(pl.FP32, np.float32), (pl.FP16, np.float16)])
@pytest.mark.parametrize("fill", [math.inf, math.nan])
def test_a_kernel_with_non_finite_fills_runs(tmp_path: Path, platform: str, dtype, np_dtype, fill: float) -> None:
    x = np.random.default_rng(0).standard_normal((16, 16)).astype(np_dtype)
    big, filled = np.zeros_like(x), np.zeros_like(x)
    ir.compile(_program(dtype, fill), output_dir=str(tmp_path), platform=platform)(x, big, filled)
    np.testing.assert_array_equal(big, x)  # max(x, -inf) == x
    np.testing.assert_array_equal(filled, np.full_like(x, fill))  # NaN compares equal to NaN here
