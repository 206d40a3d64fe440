"""Compile-time figures for every tutorial kernel under examples/.

    python benchmarks/compile_bench.py [--repeat N] [--only SUBSTRING] [--no-ptoas]

Prints ``import pypto.language`` time (fresh interpreters), then per kernel the median ``ir.compile``
time with pass dumps and without (both stopping at ``.pto``), and the full compile with ptoas;
then the same two figures for the form the upstream side-by-side script times
(``ir.compile(add.lower(a, b, out))``: the hello world's jit kernel, lowered once, compiled again);
then the codegen / ptoas split per kernel (``benchmarks/codegen_bench.py``). Targets on this
machine: hello-world add with dumps <= 25 ms, import <= 0.3 s. It only prints figures.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))


def import_time() -> float:
    code = "import time; t=time.perf_counter(); import pypto.language; print(time.perf_counter()-t)"
    runs = [float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                 check=True).stdout) for _ in range(5)]
    return statistics.median(runs)


def example_kernels(only: str | None):
    """(label, specialized Program) for each entry kernel of each example (SHAPES convention)."""
    from pypto.errors import UserError
    from pypto.flows.loader import kernel_targets, load_module, sample_args
    from pypto.ir.function import Program

    for path in sorted((ROOT / "examples").glob("*/[0-9][0-9]_*.py")):
        module = load_module(path)
        for name, target in kernel_targets(module).items():
            label = f"{path.parent.name}/{path.stem}::{name}"
            if only and only not in label:
                continue
            if isinstance(target, Program):
                yield label, target
                continue
            try:
                args = sample_args(module, name, target)
            except UserError:  # a kernel without sample inputs is not benchmarked
                continue
            yield label, target.specialize(*target._classify(target._bind(args, {})))


def peer_form_program():
    """``add.lower(a, b, out)`` of the hello world (what the upstream comparison compiles), or None."""
    from pypto.flows.loader import kernel_targets, load_module, sample_args

    module = load_module(ROOT / "examples" / "beginner" / "01_hello_world.py")
    add = kernel_targets(module).get("add")
    return None if add is None else add.lower(*sample_args(module, "add", add))


def median_compile(program, repeat: int, **kw) -> float:
    import pypto

    times = []
    with tempfile.TemporaryDirectory() as td:
        for i in range(repeat):
            t0 = time.perf_counter()
            pypto.ir.compile(program, output_dir=Path(td) / str(i), platform="a2a3sim", **kw)
            times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=11)
    ap.add_argument("--only", help="only kernels whose label contains this text")
    ap.add_argument("--no-ptoas", action="store_true", help="skip the full compiles (ptoas)")
    a = ap.parse_args()
    from pypto.toolchain.logging import configure_logging

    configure_logging(level="warn")  # perf-hint summaries would drown the table
    imp = import_time()
    print(f"import pypto.language: {imp * 1e3:.1f} ms (median of 5 fresh interpreters; target <= 300 ms)")
    print(f"{'kernel':48} {'dumps':>9} {'no dumps':>9} {'+ptoas':>9}   (median ir.compile, ms)")
    for label, program in example_kernels(a.only):
        with_d = median_compile(program, a.repeat, dump_passes=True, skip_ptoas=True)
        no_d = median_compile(program, a.repeat, dump_passes=False, skip_ptoas=True)
        full = "-" if a.no_ptoas else f"{median_compile(program, 3, dump_passes=True) * 1e3:9.1f}"
        print(f"{label:48} {with_d * 1e3:9.1f} {no_d * 1e3:9.1f} {full:>9}")
    lowered = peer_form_program() if not a.only or a.only in "beginner/01_hello_world::add" else None
    if lowered is not None:
        with_d = median_compile(lowered, a.repeat, dump_passes=True, skip_ptoas=True)
        no_d = median_compile(lowered, a.repeat, dump_passes=False, skip_ptoas=True)
        print(f"{'hello world as add.lower(...) (peer form)':48} {with_d * 1e3:9.1f} {no_d * 1e3:9.1f} {'-':>9}")
    from codegen_bench import bench_codegen

    print()
    bench_codegen(run_ptoas=not a.no_ptoas)


if __name__ == "__main__":
    main()
