"""The edit-run loop of a kernel author, side by side: cold first result, warm re-run, one-kernel edit.

    python benchmarks/edit_run.py [--repeat N] [--platform a2a3sim] [--only hello|model]

Two workloads, both importing torch as model code does: the hello world (``benchmarks/models/
hello_world.py``, one ``@pl.jit`` kernel) and a paged-attention decode (``benchmarks/models/
paged_attention.py``, four kernels, ``pypto.runtime.run(program, ...)``). Per repeat, a copy of the
script runs in a fresh interpreter three times against a fresh pypto cache dir:

- **cold**: nothing cached and no prebuilt runtime (the sim runtime library, ptoas' output, kernels: all
  built);
- **cold, prebuilt runtime**: the same with the install's prebuilt sim runtime (``python -m
  pypto.runtime.prebuild``, run once per benchmark into a temp dir, untimed, ``PYPTO_PREBUILT_DIR``);
- **warm**: the same script again, nothing changed;
- **edit**: one kernel's body edited (same result, different code), then run.

Each figure is the wall time of the whole process (interpreter start to exit), median over the
repeats (min-max beside it), with torch's own cost printed beside and subtracted in the last columns:
the import timed in a fresh interpreter, and the whole ``python -c "import torch"`` process less an
empty one (torch also spends about as long again tearing itself down at exit). One discarded run per workload first writes the bytecode caches
(the children run with bytecode writing on, as a default Python does). It only prints figures.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MODELS = ROOT / "benchmarks" / "models"


@dataclass(frozen=True)
class Workload:
    key: str
    label: str
    script: Path
    edit: tuple[str, str]  # text replaced in the script: one kernel's body, same result


WORKLOADS = (
    Workload("hello", "hello world (1 kernel, @pl.jit)", MODELS / "hello_world.py",
             ("out[:] = pl.add(a, b)", "out[:] = pl.mul(pl.add(a, b), 1.0)")),
    Workload("model", "paged attention (4 kernels, run(program))", MODELS / "paged_attention.py",
             ("pl.add(pl.mul(a, l), pl.mul(b, l_i))", "pl.add(pl.mul(b, l_i), pl.mul(a, l))")),
)
TARGETS = {"cold": 5.0, "warm": 1.0, "edit": 1.5}  # cold in total; warm and edit beyond torch's import


def child_env(cache: Path, build: Path, prebuilt: Path | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYPTO_") and k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])])
    env["PYPTO_CACHE_DIR"], env["PYPTO_PROG_BUILD_DIR"] = str(cache), str(build)
    env["PYPTO_PREBUILT_DIR"] = "none" if prebuilt is None else str(prebuilt)
    return env


def make_prebuilt(dest: Path, platform: str) -> Path:
    """The install's prebuilt sim runtime for ``platform``, built once (untimed) into ``dest``."""
    env = child_env(dest / "unused-cache", dest / "unused-build")
    subprocess.run([sys.executable, "-m", "pypto.runtime.prebuild", "--dir", str(dest), "--platform", platform,
                    "--runtime", "tensormap_and_ringbuffer", "--no-extras"], env=env, check=True,
                   capture_output=True, text=True)
    return dest


def _cpu() -> float:
    use = resource.getrusage(resource.RUSAGE_CHILDREN)  # every waited-for descendant: ptoas and g++ too
    return use.ru_utime + use.ru_stime


def timed_run(script: Path, env: dict[str, str], platform: str) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the process and everything it started)."""
    cpu, start = _cpu(), time.perf_counter()
    proc = subprocess.run([sys.executable, str(script), platform], capture_output=True, text=True, env=env,
                          cwd=script.parent, check=False)
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{script.name} failed:\n{proc.stderr[-3000:]}")
    return seconds, _cpu() - cpu


def one_round(w: Workload, platform: str, prebuilt: Path) -> dict[str, tuple[float, float]]:
    with tempfile.TemporaryDirectory(prefix="pypto-edit-run-") as td:
        work = Path(td)
        script = work / w.script.name
        shutil.copy(w.script, script)
        pre = timed_run(script, child_env(work / "cache-pre", work / "build-pre", prebuilt), platform)
        env = child_env(work / "cache", work / "build")
        out = {"cold": timed_run(script, env, platform), "pre": pre, "warm": timed_run(script, env, platform)}
        text = script.read_text()
        if w.edit[0] not in text:
            raise SystemExit(f"{w.script}: the edit's text {w.edit[0]!r} is gone; update benchmarks/edit_run.py")
        script.write_text(text.replace(w.edit[0], w.edit[1], 1))
        out["edit"] = timed_run(script, env, platform)
        return out


def torch_cost(repeat: int) -> dict[str, float]:
    """torch's own cost in a fresh interpreter, medians: ``import`` (timed around ``import torch``) and
    ``process`` (wall and CPU of ``python -c "import torch"`` minus ``python -c "pass"``: the import plus
    torch's teardown at exit, which every torch-using process pays)."""
    code = "import time; t=time.perf_counter(); import torch; print(time.perf_counter()-t)"
    imports, walls, cpus = [], [], []
    for _ in range(repeat):
        cpu, start = _cpu(), time.perf_counter()
        imports.append(float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                            check=True).stdout))
        wall, used = time.perf_counter() - start, _cpu() - cpu
        cpu, start = _cpu(), time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        walls.append(wall - (time.perf_counter() - start))
        cpus.append(used - (_cpu() - cpu))
    return {"import": statistics.median(imports), "wall": statistics.median(walls), "cpu": statistics.median(cpus)}


def spread(values: list[float]) -> str:
    return f"{statistics.median(values):.2f} ({min(values):.2f}-{max(values):.2f})"


def table(title: str, rows: list, which: int, torch_s: float, torch_label: str) -> None:
    print(f"\n{title}\n")
    print(f"| workload | cold first result | cold, prebuilt runtime | warm re-run | one-kernel edit | {torch_label} "
          "| warm - torch | edit - torch |")
    print("|---|---|---|---|---|---|---|---|")
    for w, r in rows:
        cold, pre, warm, edit = ([x[which] for x in r[k]] for k in ("cold", "pre", "warm", "edit"))
        print(f"| {w.label} | {spread(cold)} | {spread(pre)} | {spread(warm)} | {spread(edit)} | {torch_s:.2f} "
              f"| {statistics.median(warm) - torch_s:.2f} | {statistics.median(edit) - torch_s:.2f} |")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--platform", default="a2a3sim")
    ap.add_argument("--only", choices=[w.key for w in WORKLOADS])
    args = ap.parse_args(argv)
    chosen = [w for w in WORKLOADS if args.only in (None, w.key)]
    rows = []
    with tempfile.TemporaryDirectory(prefix="pypto-prebuilt-") as pre:
        prebuilt = make_prebuilt(Path(pre), args.platform)
        for w in chosen:
            one_round(w, args.platform, prebuilt)  # discarded: bytecode caches and the page cache
            rounds = [one_round(w, args.platform, prebuilt) for _ in range(args.repeat)]
            rows.append((w, {k: [r[k] for r in rounds] for k in ("cold", "pre", "warm", "edit")}))
    torch = torch_cost(max(3, args.repeat))
    print(f"platform {args.platform}, {args.repeat} repeats, load average {os.getloadavg()[0]:.1f}; "
          f"seconds, median (min-max)")
    print(f"torch: import {torch['import']:.2f} s; in a process (import + teardown at exit) {torch['wall']:.2f} s "
          f"wall, {torch['cpu']:.2f} s CPU (subtracted in the last two columns)")
    table("Wall time (interpreter start to exit):", rows, 0, torch["wall"], "torch in a process")
    table("CPU time (user + system, with every process started; less sensitive to a busy machine):",
          rows, 1, torch["cpu"], "torch in a process")
    print(f"\ntargets: cold <= {TARGETS['cold']} s; warm <= {TARGETS['warm']} s + torch import; "
          f"one-kernel edit <= {TARGETS['edit']} s + torch import")


if __name__ == "__main__":
    main()
