"""``tid = None`` in an orchestration: a task id that names no task, the seed of a chain of tasks.

``prev = None`` then ``with pl.at(..., deps=[prev]) as prev:`` in a loop threads each step's task id into
the next; the first step waits for nothing (``PTO2TaskId::invalid()``, which the runtime skips).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.errors import ParserTypeError

SRC = """import pypto.language as pl

@pl.program
class Chain:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, data: pl.Tensor[[64, 64], pl.FP32], out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]
             ) -> pl.Tensor[[64, 64], pl.FP32]:
        with pl.manual_scope():
            prev = None
            for step in pl.range(4):
                with pl.at(level=pl.Level.CORE_GROUP, deps=[prev]) as prev:
                    t = pl.load(data, [step * 16, 0], [16, 64])
                    out = pl.store(pl.add(t, 1.0), [step * 16, 0], out)
        return out
"""


def test_the_seed_is_a_task_id_constant_that_prints_and_parses_back() -> None:
    text = pl.parse(SRC).as_python()
    assert "prev: pl.Scalar[pl.TASK_ID] = pl.const(-1, pl.TASK_ID)" in text
    assert pl.parse(text).as_python() == text


@pytest.mark.sim
@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_a_chain_seeded_with_none_runs(platform: str, tmp_path: Path) -> None:
    compiled = ir.compile(pl.parse(SRC), output_dir=str(tmp_path), platform=platform)
    assert "PTO2TaskId::invalid()" in (Path(compiled.output_dir) / "orchestration" / "main.cpp").read_text()
    data = np.random.default_rng(41).standard_normal((64, 64)).astype(np.float32)
    out = np.zeros((64, 64), np.float32)
    compiled(data, out)
    np.testing.assert_allclose(out, data + 1, rtol=1e-6, atol=1e-6)


def test_none_in_a_kernel_is_a_located_error() -> None:
    src = """import pypto.language as pl

@pl.program
class K:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 64], pl.FP32], o: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        nothing = None
        return pl.store(pl.load(x, [0, 0], [16, 64]), [0, 0], o)
"""
    with pytest.raises(ParserTypeError) as ei:
        pl.parse(src)
    assert "'None' is not a value that can be used here" in ei.value.message
    assert ei.value.span.line == 7
