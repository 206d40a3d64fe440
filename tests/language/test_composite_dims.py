"""Composite dynamic dims: ``pl.Tensor[[M * 2, N], ...]`` in a signature.

Python evaluates the annotation when the ``def`` runs, so ``pl.dynamic`` names take ``+ - * // %``
with ints and with each other (a stand-in the parser never uses: it reads the annotation's source).
A kernel binds ``M`` from the tensor's extent, ``(extent - b) / a`` for ``a * M + b``; the printer
declares every name a composite dim uses.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.ir.dtypes import DataType
from pypto.ir.expr import BinaryExpr, BinOp, ConstInt, Var
from pypto.ir.fold import affine
from pypto.ir.types import ScalarType

M = pl.dynamic("M")
N = pl.dynamic("N")


@pl.program
class DoubleRows:
    @pl.function(type=pl.FunctionType.InCore)
    def twice(self, a: pl.Tensor[[M * 2 + 16, N], pl.FP32],
              c: pl.Out[pl.Tensor[[M * 2 + 16, N], pl.FP32]]) -> pl.Tensor[[M * 2 + 16, N], pl.FP32]:
        for i in pl.range(0, M * 2 + 16, 16):
            t = pl.load(a, [i, 0], [16, 32])
            c = pl.store(pl.add(t, t), [i, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[M * 2 + 16, N], pl.FP32],
             c: pl.Out[pl.Tensor[[M * 2 + 16, N], pl.FP32]]) -> pl.Tensor[[M * 2 + 16, N], pl.FP32]:
        c = self.twice(a, c)
        return c


def test_def_time_arithmetic_of_dynamic_names() -> None:
    assert repr(M * 2 + 16) == "(M * 2) + 16"
    assert repr(3 * (M - N)) == "3 * (M - N)"
    assert repr(N // 4) == "N // 4"
    with pytest.raises(TypeError):
        M * 2.5  # noqa: B018 - only ints and dynamic names


def test_affine_forms() -> None:
    v = Var("M", ScalarType(DataType.INDEX))

    def c(n: int) -> ConstInt:
        return ConstInt(n, DataType.INDEX)

    def b(op: BinOp, x, y) -> BinaryExpr:
        return BinaryExpr(op, x, y, DataType.INDEX)

    assert affine(v) == (v, 1, 0)
    assert affine(b(BinOp.Add, b(BinOp.Mul, v, c(2)), c(16))) == (v, 2, 16)
    assert affine(b(BinOp.Sub, c(10), b(BinOp.Mul, c(3), v))) == (v, -3, 10)
    assert affine(b(BinOp.Mul, v, v)) is None
    assert affine(b(BinOp.FloorDiv, v, c(2))) is None
    assert affine(c(4)) is None


def test_the_printer_declares_names_inside_composite_dims() -> None:
    text = DoubleRows.as_python()
    assert 'M = pl.dynamic("M")' in text and 'N = pl.dynamic("N")' in text
    assert "pl.Tensor[[M * 2 + 16, N], pl.FP32]" in text
    ir.assert_structural_equal(pl.parse(text), DoubleRows)


@pytest.mark.sim
@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
@pytest.mark.parametrize("m", [8, 24])
def test_the_kernel_binds_m_from_the_extent(tmp_path: Path, platform: str, m: int) -> None:
    c = ir.compile(DoubleRows, output_dir=str(tmp_path / platform), platform=platform)
    a = np.random.default_rng(m).random((2 * m + 16, 32), dtype=np.float32)
    out = np.zeros_like(a)
    c(a, out)
    np.testing.assert_allclose(out, a * 2, rtol=1e-6, atol=0)
