"""Write-after-write through the whole flow: two tasks store the same rows of ``out``.

The first writer is slow (a long loop), the second fast. Both pass ``out`` as an output; the second
must pass it as inout so the runtime's TensorMap orders it after the first (an output_existing
argument registers the task as writer but takes no edge on an earlier writer). Without the edge the
fast task finishes first and the slow one overwrites its rows, so every repetition below fails.
Covered: two ``pl.at`` regions in sequence, and one region in a sequential loop (iteration 0 slow),
on both sim platforms and both runtimes.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from rt_marks import needs_gxx

import pypto.language as pl
from pypto import ir
from pypto.runtime import ChipWorker, RunConfig
from pypto.toolchain.ptoas import find_ptoas

pytestmark = [needs_gxx, pytest.mark.sim, pytest.mark.ptoas,
              pytest.mark.skipif(find_ptoas() is None, reason="needs the pinned ptoas")]

T = "pl.Tensor[[32, 64], pl.FP32]"
SRC = f'''
import pypto.language as pl

@pl.program
class Waw:
    @pl.function(type=pl.FunctionType.Orchestration)
    def waw(self, a: {T}, b: {T}, out: pl.Out[{T}]) -> {T}:
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="slow_first"):
            ta: pl.Tile[[32, 64], pl.FP32] = pl.load(a, [0, 0], [32, 64])
            half: pl.Tile[[32, 64], pl.FP32] = pl.mul(ta, 0.5)
            for i, (acc,) in pl.range(20000, init_values=(ta,)):
                nxt: pl.Tile[[32, 64], pl.FP32] = pl.add(pl.mul(acc, 0.5), half)
                r = pl.yield_(nxt)
            pl.store(r, [0, 0], out)
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="fast_second"):
            tb: pl.Tile[[16, 64], pl.FP32] = pl.load(b, [0, 0], [16, 64])
            pl.store(pl.add(tb, 1.0), [16, 0], out)
        return out
'''
RUNS = 3


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], object]:
    program = pl.parse(SRC, filename="waw.py")
    base = tmp_path_factory.mktemp("waw")
    return {(platform, runtime): ir.compile(program, output_dir=base / f"{platform}-{runtime}", platform=platform,
                                            runtime=runtime, dump_passes=False)
            for platform in ("a2a3sim", "a5sim") for runtime in ("tensormap_and_ringbuffer", "host_build_graph")}


def _submits(orchestration: str) -> list[list[str]]:
    """The add_* calls of each task, in submission order."""
    tasks = re.split(r"// Task \d+: ", orchestration)[1:]
    return [re.findall(r"params_t\d+\.(add_\w+)\(", t) for t in tasks]


@pytest.mark.parametrize("runtime", ["tensormap_and_ringbuffer", "host_build_graph"])
@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_second_writer_runs_after_the_first(compiled, platform: str, runtime: str) -> None:
    program = compiled[(platform, runtime)]
    orchestration = (program.output_dir / "orchestration" / "waw.cpp").read_text()
    assert _submits(orchestration) == [["add_input", "add_output"], ["add_input", "add_inout"]]
    rng = np.random.default_rng(5)
    a = rng.standard_normal((32, 64), np.float32)
    b = rng.standard_normal((32, 64), np.float32)
    want = a.copy()
    want[16:] = b[:16] + 1.0
    with ChipWorker(RunConfig(platform=platform), runtime=runtime) as worker:
        for _ in range(RUNS):
            out = np.zeros((32, 64), np.float32)
            worker.run(program, a, b, out)
            np.testing.assert_allclose(out, want, rtol=1e-6, atol=1e-6)


LOOP_SRC = '''
import pypto.language as pl

@pl.program
class WawLoop:
    @pl.function(type=pl.FunctionType.Orchestration)
    def waw_loop(self, src: pl.Tensor[[64, 64], pl.FP32], out: pl.Out[pl.Tensor[[32, 64], pl.FP32]]) -> pl.Tensor[[32, 64], pl.FP32]:
        for i in pl.range(2):
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="step"):
                ts: pl.Tile[[32, 64], pl.FP32] = pl.load(src, [i * 32, 0], [32, 64])
                half: pl.Tile[[32, 64], pl.FP32] = pl.mul(ts, 0.5)
                for j, (acc,) in pl.range((1 - i) * 20000, init_values=(ts,)):
                    nxt: pl.Tile[[32, 64], pl.FP32] = pl.add(pl.mul(acc, 0.5), half)
                    r = pl.yield_(nxt)
                pl.store(r, [0, 0], out)
        return out
'''


@pytest.mark.parametrize("runtime", ["tensormap_and_ringbuffer", "host_build_graph"])
@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_loop_iterations_writing_one_buffer_run_in_order(tmp_path, platform: str, runtime: str) -> None:
    """Iteration 0 is slow, iteration 1 fast; the last iteration's rows must win."""
    program = ir.compile(pl.parse(LOOP_SRC, filename="waw_loop.py"), output_dir=tmp_path, platform=platform,
                         runtime=runtime, dump_passes=False)
    orchestration = (program.output_dir / "orchestration" / "waw_loop.cpp").read_text()
    assert _submits(orchestration) == [["add_input", "add_inout", "add_scalar"]]
    src = np.random.default_rng(6).standard_normal((64, 64), np.float32)
    with ChipWorker(RunConfig(platform=platform), runtime=runtime) as worker:
        for _ in range(RUNS):
            out = np.zeros((32, 64), np.float32)
            worker.run(program, src, out)
            np.testing.assert_allclose(out, src[32:], rtol=1e-6, atol=1e-6)
