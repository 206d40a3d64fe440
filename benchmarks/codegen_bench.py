"""Codegen and assembler timings: PTO/C++ generation per kernel and ptoas time per unit (each unit run alone;
ir.compile runs all units of a program in one ptoas process, see benchmarks/perf_ratios.py).

``bench_codegen()`` prints one line per kernel; ``benchmarks/compile_bench.py`` calls it. It uses
the hand-built post-pipeline IR of the reference kernels from ``tests/codegen/irbuild.py``.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

_TESTS = Path(__file__).resolve().parents[1] / "tests" / "codegen"


def _programs() -> dict:
    sys.path.insert(0, str(_TESTS))
    import irbuild as b

    return {"add": b.add_program, "chunked_add": b.chunked_add_program, "softmax": b.softmax_program,
            "matmul": b.matmul_program, "matmul_acc": lambda: b.matmul_program(2),
            "ffn_swiglu": b.ffn_swiglu_program}


def bench_codegen(repeat: int = 20, run_ptoas: bool = True) -> dict[str, dict[str, float]]:
    """Print and return ``{kernel: {"codegen_ms": .., "ptoas_ms[<unit>]": ..}}``."""
    from pypto.backend.ptoas_batch import run_units
    from pypto.codegen import generate

    exe = None
    if run_ptoas:
        from pypto.toolchain.ptoas import find_ptoas

        exe = find_ptoas()
    results: dict[str, dict[str, float]] = {}
    print(f"{'kernel':<14} {'codegen ms':>10}  ptoas ms per unit")
    for name, build in _programs().items():
        program = build()
        t0 = time.perf_counter()
        for _ in range(repeat):
            art = generate(program, backend_type="Ascend910B", platform="a2a3sim",
                           runtime="tensormap_and_ringbuffer")
        row = {"codegen_ms": (time.perf_counter() - t0) * 1e3 / repeat}
        if exe is not None:
            with tempfile.TemporaryDirectory() as d:
                (Path(d) / "ptoas").mkdir()
                for u in art.units:
                    (Path(d) / "ptoas" / f"{u.name}.pto").write_text(u.pto)
                for r in run_units(exe, Path(d), art.units, max_workers=1, timeout=60, batch=False):
                    row[f"ptoas_ms[{r.unit}]"] = r.seconds * 1e3
        results[name] = row
        units = "  ".join(f"{k[9:-1]}={v:.0f}" for k, v in row.items() if k.startswith("ptoas"))
        print(f"{name:<14} {row['codegen_ms']:>10.2f}  {units or '(ptoas not found)'}")
    return results


if __name__ == "__main__":
    bench_codegen()
