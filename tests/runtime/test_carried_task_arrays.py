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


@pl.program
class GuardedStripes:
    """The task id array and the output are rebound inside an ``if`` of a parallel loop (no else)."""

    @pl.function(type=pl.FunctionType.InCore)
    def bump(self, src: pl.Tensor[[ROWS, COLS], pl.FP32], row: pl.Scalar[pl.INDEX],
             dst: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]) -> pl.Tensor[[ROWS, COLS], pl.FP32]:
        t: pl.Tile[[STRIPE, COLS], pl.FP32] = pl.load(src, [row, 0], [STRIPE, COLS])
        ret: pl.Tensor[[ROWS, COLS], pl.FP32] = pl.store(pl.add(t, 3.0), [row, 0], dst)
        return ret

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[ROWS, COLS], pl.FP32],
             y: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]) -> pl.Tensor[[ROWS, COLS], pl.FP32]:
        with pl.manual_scope():
            tids = pl.array.create(BRANCHES, pl.TASK_ID)
            for phase, (prev,) in pl.range(PHASES, init_values=(tids,)):
                now = pl.array.create(BRANCHES, pl.TASK_ID)
                for b in pl.parallel(BRANCHES):
                    if b % 2 == phase % 2:  # half the stripes each phase
                        row: pl.Scalar[pl.INDEX] = (phase * BRANCHES + b) * STRIPE
                        y, tid = pl.submit(self.bump, x, row, y, deps=[prev])
                        now[b] = tid
                tids = pl.yield_(now)
        return y


def test_an_array_rebound_in_an_if_is_copied_into_the_if_result(tmp_path: Path) -> None:
    c = ir.compile(GuardedStripes, output_dir=tmp_path / "o", skip_ptoas=True)
    cpp = (Path(c.output_dir) / "orchestration" / "main.cpp").read_text()
    arr = re.search(r"PTO2TaskId (now\w*)\[4\];\n\s*if \(", cpp)
    assert arr, cpp  # the if's array result, declared before the if
    assert len(re.findall(rf"\b{arr.group(1)}\[\w+\] = now\w*\[\w+\];", cpp)) == 2, cpp  # both branches


@needs_gxx
@pytest.mark.sim
def test_the_guarded_stripes_run(tmp_path: Path) -> None:
    c = ir.compile(GuardedStripes, output_dir=tmp_path / "run")
    x = np.random.default_rng(6).random((ROWS, COLS), dtype=np.float32)
    y = np.full_like(x, -1.0)
    c(x, y)
    want = np.full_like(x, -1.0)
    for phase in range(PHASES):
        for b in range(BRANCHES):
            if b % 2 == phase % 2:
                r = (phase * BRANCHES + b) * STRIPE
                want[r:r + STRIPE] = x[r:r + STRIPE] + 3.0
    np.testing.assert_allclose(y, want, rtol=0, atol=0)
