"""Upstream's ``pypto.ir.instruments`` module path: ``make_roundtrip_instrument`` (a pass instrument that
prints the IR after each pass, parses it back and checks structural equality)."""

from __future__ import annotations

from importlib import import_module
from typing import Any

_LAZY = {"make_roundtrip_instrument": "pypto.passes.instruments"}  # declared upward reach


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'pypto.ir.instruments' has no attribute '{name}'")
