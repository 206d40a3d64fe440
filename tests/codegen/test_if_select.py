"""An integer ``if`` result chosen between values defined before the ``if`` is index arithmetic.

ptoas 0.1.1 types a constant as ``int32_t`` in its emitc stage and rejects yielding it into an
``scf.if`` result (``'emitc.assign' op requires value's type ... to match``), and ``arith.select`` is
illegal there; the codegen computes ``else + (then - else) * cond`` instead.
"""

from __future__ import annotations

import re

import pypto.language as pl
from pypto import ir
from pypto.runtime import run


@pl.program
class _LastBlockMasked:
    """Copies 16-row blocks; the last one only up to ``last`` columns (the rest padded with zeros)."""

    @pl.function(type=pl.FunctionType.InCore)
    def copy(self, x: pl.Tensor[[64, 64], pl.FP32], out: pl.Out[pl.Tensor[[64, 64], pl.FP32]],
             n: pl.Scalar[pl.INDEX], last: pl.Scalar[pl.INDEX]) -> pl.Tensor[[64, 64], pl.FP32]:
        for i, (o,) in pl.range(n, init_values=(out,)):
            if i == n - 1:
                cols: pl.Scalar[pl.INDEX] = pl.yield_(last)
            else:
                cols: pl.Scalar[pl.INDEX] = pl.yield_(64)
            t = pl.load(x, [i * 16, 0], [16, 64], valid_shape=[16, cols], target_memory=pl.MemorySpace.Vec)
            (o_next,) = pl.yield_(pl.store(pl.tile.fillpad(t, pad_value=pl.PadValue.zero), [i * 16, 0], o))
        return o_next

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[64, 64], pl.FP32], out: pl.Out[pl.Tensor[[64, 64], pl.FP32]],
             ) -> pl.Tensor[[64, 64], pl.FP32]:
        out = self.copy(x, out, 4, 20)
        return out


def test_the_choice_is_arithmetic_not_an_scf_if(tmp_path) -> None:
    ir.compile(_LastBlockMasked, output_dir=tmp_path, platform="a2a3sim", dump_passes=False)
    text = (tmp_path / "ptoas" / "copy.pto").read_text()
    assert "scf.if" not in text  # the if had nothing but the yields: no scf.if is left
    assert re.search(r"arith\.index_cast %\w+ : i1 to index", text)
    assert re.search(r"%cols\w* = arith\.addi %c64, %\w+ : index", text)


def test_masked_copy_matches_torch(torch) -> None:
    x, out = torch.randn(64, 64, generator=torch.Generator().manual_seed(2)), torch.full((64, 64), 7.0)
    run(_LastBlockMasked, x, out)
    want = x.clone()
    want[48:, 20:] = 0
    torch.testing.assert_close(out, want, rtol=0, atol=0)
