"""Shared lookups of the ``pypto.language.op`` modules: a name is pl's op object or an AttributeError."""

from __future__ import annotations

from typing import Any

import pypto.language as pl
from pypto.language.ops import OpStub, UnifiedStub
from pypto.language.unsupported import Unsupported


def top_level_op(name: str, module: str) -> Any:
    """``pl.<name>`` when it is an op (a registry op, a unified dispatcher or an unsupported stand-in)."""
    try:
        value = getattr(pl, name)
    except AttributeError:
        value = None
    if not isinstance(value, (OpStub, UnifiedStub, Unsupported)):
        raise AttributeError(f"module '{module}' has no attribute '{name}'")
    return value


def top_level_names() -> list[str]:
    return [n for n in dir(pl) if not n.startswith("_") and isinstance(_safe(n), (OpStub, UnifiedStub, Unsupported))]


def _safe(name: str) -> Any:
    try:
        return getattr(pl, name)
    except AttributeError:
        return None


def namespace_op(namespace: str, name: str, module: str) -> Any:
    """``pl.<namespace>.<name>`` (``pl.tile.add``, ``pl.system.bar_v``, ...)."""
    if name.startswith("__"):
        raise AttributeError(name)
    try:
        return getattr(getattr(pl, namespace), name)
    except AttributeError:
        raise AttributeError(f"module '{module}' has no attribute '{name}'") from None
