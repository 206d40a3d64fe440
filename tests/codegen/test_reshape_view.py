"""``tile.reshape`` is ``pto.treshape``, which points its destination handle at the source's bytes.

The handle keeps that address, so a handle that is a treshape destination must not also receive a
load or a computation: on the next iteration of a loop the load would land in the reshaped source's
bytes. (Upstream's SPMD paged attention at batch > core_num computed wrong numbers this way: its
online-softmax update reshapes [16, 1] <-> [1, 16] in a loop, and MemoryReuse gave a reshape result
the buffer of a tile loaded earlier in the body.)
"""

from __future__ import annotations

import re

import numpy as np

import pypto.language as pl
from pypto import ir
from pypto.runtime import run


@pl.program
class _ColumnStep:
    """Per 16-row block: mo = max(m, c) and lo = m + c, computed on [1, 16] rows of [16, 1] columns."""

    @pl.function(type=pl.FunctionType.InCore)
    def step(self, m: pl.Tensor[[64, 1], pl.FP32], c: pl.Tensor[[64, 1], pl.FP32],
             mo: pl.Out[pl.Tensor[[64, 1], pl.FP32]], lo: pl.Out[pl.Tensor[[64, 1], pl.FP32]],
             ) -> tuple[pl.Tensor[[64, 1], pl.FP32], pl.Tensor[[64, 1], pl.FP32]]:
        for b in pl.range(4):
            mt = pl.load(m, [b * 16, 0], [16, 1])
            lt = pl.load(c, [b * 16, 0], [16, 1])
            mn = pl.reshape(mt, [1, 16])
            ln = pl.reshape(lt, [1, 16])
            mx = pl.maximum(mn, ln)
            s = pl.add(mn, ln)
            mx_col = pl.reshape(mx, [16, 1])
            s_col = pl.reshape(s, [16, 1])
            mo = pl.store(mx_col, [b * 16, 0], mo)
            lo = pl.store(s_col, [b * 16, 0], lo)
        return mo, lo

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, m: pl.Tensor[[64, 1], pl.FP32], c: pl.Tensor[[64, 1], pl.FP32],
             mo: pl.Out[pl.Tensor[[64, 1], pl.FP32]], lo: pl.Out[pl.Tensor[[64, 1], pl.FP32]],
             ) -> tuple[pl.Tensor[[64, 1], pl.FP32], pl.Tensor[[64, 1], pl.FP32]]:
        mo, lo = self.step(m, c, mo, lo)
        return mo, lo


def _destinations(text: str) -> dict[str, set[str]]:
    """handle -> the pto ops that write it (``outs(%h ...)``)."""
    out: dict[str, set[str]] = {}
    for op, handle in re.findall(r"pto\.(\w+) ins\(.*?\) outs\(%(\w+)", text):
        out.setdefault(handle, set()).add(op)
    return out


def test_a_treshape_destination_is_written_by_nothing_else(tmp_path) -> None:
    ir.compile(_ColumnStep, output_dir=tmp_path, platform="a2a3sim", dump_passes=False, skip_ptoas=True)
    text = next((tmp_path / "kernels").rglob("step.pto")).read_text()
    writers = _destinations(text)
    views = {h for h, ops in writers.items() if "treshape" in ops}
    assert len(views) == 4
    assert all(writers[h] == {"treshape"} for h in views), {h: writers[h] for h in views}


def test_reshapes_in_a_loop_compute_every_iteration() -> None:
    rng = np.random.default_rng(3)
    m, c = (rng.standard_normal((64, 1)).astype(np.float32) for _ in range(2))
    mo, lo = np.zeros_like(m), np.zeros_like(c)
    run(_ColumnStep, m, c, mo, lo)
    np.testing.assert_allclose(mo, np.maximum(m, c), rtol=0, atol=0)
    np.testing.assert_allclose(lo, m + c, rtol=1e-6, atol=1e-6)
