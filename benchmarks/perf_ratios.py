"""The issue-18 performance ratios, measured side by side in one run (noisy shared machines: ratios count).

    python benchmarks/perf_ratios.py [--repeat N] [--skip compile,sim,first-run]

1. compile: wall of ``ir.compile`` of a 4-kernel program (the flash-attention example, dumps off,
   1 worker) over one bare ptoas start-up (``ptoas --version``), interleaved, medians; also the same
   compile with one ptoas process per kernel unit (the fallback path) for comparison. Target <= 2.0.
2. sim: a registered handle's call vs numpy, per op: 64x128 @ 128x64 f16 -> f32 matmul vs numpy's f32
   matmul (target <= 5), exp over 512x64 f32 in eight 64-row chunks vs ``np.exp`` (target <= 3).
3. first run: the hello world in a fresh interpreter on a fresh cache (``PYPTO_CACHE_DIR`` = a new
   temporary dir): process wall and when each compiler ran. Target <= 4 s.
It only prints figures and verdicts.
"""

from __future__ import annotations

import argparse
import importlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import pypto.language as pl

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))


@pl.jit
def matmul_64x128x64(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        a_l1 = pl.tile.load(a, [0, 0], [64, 128], [64, 128], target_memory=pl.Mem.Mat)
        b_l1 = pl.tile.load(b, [0, 0], [128, 64], [128, 64], target_memory=pl.Mem.Mat)
        a_l0a = pl.tile.move(a_l1, target_memory=pl.Mem.Left)
        b_l0b = pl.tile.move(b_l1, target_memory=pl.Mem.Right)
        pl.tile.store(pl.tile.matmul(a_l0a, b_l0b), [0, 0], c)
    return c


@pl.jit
def chunked_exp(a: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for r in pl.range(0, 512, 64):
            pl.store(pl.exp(pl.load(a, [r, 0], [64, 64])), [r, 0], out)
    return out


def _verdict(ratio: float, target: float) -> str:
    return f"(target <= {target:g}: {'MET' if ratio <= target else 'MISSED'})"


def compile_ratio(repeat: int) -> None:
    from compile_bench import example_kernels

    from pypto import ir
    from pypto.toolchain.logging import configure_logging
    from pypto.toolchain.ptoas import require_ptoas

    configure_logging(level="warn")
    stage = importlib.import_module("pypto.backend.assemble")
    real = stage.run_units
    batch = {"on": True}

    def one_worker(*a, **k):
        return real(*a, **{**k, "max_workers": 1, "batch": batch["on"]})

    stage.run_units = one_worker
    exe = require_ptoas()
    [(label, program)] = list(example_kernels("models/03_flash_attention"))
    start, batched, per_unit = [], [], []
    with tempfile.TemporaryDirectory() as td:
        for i in range(repeat):
            t0 = time.perf_counter()
            subprocess.run([str(exe), "--version"], capture_output=True, check=True)
            start.append(time.perf_counter() - t0)
            for on, sink in ((True, batched), (False, per_unit)):
                batch["on"] = on
                t0 = time.perf_counter()
                ir.compile(program, output_dir=Path(td) / f"{i}{on}", platform="a2a3sim", dump_passes=False)
                sink.append(time.perf_counter() - t0)
        units = len(list((Path(td) / "0True" / "ptoas").glob("*.pto")))
    stage.run_units = real
    s, b, u = (statistics.median(x) for x in (start, batched, per_unit))
    print(f"compile: {label} ({units} kernel units), dumps off, 1 worker, median of {repeat}")
    print(f"  bare ptoas start-up (ptoas --version)          {s * 1e3:8.0f} ms")
    print(f"  ir.compile, one ptoas process for the program  {b * 1e3:8.0f} ms  = {b / s:.2f} x start-up "
          f"{_verdict(b / s, 2.0)}")
    print(f"  ir.compile, one ptoas process per unit         {u * 1e3:8.0f} ms  = {u / s:.2f} x start-up")


def _per_call_us(fn, calls: int) -> float:
    for _ in range(max(5, calls // 20)):
        fn()
    batches = []
    for _ in range(10):
        t0 = time.perf_counter()
        for _ in range(max(1, calls // 10)):
            fn()
        batches.append((time.perf_counter() - t0) / max(1, calls // 10))
    return statistics.median(batches) * 1e6


def sim_ratios(calls: int) -> None:
    from pypto.runtime import ChipWorker, RunConfig

    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((64, 128)).astype(np.float16), rng.standard_normal((128, 64)).astype(np.float16)
    a32, b32, c = a.astype(np.float32), b.astype(np.float32), np.zeros((64, 64), np.float32)
    x = rng.standard_normal((512, 64)).astype(np.float32)
    y = np.zeros_like(x)
    cfg = RunConfig(platform="a2a3sim")
    print(f"sim: registered handle per call vs numpy ({calls} calls, median of 10 batches)")
    with ChipWorker(cfg) as worker:
        cases = [("matmul 64x128 @ 128x64 f16 -> f32", matmul_64x128x64, (a, b, c),
                  lambda: np.matmul(a32, b32, out=c), lambda: np.testing.assert_allclose(c, a32 @ b32, 1e-4, 1e-4),
                  5.0),
                 ("exp 512x64 f32 in 8 chunks", chunked_exp, (x, y), lambda: np.exp(x, out=y),
                  lambda: np.testing.assert_allclose(y, np.exp(x), 1e-6), 3.0)]
        for name, kernel, args, ref, check, target in cases:
            handle = worker.register(kernel.compile(*args, config=cfg))
            handle(*args)
            check()
            sim = _per_call_us(lambda h=handle, a=args: h(*a), calls)
            device = worker.last_run.device_s * 1e6
            ref_us = _per_call_us(ref, calls)
            print(f"  {name:36} sim {sim:8.1f} us (device {device:6.1f})  numpy {ref_us:6.1f} us  "
                  f"= {sim / ref_us:5.1f} x {_verdict(sim / ref_us, target)}")


TRACE = """
import runpy, subprocess, sys, time
t0 = time.perf_counter()
real = subprocess.run
def run(argv, *a, **k):
    t = time.perf_counter()
    try:
        return real(argv, *a, **k)
    finally:
        what = [x for x in argv if str(x).endswith((".cpp", ".pto", ".o"))][:1]
        print(f"TRACE {t - t0:.2f} {time.perf_counter() - t0:.2f} {str(argv[0]).rsplit('/', 1)[-1]} "
              f"{str(what[0]).rsplit('/', 1)[-1] if what else ' '.join(map(str, argv[1:2]))}", file=sys.stderr)
subprocess.run = run
sys.argv = [sys.argv[1]]
runpy.run_path(sys.argv[0], run_name="__main__")
print(f"TRACE-END {time.perf_counter() - t0:.2f}", file=sys.stderr)
"""


def first_run() -> None:
    with tempfile.TemporaryDirectory(prefix="pypto-first-run-") as td:
        env = dict(os.environ, PYPTO_CACHE_DIR=str(Path(td) / "cache"))
        script = Path(td) / "trace.py"
        script.write_text(TRACE)
        t0 = time.perf_counter()
        proc = subprocess.run([sys.executable, str(script), str(ROOT / "examples/beginner/01_hello_world.py")],
                              capture_output=True, text=True, cwd=td, env=env, check=False)
        wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"hello world failed on a fresh cache:\n{proc.stderr[-2000:]}")
    print(f"first run: hello world, fresh interpreter + fresh cache: {wall:.2f} s process wall "
          f"{_verdict(wall, 4.0)}")
    for line in proc.stderr.splitlines():
        if line.startswith("TRACE "):
            _, start, end, tool, what = line.split(" ", 4)
            print(f"  {float(start):5.2f} -> {float(end):5.2f} s  {tool:6} {what}")
        elif line.startswith("TRACE-END"):
            print(f"  script done at {float(line.split()[1]):.2f} s (the rest: interpreter start and exit)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=7, help="compiles per figure")
    ap.add_argument("--calls", type=int, default=500, help="sim calls per figure")
    ap.add_argument("--skip", default="", help="comma-separated: compile, sim, first-run")
    opts = ap.parse_args()
    skip = set(filter(None, opts.skip.split(",")))
    with open("/proc/loadavg") if Path("/proc/loadavg").is_file() else open(os.devnull) as f:
        print(f"load average at start: {f.read().split(' ')[0] or 'n/a'} ({os.cpu_count()} CPUs)")
    with tempfile.TemporaryDirectory(prefix="pypto-perf-") as td:
        old = Path.cwd()
        os.chdir(td)  # build_output/ of the jit compiles goes here
        try:
            if "compile" not in skip:
                compile_ratio(opts.repeat)
            if "sim" not in skip:
                sim_ratios(opts.calls)
        finally:
            os.chdir(old)
    if "first-run" not in skip:
        first_run()


if __name__ == "__main__":
    main()
