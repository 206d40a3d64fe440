"""An artifact's ``debug/run.py`` (upstream's ``pypto.runtime.debug.run_script_writer`` re-exports this).

The script runs its artifact directory again on a simulation platform (``python debug/run.py
[--platform a5sim] [--swimlane] ...``, see ``--help``) with inputs made from the parameters'
shapes and dtypes (random inputs, zeroed outputs; a ``golden.py`` beside it supplies and checks them
instead). ``_inline_inputs`` and ``_user_compare`` are the parts meant to be edited.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pypto.artifact.directory import DEBUG_RUN_SCRIPT

_INTS = {"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"}


def _init_line(p: Any) -> str:
    meta = p.dtype.meta if p.dtype is not None else None
    if p.shape is None or meta is None:
        return f"{p.name} = 0  # scalar parameter: set its value"
    shape = tuple(d if d is not None and d >= 0 else 1 for d in p.shape)
    note = "  # dynamic dims filled with 1: edit as needed" if shape != tuple(p.shape) else ""
    if meta == "bf16":
        fill = (f"torch.zeros({shape!r}, dtype=torch.bfloat16)" if p.direction == "Out"
                else f"torch.randn({shape!r}).to(torch.bfloat16)")
        return f"{p.name} = {fill}{note}"
    if p.direction == "Out":
        return f"{p.name} = np.zeros({shape!r}, dtype=np.{_np_name(meta)}){note}"
    if meta == "bool":
        return f"{p.name} = _RNG.integers(0, 2, {shape!r}).astype(np.bool_){note}"
    if meta in _INTS:
        return f"{p.name} = _RNG.integers(0, 8, {shape!r}).astype(np.{meta}){note}"
    return f"{p.name} = _RNG.standard_normal({shape!r}).astype(np.{_np_name(meta)}){note}"


def _np_name(meta: str) -> str:
    return {"fp32": "float32", "fp16": "float16", "fp64": "float64", "bool": "bool_"}.get(meta, meta)


def render_run_script(params: Sequence[Any], platform: str | None = None) -> str:
    """The text of ``debug/run.py`` for parameters ``params`` (:class:`~pypto.artifact.meta.ParamInfo`)."""
    names = ", ".join(p.name for p in params)
    inits = "\n".join(f"    {_init_line(p)}" for p in params) or "    pass"
    uses_torch = any(p.dtype is not None and p.dtype.meta == "bf16" for p in params)
    return f'''"""Run this artifact directory again: python debug/run.py [--platform PLAT] [--swimlane] ... (--help).

Inputs come from ``_inline_inputs`` (random inputs, zeroed outputs, from the parameters' shapes and
dtypes), or from a ``golden.py`` in the artifact directory, which also checks the outputs. Edited
``ptoas/*.pto`` or ``kernels/**/*.cpp`` files are assembled and built again before the run.
``_inline_inputs`` and ``_user_compare`` are yours to edit. Written by pypto.
"""

import sys
from pathlib import Path

import numpy as np
{"import torch" if uses_torch else ""}
from pypto.runtime.debug.replay import _main

_WORK_DIR = Path(__file__).resolve().parent.parent
_RNG = np.random.default_rng(0)


def _inline_inputs():
{inits}
    return [{names}]


def _user_compare({names}):
    """Checks to run after the kernel (outputs are filled in place); runs when no golden.py validates."""
    return


if __name__ == "__main__":
    sys.exit(_main([str(_WORK_DIR), *sys.argv[1:]], inline_inputs=_inline_inputs, user_compare=_user_compare,
                   default_platform={(platform or "a2a3sim")!r}))
'''


def write_run_script(work_dir: str | os.PathLike[str], param_infos: Sequence[Any], *,
                     platform: str | None = None) -> Path:
    """Write ``<work_dir>/debug/run.py`` for the orchestration parameters ``param_infos``; returns its path."""
    out = Path(work_dir) / DEBUG_RUN_SCRIPT
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render_run_script(param_infos, platform))
    return out


__all__ = ["render_run_script", "write_run_script"]
