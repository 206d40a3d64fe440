"""Upstream's ``pypto.ir.compiled_program`` module path: ``CompiledProgram`` (loaded on first use)."""

from __future__ import annotations

from importlib import import_module
from typing import Any

_LAZY = {"CompiledProgram": "pypto.compiled"}  # the declared upward reach (tests/test_layers.py)


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'pypto.ir.compiled_program' has no attribute '{name}'")
