"""Throughput of the CPU simulator's tile ISA on the spec example kernels.

    python benchmarks/isa_bench.py [--repeat N]

Builds each kernel (ptoas 0.1.1 -> g++ -O2 against pypto/runtime/sim/include, cached under
~/.cache/pypto/isa_bench) and prints the median wall time per call and the element or flop rate.
Not a test: it only prints figures.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "sim_isa"))

from sim_isa_kit import SimKit  # noqa: E402

from pypto.toolchain.ptoas import default_cache_dir, find_ptoas  # noqa: E402


def cases(rng: np.random.Generator) -> list[tuple[str, str, tuple, float, str]]:
    """(label, pto module, args, work units per call, unit)."""
    f32 = lambda *s: rng.uniform(-1, 1, size=s).astype(np.float32)  # noqa: E731
    f16 = lambda *s: rng.uniform(-1, 1, size=s).astype(np.float16)  # noqa: E731
    return [
        (
            "add 128x128 f32",
            "add_128x128_f32",
            (f32(128, 128), f32(128, 128), f32(128, 128)),
            128 * 128,
            "elem",
        ),
        ("softmax 64x128 f32", "softmax_rows_64x128_f32", (f32(64, 128), f32(64, 128)), 64 * 128, "elem"),
        ("unary chain 32x32 f32", "unary_f32", (np.abs(f32(32, 32)) + 0.5, f32(32, 32)), 8 * 32 * 32, "elem"),
        (
            "matmul 64x64x64 f16",
            "matmul_f16_64x64",
            (f16(64, 64), f16(64, 64), f32(64, 64)),
            2 * 64**3,
            "flop",
        ),
        (
            "matmul split-K 64x256x64",
            "matmul_f16_splitk_loop",
            (f16(64, 256), f16(256, 64), f32(64, 64)),
            2 * 64 * 256 * 64,
            "flop",
        ),
    ]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=200)
    args = ap.parse_args()
    ptoas = find_ptoas()
    if ptoas is None:
        print("ptoas not found (pypto.toolchain.ptoas.find_ptoas() returned None)", file=sys.stderr)
        return 1
    cache = default_cache_dir() / "isa_bench"
    cache.mkdir(parents=True, exist_ok=True)
    kit = SimKit(cache, ptoas)
    for label, module, call_args, work, unit in cases(np.random.default_rng(0)):
        kernel = kit.pto_kernel(module)
        kernel(*call_args)
        times = []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            kernel(*call_args)
            times.append(time.perf_counter() - t0)
        med = statistics.median(times)
        print(f"{label:28s} {med * 1e6:9.1f} us/call  {work / med / 1e9:7.3f} G{unit}/s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
