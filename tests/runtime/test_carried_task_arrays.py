"""A ``pl.Array`` of task ids carried by a loop: each phase waits on the array the previous phase filled.

The orchestration C++ copies the yielded array element by element into the carried one (a C array
cannot be assigned: g++ rejected ``tids = tids_next;``), and the chain of phases runs in order.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from rt_marks import needs_gxx

import pypto.language as pl
from pypto import ir

ROWS, COLS, STRIPE, BRANCHES, PHASES = 128, 16, 16, 4, 2


@pl.program
class PhasedStripes:
    @pl.function(type=pl.FunctionType.InCore)
    def bump(self, src: pl.Tensor[[ROWS, COLS], pl.FP32], row: pl.Scalar[pl.INDEX],
             dst: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]) -> pl.Tensor[[ROWS, COLS], pl.FP32]:
        t: pl.Tile[[STRIPE, COLS], pl.FP32] = pl.load(src, [row, 0], [STRIPE, COLS])
        ret: pl.Tensor[[ROWS, COLS], pl.FP32] = pl.store(pl.mul(t, 2.0), [row, 0], dst)
        return ret

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[ROWS, COLS], pl.FP32],
             y: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]) -> pl.Tensor[[ROWS, COLS], pl.FP32]:
        with pl.manual_scope():
            done = pl.array.create(BRANCHES, pl.TASK_ID)
            for phase, (prev,) in pl.range(PHASES, init_values=(done,)):
                now = pl.array.create(BRANCHES, pl.TASK_ID)
                for b in pl.range(BRANCHES):
                    row: pl.Scalar[pl.INDEX] = (phase * BRANCHES + b) * STRIPE
                    y, tid = pl.submit(self.bump, x, row, y, deps=[prev])
                    now[b] = tid
                done = pl.yield_(now)
        return y


def test_the_carried_array_is_copied_element_by_element(tmp_path: Path) -> None:
    c = ir.compile(PhasedStripes, output_dir=tmp_path / "o", skip_ptoas=True)
    cpp = (Path(c.output_dir) / "orchestration" / "main.cpp").read_text()
    assert not re.search(r"^\s*\w+ = now\w*;", cpp, re.M), cpp
    assert re.search(r"for \(int \w+ = 0; \w+ < 4; \+\+\w+\) (\w+)\[\w+\] = now\w*\[\w+\];", cpp), cpp


@needs_gxx
@pytest.mark.sim
def test_the_phases_run_and_write_every_stripe(tmp_path: Path) -> None:
    c = ir.compile(PhasedStripes, output_dir=tmp_path / "run")
    x = np.random.default_rng(5).random((ROWS, COLS), dtype=np.float32)
    y = np.zeros_like(x)
    c(x, y)
    np.testing.assert_allclose(y, x * 2.0, rtol=0, atol=0)
