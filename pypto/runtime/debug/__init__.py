"""Upstream's ``pypto.runtime.debug``: re-running a compiled artifact directory after hand edits.

Floor: the runtime's; :func:`replay` and :func:`rebuild_kernel_cpp_from_pto` assemble and run, so they
live in :mod:`pypto.flows.replay` and are re-exported through ``_LAZY``.
"""

from __future__ import annotations

import importlib
from typing import Any

from pypto.runtime.debug.replay import invalidate_binary_cache
from pypto.runtime.debug.run_script_writer import write_run_script

_LAZY = {"replay": "pypto.flows.replay", "rebuild_kernel_cpp_from_pto": "pypto.flows.replay"}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = ["invalidate_binary_cache", "rebuild_kernel_cpp_from_pto", "replay", "write_run_script"]
