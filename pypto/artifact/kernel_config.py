"""``kernel_config.py``: what the runtime builds (orchestration source, kernels by func_id).

:func:`render_kernel_config` writes it; generated files import :class:`ArgDirection` from here
(``from pypto.artifact.kernel_config import ArgDirection as _D``). Files written by older pypto
versions import it from ``pypto.runtime.kernel_config``, which stays as an alias.
"""

from __future__ import annotations

from enum import IntEnum

from pypto.artifact.model import FuncId


class ArgDirection(IntEnum):
    """Direction of an argument in a callable signature (tensors only; scalars are implied)."""

    SCALAR = 0
    IN = 1
    OUT = 2
    INOUT = 3


_DIR = {"In": "_D.IN", "Out": "_D.OUT", "InOut": "_D.INOUT"}


def _sig(directions: tuple[str, ...]) -> str:
    return "[" + ", ".join(_DIR[d] for d in directions) + "]"


def render_kernel_config(orch_name: str, func_ids: list[FuncId], *, runtime: str,
                         orch_signature: tuple[str, ...] | None = None) -> str:
    """The text of ``kernel_config.py`` (imports :class:`ArgDirection` from this module)."""
    has_sig = bool(orch_signature) or any(f.signature for f in func_ids)
    lines = ["# Kernel and Orchestration Configuration", "", "from pathlib import Path", ""]
    if has_sig:
        lines += ["from pypto.artifact.kernel_config import ArgDirection as _D", ""]
    lines += ["_ROOT_DIR = Path(__file__).parent", "",
              f"# Runtime configuration for {runtime}.",
              "# aicpu_thread_num 0 selects the architecture default (a2a3: 4; a5: 5).",
              "RUNTIME_CONFIG = {", f'\t"runtime": "{runtime}",', '\t"aicpu_thread_num": 0,', "}", "",
              "ORCHESTRATION = {",
              f'\t"source": str(_ROOT_DIR / "orchestration" / "{orch_name}.cpp"),',
              '\t"function_name": "aicpu_orchestration_entry",']
    if orch_signature:
        lines.append(f'\t"signature": {_sig(orch_signature)},')
    lines += ["}", "", "KERNELS = ["]
    for f in sorted(func_ids, key=lambda f: f.func_id):
        sig = f', "signature": {_sig(f.signature)}' if f.signature else ""
        lines.append(f'\t{{"func_id": {f.func_id}, "name": "{f.name}", '
                     f'"source": str(_ROOT_DIR / "kernels" / "{f.core}" / "{f.name}.cpp"), '
                     f'"core_type": "{f.core}"{sig}}},')
    lines += ["]", ""]
    return "\n".join(lines)
