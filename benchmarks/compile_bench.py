"""Compile-time figures: ``import pypto.language`` time and median ``ir.compile`` per example kernel.

    python benchmarks/compile_bench.py [--repeat N]

Prints one line per kernel: median compile time with pass dumps, without dumps, and the codegen /
ptoas split when available. Not a test: it only prints figures.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples"))


def import_time() -> float:
    code = "import time; t=time.perf_counter(); import pypto.language; print(time.perf_counter()-t)"
    runs = [float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                 check=True).stdout) for _ in range(5)]
    return statistics.median(runs)


def _kernels():
    import pypto.language as pl

    @pl.jit
    def add(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]):
        with pl.at(level=pl.Level.CORE_GROUP):
            out[:] = pl.add(a, b)
        return out

    a = np.zeros((128, 128), np.float32)
    yield "hello_world_add", add, (a, a, a)


def median_compile(jit_fn, args, dump: bool, skip_ptoas: bool, repeat: int) -> float:
    import pypto

    program = jit_fn.specialize(*jit_fn._classify(jit_fn._bind(args, {})))
    times = []
    with tempfile.TemporaryDirectory() as td:
        for i in range(repeat):
            t0 = time.perf_counter()
            pypto.ir.compile(program, output_dir=Path(td) / str(i), dump_passes=dump, skip_ptoas=skip_ptoas,
                             platform="a2a3sim")
            times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeat", type=int, default=15)
    a = ap.parse_args()
    print(f"import pypto.language: {import_time() * 1e3:.1f} ms (median of 5 fresh interpreters)")
    print(f"{'kernel':24} {'dumps, .pto only':>18} {'no dumps, .pto':>16} {'full (ptoas)':>14}")
    for name, fn, args in _kernels():
        with_d = median_compile(fn, args, True, True, a.repeat)
        no_d = median_compile(fn, args, False, True, a.repeat)
        full = median_compile(fn, args, True, False, max(3, a.repeat // 5))
        print(f"{name:24} {with_d * 1e3:15.1f} ms {no_d * 1e3:13.1f} ms {full * 1e3:11.1f} ms")


if __name__ == "__main__":
    main()
