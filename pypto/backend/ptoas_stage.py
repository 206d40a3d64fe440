"""The assembler stage: run ptoas 0.1.1 on the kernel units (one batch, or per unit in parallel), with a deadline.

ptoas 0.1.1 prints its intermediate modules and debug text on stderr and parse errors on stdout;
both go to ``ptoas/<unit>.log``. It has no ``--mlir-print-ir-*`` flags, so ``dump_ptoas_passes``
splits that captured text into one file per printed module under ``ptoas_passes/<unit>/``.
"""

from __future__ import annotations

import re
import shlex
import time
from dataclasses import dataclass
from pathlib import Path

from pypto.artifact import ptoas_file
from pypto.backend import bf16_standin, i16_retype, nonfinite, u32_retype
from pypto.toolchain.procs import run_tool

_ERROR_LINE = re.compile(r"error:|Error:|Assertion|Aborted|terminate called")
_SLUG = re.compile(r"[^a-z0-9]+")


@dataclass(frozen=True, slots=True)
class PtoasResult:
    """Outcome of one ptoas run."""

    unit: str
    ok: bool
    log: str
    error: str
    repro: str
    seconds: float
    cpp: str = ""  # ptoas' C++ as it wrote it (before finish_cpp); empty on failure


_ADDR_NAME = re.compile(r"\b(GTShape|GTStride|GT)_(\d+)\b")


def normalize_ptoas_cpp(text: str) -> str:
    """Renumber ptoas' pointer-derived type alias names (``GT_692729600``) by first appearance.

    ptoas 0.1.1 names GlobalTensor aliases after heap addresses, so two runs on the same input
    differ; renumbering makes the C++ (and every cache key and artifact built from it) reproducible.
    """
    ids: dict[str, int] = {}

    def sub(m: re.Match[str]) -> str:
        n = ids.setdefault(m.group(2), len(ids))
        return f"{m.group(1)}_{n}"
    return _ADDR_NAME.sub(sub, text)


def ptoas_flags(insert_sync: bool = True) -> list[str]:
    """The ptoas 0.1.1 flags after the paths (it has no --pto-level / --pto-arch flags)."""
    return ["--enable-insert-sync"] if insert_sync else []


def ptoas_argv(ptoas: Path, pto: Path, cpp: Path, *, insert_sync: bool = True) -> list[str]:
    """The ptoas 0.1.1 command line."""
    return [str(ptoas), str(pto), "-o", str(cpp), *ptoas_flags(insert_sync)]


def _summary(stdout: str, stderr: str, rc: int | None) -> str:
    lines = [ln for ln in (stdout + "\n" + stderr).splitlines() if _ERROR_LINE.search(ln)]
    if lines:
        return "\n".join(lines[:20])
    tail = (stderr or stdout).strip().splitlines()[-10:]
    return "\n".join([f"ptoas exited with status {rc}", *tail])


def ptoas_input(out_dir: Path, unit: str) -> tuple[Path, bool]:
    """The file ptoas is fed for a unit (relative to ``out_dir``) and whether it is the bf16 stand-in.

    A unit whose ``ptoas/<unit>.pto`` uses bf16 is fed ``ptoas/<unit>.bf16-as-f16.pto``, written here
    (:mod:`pypto.backend.bf16_standin`); any other unit its own ``.pto``.
    """
    pto = Path(ptoas_file(unit, "pto"))
    text = (out_dir / pto).read_text()
    if not bf16_standin.uses(text)[0]:
        return pto, False
    standin = Path(ptoas_file(unit, bf16_standin.SUFFIX))
    (out_dir / standin).write_text(bf16_standin.to_standin(text, f"kernel unit '{unit}'"))
    return standin, True


def finish_cpp(text: str, standin: bool, pto: str = "") -> str:
    """ptoas' C++ made reproducible (alias names renumbered) and, for a bf16 stand-in, retyped to bf16; with
    the ``.pto`` it was fed, its i16 data retyped to ``int16_t`` (:mod:`pypto.backend.i16_retype`) and its ui32
    pointers to ``uint32_t*`` (:mod:`pypto.backend.u32_retype`); its inf/NaN constants spelled so g++ takes them
    (:mod:`pypto.backend.nonfinite`)."""
    text = nonfinite.fix_cpp(normalize_ptoas_cpp(text))
    text = u32_retype.retype_cpp(i16_retype.retype_cpp(text, pto), pto)
    return bf16_standin.retype_cpp(text) if standin else text


def run_ptoas(ptoas: Path, out_dir: Path, unit: str, *, timeout: float, insert_sync: bool = True) -> PtoasResult:
    """Run ptoas on ``ptoas/<unit>.pto`` (already written; its bf16 stand-in if it uses bf16) producing
    ``ptoas/<unit>.cpp``.

    It runs in ``out_dir`` with relative paths, so the log and the repro command name no staging path.
    """
    (pto, standin), cpp = ptoas_input(out_dir, unit), Path(ptoas_file(unit, "cpp"))
    argv = ptoas_argv(ptoas, pto, cpp, insert_sync=insert_sync)
    repro = f"cd <artifact dir> && {shlex.join(argv)}"
    start = time.perf_counter()
    try:  # past the deadline: ToolTimeoutError (the group is killed; a hung ptoas would hang every retry)
        proc = run_tool(argv, tool="ptoas", timeout=timeout, setting="ptoas_timeout_s", repro=repro, cwd=out_dir)
    except OSError as exc:
        return PtoasResult(unit, False, "", f"cannot run ptoas: {exc}", repro, time.perf_counter() - start)
    note = bf16_standin.NOTE if standin else ""
    log = (f"$ {shlex.join(['ptoas', *argv[1:]])}\n{note}# exit status {proc.returncode}\n"
           f"# --- stdout ---\n{proc.stdout}# --- stderr ---\n{proc.stderr}")
    ok = proc.returncode == 0 and (out_dir / cpp).is_file()
    raw = (out_dir / cpp).read_text() if ok else ""
    if ok:
        (out_dir / cpp).write_text(finish_cpp(raw, standin, (out_dir / pto).read_text()))
    err = "" if ok else _summary(proc.stdout, proc.stderr, proc.returncode)
    return PtoasResult(unit, ok, log, err, repro, time.perf_counter() - start, raw)


def split_debug_modules(log: str) -> dict[str, str]:
    """The modules ptoas printed while lowering, named after the marker line that follows each."""
    out: dict[str, str] = {}
    block: list[str] | None = None
    pending: list[str] = []
    for line in log.splitlines():
        if block is None and line.startswith("module"):
            block = [line]
        elif block is not None:
            block.append(line)
            if line == "}":
                pending.append("\n".join(block) + "\n")
                block = None
        elif pending and line.strip() and not line.startswith(("[Debug]", "#", "$")):
            slug = _SLUG.sub("_", line.lower()).strip("_") or "stage"
            out[f"{len(out):02d}_{slug}.mlir"] = pending.pop()
    for rest in pending:
        out[f"{len(out):02d}_final.mlir"] = rest
    return out


def error_report(failed: list[PtoasResult], total: int) -> tuple[str, str]:
    """(summary table, full text of ``report/codegen_errors.txt``)."""
    width = max([len("Function"), *(len(r.unit) for r in failed)])
    rows = [f"{len(failed)} function(s) failed to compile:", "", f"{'Function':<{width}} | Error",
            f"{'-' * width}-+-{'-' * 40}"]
    for r in failed:
        first = r.error.splitlines()[0] if r.error else "unknown error"
        rows.append(f"{r.unit:<{width}} | {first}")
    table = "\n".join(rows)
    full = [table, "", f"({total - len(failed)} of {total} unit(s) compiled)", ""]
    for r in failed:
        full += [f"=== {r.unit} ===", r.error, "", "Repro command:", f"  {r.repro}", ""]
    return table, "\n".join(full)
