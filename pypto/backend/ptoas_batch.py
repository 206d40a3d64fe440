"""One ptoas process for a whole program: merge the kernel units' modules, split the C++ per unit.

ptoas 0.1.1 spends ~0.2-0.5 s starting up (loading its MLIR libraries) and a few milliseconds per
kernel, so assembling every unit of a program in one run costs about one start-up whatever the
kernel count. Its lowering is per function (sync insertion, memory planning, EmitC), so a merged
module yields, per function, the same C++ as a unit's own run: the shared preamble
(``#include``/``using``) followed by one ``__global__`` function per ``func.func``.

:func:`run_batch` returns ``None`` whenever the batch cannot stand in for the per-unit runs
(different module headers, ptoas failing, a function missing from the output); the caller then runs
ptoas per unit, which gives every failing unit its own exact error text, log and repro command.
"""

from __future__ import annotations

import re
import shlex
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

from pypto.artifact.model import KernelUnit
from pypto.backend import bf16_standin, ptoas_stage
from pypto.backend.ptoas_stage import PtoasResult
from pypto.toolchain.procs import run_tool

if TYPE_CHECKING:
    from pypto.backend.ptoas_cache import PtoasCache

_FUNC = re.compile(r"^  func\.func (?:(?:public|private|nested) )?@([A-Za-z_$.][\w$.\-]*)\(", re.M)
_CPP_FUNC = re.compile(r"^(?:__global__ AICORE )?[A-Za-z_][\w:<>, *&]* \**([A-Za-z_]\w*)\(")


def unit_functions(pto: str) -> list[str]:
    """Names of the top-level ``func.func`` of a unit's module, in order."""
    return _FUNC.findall(pto)


def merge_modules(ptos: list[str]) -> str | None:
    """One module holding every unit's functions; None unless all share the same ``module`` line."""
    header: str | None = None
    bodies = []
    for pto in ptos:
        lines = pto.rstrip("\n").split("\n")
        if len(lines) < 2 or not lines[0].startswith("module") or lines[-1] != "}":
            return None
        if header is not None and lines[0] != header:
            return None
        header = lines[0]
        bodies.append("\n".join(lines[1:-1]))
    return f"{header}\n" + "\n".join(bodies) + "\n}\n" if header is not None else None


def split_cpp(cpp: str, groups: list[list[str]]) -> list[str] | None:
    """Per group of function names, the preamble plus those functions, laid out like a single-unit run.

    A unit's own run ends its file with ``}`` and two empty lines; functions within a file are
    separated by one empty line. None if a function is missing or the output has an unexpected shape.
    """
    lines = cpp.split("\n")
    starts: dict[str, int] = {}
    for i, line in enumerate(lines):
        m = _CPP_FUNC.match(line) if line and not line[0].isspace() and line.endswith("{") else None
        if m and m.group(1) not in starts:
            starts[m.group(1)] = i
    if any(name not in starts for g in groups for name in g):
        return None
    order = sorted(starts.values())
    if sum(len(g) for g in groups) != len(order):
        return None  # a function the units did not declare (a helper): keep the per-unit runs
    preamble = "\n".join(lines[: order[0]]) + "\n"
    ends = dict(zip(order, [*order[1:], len(lines)], strict=True))
    out = []
    for g in groups:
        chunks = ["\n".join(lines[starts[n]:ends[starts[n]]]).rstrip("\n") for n in g]
        out.append(preamble + "\n\n".join(chunks) + "\n\n\n")
    return out


def _unit_log(stderr: str, names: set[str]) -> str:
    """The module dumps of a batch's stderr restricted to ``names``; the interleaved trace is dropped."""
    out: list[str] = []
    block: list[str] | None = None
    keep = True
    for line in stderr.splitlines():
        if block is None:
            if line.startswith("module"):
                block, keep = [line], True
            continue
        if line == "}":
            out += [*block, line]
            block = None
            continue
        m = _FUNC.match(line)
        if m:
            keep = m.group(1) in names
        if keep:
            block.append(line)
        if line == "  }":
            keep = True
    return "\n".join(out) + ("\n" if out else "")


def run_batch(ptoas: Path, out_dir: Path, units: list[KernelUnit], *, timeout: float,
              insert_sync: bool = True) -> list[ptoas_stage.PtoasResult] | None:
    """Assemble every unit in one ptoas run; writes ``ptoas/<unit>.cpp``; None = run them per unit."""
    groups = [unit_functions(u.pto) for u in units]
    inputs = [ptoas_stage.ptoas_input(out_dir, u.name) for u in units]
    merged = merge_modules([(out_dir / src).read_text() for src, _ in inputs])
    flat = [n for g in groups for n in g]
    if merged is None or not all(groups) or len(set(flat)) != len(flat):
        return None
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix=".ptoas-batch-", dir=out_dir) as td:
        rel = Path(td).relative_to(out_dir)
        (Path(td) / "batch.pto").write_text(merged)
        argv = ptoas_stage.ptoas_argv(ptoas, rel / "batch.pto", rel / "batch.cpp", insert_sync=insert_sync)
        first = ptoas_stage.ptoas_argv(ptoas, inputs[0][0], Path("ptoas") / f"{units[0].name}.cpp",
                                       insert_sync=insert_sync)
        try:  # past the deadline: ToolTimeoutError, not a retry per unit (a hung ptoas hangs each one)
            proc = run_tool(argv, tool="ptoas", timeout=timeout, setting="ptoas_timeout_s",
                            repro=f"cd <artifact dir> && {shlex.join(first)}", cwd=out_dir)
        except OSError:
            return None
        cpp_path = Path(td) / "batch.cpp"
        if proc.returncode != 0 or not cpp_path.is_file():
            return None
        parts = split_cpp(cpp_path.read_text(), groups)
    if parts is None:
        return None
    seconds = (time.perf_counter() - start) / len(units)
    names = ", ".join(u.name for u in units)
    results = []
    for u, g, cpp, (src, standin) in zip(units, groups, parts, inputs, strict=True):
        (out_dir / "ptoas" / f"{u.name}.cpp").write_text(ptoas_stage.finish_cpp(cpp, standin, (out_dir / src).read_text()))
        own = ptoas_stage.ptoas_argv(ptoas, src, Path("ptoas") / f"{u.name}.cpp", insert_sync=insert_sync)
        log = (f"$ {shlex.join(['ptoas', *own[1:]])}\n{bf16_standin.NOTE if standin else ''}"
               f"# assembled in one ptoas run with {len(units)} unit(s) ({names}): their modules merged, "
               f"the C++ split per function; the command above reproduces this unit alone "
               f"(with ptoas' full debug trace, omitted here)\n"
               f"# exit status {proc.returncode}\n# --- stdout ---\n{proc.stdout}"
               f"# --- stderr (this unit's functions) ---\n{_unit_log(proc.stderr, set(g))}")
        repro = f"cd <artifact dir> && {shlex.join(own)}"
        results.append(ptoas_stage.PtoasResult(u.name, True, log, "", repro, seconds, cpp))
    return results


def run_units(ptoas: Path, out_dir: Path, units: list[KernelUnit], *, max_workers: int | None,
              timeout: float, insert_sync: bool = True, batch: bool = True,
              cache: PtoasCache | None = None) -> list[PtoasResult]:
    """Run ptoas on every unit; results in unit order.

    With a ``cache`` (:mod:`pypto.backend.ptoas_cache`), a unit whose input, ptoas and flags were
    assembled before takes its C++ from there, and only the others run ptoas (their output is stored).
    With ``batch`` (and two or more units to run) they go through one ptoas process
    (:func:`run_batch`); if that cannot stand in for the per-unit runs (or fails), or without
    ``batch``, each unit gets its own run in a thread pool (``max_workers=1`` = sequential).
    """
    if cache is None:
        return _run(ptoas, out_dir, units, max_workers=max_workers, timeout=timeout, insert_sync=insert_sync,
                    batch=batch)
    from pypto.backend import ptoas_cache

    keys: dict[str, str] = {}
    done: dict[str, PtoasResult] = {}
    for u in units:
        keys[u.name], hit = ptoas_cache.lookup(cache, ptoas, out_dir, u.name, insert_sync)
        if hit is not None:
            done[u.name] = hit
    todo = [u for u in units if u.name not in done]
    ran = _run(ptoas, out_dir, todo, max_workers=max_workers, timeout=timeout, insert_sync=insert_sync, batch=batch)
    ptoas_cache.remember(cache, keys, ran)
    done.update((r.unit, r) for r in ran)
    return [done[u.name] for u in units]


def _run(ptoas: Path, out_dir: Path, units: list[KernelUnit], *, max_workers: int | None,
         timeout: float, insert_sync: bool, batch: bool) -> list[PtoasResult]:
    if not units:
        return []
    if batch and len(units) > 1:
        done = run_batch(ptoas, out_dir, units, timeout=timeout, insert_sync=insert_sync)
        if done is not None:
            return done
    if max_workers == 1 or len(units) <= 1:
        return [ptoas_stage.run_ptoas(ptoas, out_dir, u.name, timeout=timeout, insert_sync=insert_sync) for u in units]
    with ThreadPoolExecutor(max_workers=max_workers) as pool:
        futures = [pool.submit(ptoas_stage.run_ptoas, ptoas, out_dir, u.name, timeout=timeout, insert_sync=insert_sync)
                   for u in units]
        return [f.result() for f in futures]
