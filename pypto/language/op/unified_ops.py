"""Upstream's ``pypto.language.op.unified_ops``: pl's unified dispatchers (``pl.add`` picks the Tensor or
Tile op by its first operand)."""

from __future__ import annotations

from typing import Any

from pypto.language.op._face import top_level_op


def __getattr__(name: str) -> Any:
    if name.startswith("__"):
        raise AttributeError(name)
    return top_level_op(name, __name__)
