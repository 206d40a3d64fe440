"""Upstream's ``pypto.language.op.tile_ops``: a face over ``pl.tile`` (each name is the same op object)."""

from __future__ import annotations

from typing import Any

from pypto.language.op._face import namespace_op


def __getattr__(name: str) -> Any:
    return namespace_op("tile", name, __name__)


def __dir__() -> list[str]:
    import pypto.language as pl

    return dir(pl.tile)
