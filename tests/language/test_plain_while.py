"""A plain ``while cond:`` (no ``pl.while_``): names the body rebinds are carried, as in a ``for``.

ptoas 0.1.1 has no ``scf.while``, so a kernel's counting loop (``i = a; while i < b: ...; i = i + c``)
becomes ``for i in pl.range(a, b, c)``; any other kernel while loop is a located error saying how to
write it. An orchestration keeps its while loop.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.errors import UnsupportedFeatureError, UserError
from pypto.ir.stmt import ForStmt, WhileStmt, flatten


@pl.program
class CountingKernel:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[128, 32], pl.FP32], c: pl.Out[pl.Tensor[[128, 32], pl.FP32]],
          ) -> pl.Tensor[[128, 32], pl.FP32]:
        i: pl.Scalar[pl.INDEX] = 1
        while i <= 7:
            t = pl.load(a, [i * 16, 0], [16, 32])
            c = pl.store(pl.add(t, t), [i * 16, 0], c)
            i = i + 2
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[128, 32], pl.FP32], c: pl.Out[pl.Tensor[[128, 32], pl.FP32]],
             ) -> pl.Tensor[[128, 32], pl.FP32]:
        c = self.k(a, c)
        return c


@pl.program
class WhileInOrchestration:
    @pl.function(type=pl.FunctionType.InCore)
    def bump(self, x: pl.Tensor[[16, 16], pl.FP32], y: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
             ) -> pl.Tensor[[16, 16], pl.FP32]:
        y = pl.store(pl.add(pl.load(x, [0, 0], [16, 16]), 1.0), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 16], pl.FP32], n: pl.Scalar[pl.INDEX],
             y: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        y = self.bump(x, y)
        i: pl.Scalar[pl.INDEX] = 1
        while i < n:
            y = self.bump(y, y)
            i = i + 1
        return y


def test_a_kernel_counting_while_is_a_range_loop() -> None:
    k = CountingKernel.get_function("k")
    (loop,) = [s for s in flatten(k.body) if isinstance(s, ForStmt)]
    assert (loop.loop_var.name, loop.start.name, loop.stop.value, loop.step.value) == ("i", "i", 8, 2)  # type: ignore[attr-defined]


@pytest.mark.sim
@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_the_counting_kernel_writes_the_odd_blocks(tmp_path: Path, platform: str) -> None:
    c = ir.compile(CountingKernel, output_dir=str(tmp_path), platform=platform)
    a = np.random.default_rng(1).random((128, 32), dtype=np.float32)
    out = np.zeros_like(a)
    c(a, out)
    want = np.zeros_like(a)
    for blk in (1, 3, 5, 7):
        want[blk * 16:(blk + 1) * 16] = 2 * a[blk * 16:(blk + 1) * 16]
    np.testing.assert_array_equal(out, want)


def test_an_orchestration_keeps_its_while_loop() -> None:
    main = WhileInOrchestration.get_function("main")
    assert any(isinstance(s, WhileStmt) for s in flatten(main.body))


@pytest.mark.sim
def test_the_orchestration_while_runs_n_times(tmp_path: Path) -> None:
    c = ir.compile(WhileInOrchestration, output_dir=str(tmp_path))
    x = np.zeros((16, 16), np.float32)
    y = np.zeros_like(x)
    c(x, 4, y)
    np.testing.assert_array_equal(y, np.full_like(x, 4.0))


@pytest.mark.parametrize(("body", "why"), [
    ("i = i * 2", "not a counting loop"),
    ("i = i + 1\n            if i > 2:\n                break", "not a counting loop"),
])
def test_other_kernel_while_loops_are_located_errors(body: str, why: str) -> None:
    src = f'''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[16, 16], pl.FP32]) -> pl.Tensor[[16, 16], pl.FP32]:
        i: pl.Scalar[pl.INDEX] = 1
        while i < 8:
            {body}
        return a
'''
    with pytest.raises(UnsupportedFeatureError, match=why) as e:
        pl.parse(src)
    assert e.value.span.line == 9 and "pl.range" in str(e.value)


def test_reading_the_counter_after_a_kernel_while_is_an_error() -> None:
    src = '''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[16, 16], pl.FP32], n: pl.Out[pl.Tensor[[1, 1], pl.FP32]]) -> pl.Tensor[[1, 1], pl.FP32]:
        i: pl.Scalar[pl.INDEX] = 0
        while i < 4:
            i = i + 1
        t = pl.load(a, [i, 0], [1, 1])
        n = pl.store(t, [0, 0], n)
        return n
'''
    with pytest.raises(UserError, match=r"name 'i' is not defined here: it counts the while loop at 9:9") as e:
        pl.parse(src)
    assert e.value.span.line == 11
