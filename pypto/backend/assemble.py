"""``assemble``: write an :class:`Artifact` to its directory, run ptoas, wrap kernels, write configs."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from pypto.artifact import (
    CODEGEN_ERRORS,
    KERNEL_CONFIG,
    REPORT_DIR,
    Artifact,
    KernelFunc,
    KernelUnit,
    kernel_source,
    ptoas_file,
    ptoas_passes_file,
    render_kernel_config,
    skip_ptoas_files,
)
from pypto.backend import bf16_standin
from pypto.backend.ptoas_batch import run_units
from pypto.backend.ptoas_stage import PtoasResult, error_report, split_debug_modules
from pypto.errors import PartialCodegenError, ToolchainError

if TYPE_CHECKING:
    from pypto.backend.ptoas_cache import PtoasCache

_WRAP_KIND = {"tensor": "tensor", "scalar": "scalar", "dim": "dyn_dim", "block_idx": "block_idx",
              "block_num": "block_num", "sub_block_idx": "sub_block_idx"}


class _Writer:
    """Writes text files under ``root`` and remembers them (relpath -> text)."""

    def __init__(self, root: Path) -> None:
        from pypto.toolchain.files import DirMaker

        self.root = root
        self.files: dict[str, str] = {}
        self.dirs = DirMaker()

    def write(self, rel: str, text: str) -> None:
        from pypto.artifact.names import contained
        from pypto.toolchain.files import text_bytes, write_file

        path = os.fspath(contained(self.root, rel))  # never outside the artifact dir, whatever the name
        self.dirs.ensure(os.path.dirname(path))
        # written in place: the compile holds the directory's lock (runs read it under a shared one),
        # and the directory counts as complete only once compiled_meta.json is renamed into it last
        write_file(path, text_bytes(text))
        self.files[rel] = text


def wrapper_params(kf: KernelFunc) -> list:
    """The kernel wrapper's parameter model for a kernel function (MLIR argument order)."""
    from pypto.backend.kernel_wrapper import KernelParam

    n_tensors = sum(1 for p in kf.params if p.kind == "tensor")
    out = []
    for i, p in enumerate(kf.params):
        index = p.index - n_tensors if p.kind == "scalar" else p.index
        out.append(KernelParam(f"arg{i}", _WRAP_KIND[p.kind], p.ctype, index, p.axis, label=p.name,  # type: ignore[arg-type]
                               scale=p.scale, offset=p.offset))
    return out


def _wrap_unit(w: _Writer, unit: KernelUnit, cpp: str) -> None:
    from pypto.backend.kernel_wrapper import wrap_kernel

    for kf in unit.funcs:
        w.write(kernel_source(kf.core, kf.name), wrap_kernel(cpp, kf.name, wrapper_params(kf)))


def _resolve_ptoas(ptoas: Path | None) -> Path:
    if ptoas is not None:
        return Path(ptoas)
    from pypto.toolchain.ptoas import require_ptoas

    return require_ptoas()


def assemble(artifact: Artifact, out_dir: Path, *, ptoas: Path | None = None, skip_ptoas: bool = False,
             dump_ptoas_passes: bool = False, max_workers: int | None = None, timeout: float | None = None,
             insert_sync: bool = True, cache: PtoasCache | None = None) -> dict[str, str]:
    """Write the artifact into ``out_dir`` and (unless ``skip_ptoas``) assemble every kernel unit.

    ``cache``: reuse ptoas' output for units assembled before (:mod:`pypto.backend.ptoas_cache`); not
    with ``dump_ptoas_passes``, whose dumps need each unit's own full ptoas trace.

    Returns the files written (relpath -> text). On ptoas failures writes ``report/codegen_errors.txt``
    and raises :class:`PartialCodegenError` (some units compiled; ``.files`` lists what was written)
    or :class:`ToolchainError` (none did), both carrying ptoas' error text and a repro command.
    """
    out_dir = Path(out_dir)
    w = _Writer(out_dir)
    w.dirs.ensure(out_dir / REPORT_DIR)
    for rel, text in artifact.files.items():
        w.write(rel, text)
    if skip_ptoas:
        for rel, text in skip_ptoas_files(artifact.units).items():
            if rel not in w.files:
                w.write(rel, text)
        return w.files
    exe = _resolve_ptoas(ptoas)
    if timeout is None:
        from pypto.toolchain.settings import tool_timeout

        timeout = tool_timeout("ptoas_timeout_s")
    for u in artifact.units:
        w.write(ptoas_file(u.name, "pto"), u.pto)
    results = run_units(exe, out_dir, artifact.units, max_workers=max_workers, timeout=timeout,
                        insert_sync=insert_sync, batch=not dump_ptoas_passes,  # dumps need each unit's trace
                        cache=None if dump_ptoas_passes else cache)
    for u, r in zip(artifact.units, results, strict=True):
        _collect(w, u, r, dump_ptoas_passes)
    failed = [r for r in results if not r.ok]
    if failed:
        _fail(w, failed, len(results))
    if artifact.orchestration_names:
        orch = artifact.orchestration_names[0]
        w.write(KERNEL_CONFIG, render_kernel_config(
            orch, artifact.func_ids, runtime=artifact.runtime, orch_signature=artifact.orch_signatures.get(orch)))
    return w.files


def _collect(w: _Writer, unit: KernelUnit, r: PtoasResult, dump: bool) -> None:
    w.write(ptoas_file(unit.name, "log"), r.log)
    if dump:
        w.write(ptoas_passes_file(unit.name, "ptoas_debug.log"), r.log)
        for name, text in split_debug_modules(r.log).items():
            w.write(ptoas_passes_file(unit.name, name), text)
    standin = ptoas_file(unit.name, bf16_standin.SUFFIX)
    if (w.root / standin).is_file():
        w.files[standin] = (w.root / standin).read_text()
    if r.ok:
        cpp = (w.root / ptoas_file(unit.name, "cpp")).read_text()
        w.files[ptoas_file(unit.name, "cpp")] = cpp
        _wrap_unit(w, unit, cpp)


def _fail(w: _Writer, failed: list[PtoasResult], total: int) -> None:
    table, full = error_report(failed, total)
    w.write(CODEGEN_ERRORS, full)
    first = failed[0]
    msg = f"ptoas compilation failed\n{table}"
    hint = "see report/codegen_errors.txt and ptoas/<unit>.log; the .pto is kept under ptoas/"
    if len(failed) < total:
        raise PartialCodegenError(msg, files=dict(w.files), stderr=first.error, repro=first.repro, hint=hint)
    raise ToolchainError(msg, stderr=first.error, repro=first.repro, hint=hint)
