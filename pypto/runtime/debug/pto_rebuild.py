"""Upstream's ``pypto.runtime.debug.pto_rebuild``: splice re-assembled ``.pto`` bodies into kernel sources.

:func:`rebuild_kernel_cpp_from_pto` runs ptoas, so it lives in :mod:`pypto.flows.replay` (``_LAZY``).
"""

from __future__ import annotations

import importlib
import os
from typing import Any

from pypto.artifact.directory import PTOAS_BODY_BEGIN, PTOAS_BODY_END

_LAZY = {"rebuild_kernel_cpp_from_pto": "pypto.flows.replay"}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def rebuild_kernel_cpp_from_pto(work_dir: str | os.PathLike[str]) -> list[str]:
    """Re-assemble edited ``ptoas/*.pto`` files into their kernel sources (:mod:`pypto.flows.replay`)."""
    from pypto.flows.replay import rebuild_kernel_cpp_from_pto as rebuild

    return rebuild(work_dir)


__all__ = ["PTOAS_BODY_BEGIN", "PTOAS_BODY_END", "rebuild_kernel_cpp_from_pto"]
