"""Public face for upstream's ``pypto.backend.pto_backend`` import path.

Programs written for upstream PyPTO catch ``PartialCodegenError`` from here; it is the same class
as :class:`pypto.errors.PartialCodegenError` (raised when code generation produced some files and
failed on others, with ``.files`` holding what was produced).

Tests that edit an artifact's ``.pto`` by hand re-assemble it with :func:`_run_ptoas` and splice the
result between a kernel source's ``// --- ptoas-generated code ---`` and ``// --- Kernel entry point ---``
lines with :func:`_preprocess_ptoas_output` (upstream's private names; the same two steps as
:func:`pypto.runtime.debug.rebuild_kernel_cpp_from_pto`).
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path

from pypto.backend import bf16_standin, ptoas_stage
from pypto.backend.kernel_wrapper import preprocess_ptoas
from pypto.errors import PartialCodegenError, ToolchainError

NEWER_PTOAS_FLAGS = ("--pto-level", "--pto-arch")
"""Flags of newer ptoas releases that 0.1.1 does not have (it rejects them as unknown). pypto's ``.pto`` is
written for 0.1.1's one level and one target, so a call passing them gets what pypto's own assembler runs."""


def pinned_flags(flags: list[str] | tuple[str, ...] | None) -> list[str]:
    """``flags`` without :data:`NEWER_PTOAS_FLAGS` (``--pto-arch a3`` or ``--pto-level=level3``, with the value)."""
    out: list[str] = []
    skip_value = False
    for flag in flags or ():
        name, eq, _ = flag.partition("=")
        if skip_value:
            skip_value = False
        elif name in NEWER_PTOAS_FLAGS:
            skip_value = not eq
        else:
            out.append(flag)
    return out


def _run_ptoas(pto_path: str | os.PathLike[str], output_path: str | os.PathLike[str],
               ptoas_flags: list[str] | None = None) -> None:
    """Assemble ``pto_path`` into ``output_path`` with the pinned ptoas 0.1.1, as pypto's own assembler does.

    The C++ written is the one an artifact's ``ptoas/<unit>.cpp`` holds (alias names renumbered, bf16 and
    narrow types retyped). ``ptoas_flags`` go after the paths, without :data:`NEWER_PTOAS_FLAGS`; ``None``
    means pypto's own (``--enable-insert-sync``). A missing ptoas or a failed or timed-out run raises
    :class:`~pypto.errors.ToolchainError` with ptoas' output and the command that repeats it.
    """
    from pypto.toolchain.procs import run_tool
    from pypto.toolchain.ptoas import require_ptoas
    from pypto.toolchain.settings import tool_timeout

    pto, cpp = Path(pto_path), Path(output_path)
    text = pto.read_text(encoding="utf-8")
    fed, standin = pto, bf16_standin.uses(text)[0]
    if standin:
        fed = pto.with_name(f"{pto.stem}.{bf16_standin.SUFFIX}")
        fed.write_text(bf16_standin.to_standin(text, str(pto)), encoding="utf-8")
    flags = ptoas_stage.ptoas_flags() if ptoas_flags is None else pinned_flags(ptoas_flags)
    argv = [str(require_ptoas()), str(fed), "-o", str(cpp), *flags]
    repro = shlex.join(argv)
    proc = run_tool(argv, tool="ptoas", timeout=tool_timeout("ptoas_timeout_s"), setting="ptoas_timeout_s",
                    repro=repro)
    if proc.returncode != 0 or not cpp.is_file():
        raise ToolchainError(f"ptoas compilation failed on {pto} (exit status {proc.returncode})",
                             stderr=(proc.stdout + proc.stderr)[-4000:], repro=repro)
    cpp.write_text(ptoas_stage.finish_cpp(cpp.read_text(encoding="utf-8"), standin, text), encoding="utf-8")


def _preprocess_ptoas_output(content: str) -> str:
    """ptoas' C++ as a kernel source embeds it between its ptoas-generated-code and entry-point markers."""
    return preprocess_ptoas(content)


__all__ = ["NEWER_PTOAS_FLAGS", "PartialCodegenError", "pinned_flags"]
