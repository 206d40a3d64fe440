"""``pl.expand_clone(x, y)`` in a kernel: ``x`` broadcast along its one size-1 axis into ``y``.

Lowered to loads, ``tile.row_expand`` / ``tile.col_expand`` and stores (pypto.passes._expand_clone);
checked against numpy's broadcast on both simulators, and its errors are located.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.debug.torch_codegen import torch_codegen
from pypto.errors import UnsupportedFeatureError, UserError
from tests.codegen.ptocheck import checker, verify

SRC = """import pypto.language as pl

@pl.program
class E:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[XS, pl.FP32], y: pl.Out[pl.Tensor[YS, pl.FP32]]) -> pl.Tensor[YS, pl.FP32]:
        out: pl.Tensor[YS, pl.FP32] = pl.expand_clone(x, y)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[XS, pl.FP32], y: pl.Out[pl.Tensor[YS, pl.FP32]]) -> pl.Tensor[YS, pl.FP32]:
        y = self.k(x, y)
        return y
"""

CASES = [([4, 8, 16], [4, 8, 16]), ([1, 8, 16], [4, 8, 16]), ([4, 1, 16], [4, 8, 16]), ([4, 8, 1], [4, 8, 16]),
         ([1, 32], [16, 32]), ([16, 1], [16, 32])]


def _program(xs: list[int], ys: list[int]):
    return pl.parse(SRC.replace("XS", str(xs)).replace("YS", str(ys)))


@pytest.mark.sim
@pytest.mark.parametrize(("xs", "ys"), CASES)
@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_expand_clone_matches_numpy_broadcast(xs: list[int], ys: list[int], platform: str, tmp_path: Path) -> None:
    compiled = ir.compile(_program(xs, ys), output_dir=str(tmp_path), platform=platform)
    if checker()[0] is not None and platform == "a2a3sim":
        verify(*Path(compiled.output_dir).rglob("*.pto"))
    x = np.random.default_rng(len(xs) + xs[0]).standard_normal(xs).astype(np.float32)
    y = np.zeros(ys, np.float32)
    compiled(x, y)
    np.testing.assert_array_equal(y, np.broadcast_to(x, ys))


def test_torch_rule_broadcasts_into_the_target(torch) -> None:
    ns: dict = {}
    exec(torch_codegen(_program([4, 1, 16], [4, 8, 16]), check_shapes=True), ns)  # noqa: S102
    x, y = torch.randn(4, 1, 16), torch.zeros(4, 8, 16)
    ns["main"](x, y)
    torch.testing.assert_close(y, x.expand(4, 8, 16), rtol=0, atol=0)


def test_two_broadcast_axes_are_a_located_error() -> None:
    with pytest.raises(UserError) as ei:
        _program([1, 1, 16], [4, 8, 16])
    assert "along at most one axis" in ei.value.message
    assert ei.value.span.line == 7


def test_a_rank_4_expand_clone_is_a_located_error(tmp_path: Path) -> None:
    with pytest.raises(UnsupportedFeatureError) as ei:
        ir.compile(_program([1, 2, 8, 16], [2, 2, 8, 16]), output_dir=str(tmp_path), skip_ptoas=True)
    assert "tensor.expand_clone of a rank-4 tensor" in ei.value.message
    assert ei.value.span.line == 7
