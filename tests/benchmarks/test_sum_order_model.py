"""benchmarks/sum_order_model.py: its two summation models are the orders they claim, and a run reports both."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]


def _model():
    spec = importlib.util.spec_from_file_location("sum_order_model", ROOT / "benchmarks" / "sum_order_model.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_row_sums_left_to_right_and_rounded_once():
    m = _model()
    x = np.full((1, 1024), 2.0**-25, np.float32)
    x[0, 0] = 1.0  # each 2**-25 is half an ulp of 1.0: left to right they vanish one at a time
    assert m._row_sum(x, "old")[0] == np.float32(1.0)
    assert m._row_sum(x, "now")[0] == np.float32(1.0 + 1023 * 2.0**-25)


def test_matmul_models_differ_only_in_where_a_step_rounds():
    m = _model()
    a = np.ones((1, 1024), np.float32)
    b = np.full((1024, 1), 2.0**-25, np.float32)
    a[0, 0], b[0, 0] = 1.0, 1.0  # the first product is 1.0, the rest are half an ulp of it
    assert m._matmul(a, b, "old")[0, 0] == np.float32(1.0)  # continued one k at a time: every half ulp vanishes
    # each 512-deep step summed from zero first: the second step's 512 halves survive as 2**-16
    assert m._matmul(a, b, "now")[0, 0] == np.float32(1.0) + np.float32(512 * 2.0**-25)


def test_one_run_reports_both_models(torch):
    got = _model().one_run(0, rows=2, hidden=1024, width=96, normed_cols=64, torch=torch)
    assert set(got) == {"old", "now"}
    assert all(bad >= 0 and flips >= 0 for bad, flips in got.values())
