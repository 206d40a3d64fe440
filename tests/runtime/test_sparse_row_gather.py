"""Rows picked by an index table, a run-time count of them per batch row, summed by a tile-carrying loop
of a ``pl.at`` region inside a parallel head loop: the rows are gathered through GM once per batch row
(in front of the head loop) and the sums match torch on a2a3sim."""

from __future__ import annotations

from pathlib import Path

import pytest
from rt_marks import needs_gxx

import pypto.language as pl
from pypto import ir

SRC = '''
import pypto.language as pl

@pl.program
class PickedRows:
    @pl.function(type=pl.FunctionType.Opaque)
    def main(self, q: pl.Tensor[[4, 64], pl.FP32], lens: pl.Tensor[[3], pl.INT32], picks: pl.Tensor[[3, 32], pl.INT32],
             rows: pl.Tensor[[192, 64], pl.BF16], tails: pl.Tensor[[192, 16], pl.BF16],
             out: pl.InOut[pl.Tensor[[12, 64], pl.FP32]]) -> pl.Tensor[[12, 64], pl.FP32]:
        flat = pl.reshape(picks, [96])
        for b in pl.parallel(3):
            n = pl.min(32, pl.read(lens, [b]))
            base = b * 32
            for h in pl.parallel(4):
                with pl.at(level=pl.Level.CORE_GROUP, name_hint="pick"):
                    first = b * 64 + pl.read(flat, [base])
                    acc = pl.cast(rows[first:first + 1, 0:64], target_type=pl.FP32)
                    top = pl.row_sum(pl.cast(tails[first:first + 1, 0:16], target_type=pl.FP32))
                    qh = q[h:h + 1, 0:64]
                    for k in pl.range(1, n):
                        r = b * 64 + pl.read(flat, [base + k])
                        row = pl.cast(rows[r:r + 1, 0:64], target_type=pl.FP32)
                        weight = pl.row_sum(pl.cast(tails[r:r + 1, 0:16], target_type=pl.FP32))
                        acc = pl.add(acc, pl.row_expand_mul(pl.mul(row, qh), weight))
                        top = pl.maximum(top, weight)
                    out = pl.assemble(out, pl.row_expand_div(acc, top), [b * 4 + h, 0])
        return out
'''


def _want(torch, q, lens, picks, rows, tails):
    out = torch.zeros(12, 64)
    for b in range(3):
        n = min(32, int(lens[b]))
        for h in range(4):
            first = b * 64 + int(picks[b, 0])
            acc, top = rows[first].float().clone(), tails[first].float().sum()
            for k in range(1, n):
                r = b * 64 + int(picks[b, k])
                w = tails[r].float().sum()
                acc, top = acc + rows[r].float() * q[h] * w, torch.maximum(top, w)
            out[b * 4 + h] = acc / top
    return out


@needs_gxx
@pytest.mark.sim
def test_picked_rows_with_a_run_time_count_match_torch(torch, tmp_path: Path) -> None:
    compiled = ir.compile(pl.parse(SRC, filename="picked_rows.py"), platform="a2a3sim", output_dir=tmp_path / "p",
                          dump_passes=False)
    g = torch.Generator().manual_seed(29)
    q = torch.randn(4, 64, generator=g)
    # 5 rows, the first row only, all 32 (bounded by pl.min): a gather task copies 12 rows, the last ones clamped
    lens = torch.tensor([5, 1, 40], dtype=torch.int32)
    picks = torch.stack([torch.randperm(64, generator=g)[:32] for _ in range(3)]).to(torch.int32)
    rows = torch.randn(192, 64, generator=g).to(torch.bfloat16)
    tails = (torch.rand(192, 16, generator=g) + 0.5).to(torch.bfloat16)  # positive sums: a safe divisor
    out = torch.zeros(12, 64)
    compiled(q, lens, picks, rows, tails, out)
    torch.testing.assert_close(out, _want(torch, q, lens, picks, rows, tails), rtol=1e-4, atol=1e-4)
