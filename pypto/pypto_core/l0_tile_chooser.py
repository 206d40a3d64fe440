"""Upstream's ``pypto.pypto_core.passes.l0_tile_chooser``: pypto's L0 tile chooser with upstream's calling style.

Upstream builds an ``L0TileConfig()`` and assigns its fields one by one; here that mutable object is
a thin holder frozen into :class:`pypto.passes.l0_tile_chooser.L0TileConfig` when the chooser runs.
"""

from __future__ import annotations

from dataclasses import fields, replace
from typing import Any

from pypto.passes import l0_tile_chooser as _chooser
from pypto.passes.l0_tile_chooser import L0TileResult, Stationarity

_FIELDS = tuple(f.name for f in fields(_chooser.L0TileConfig))


class L0TileConfig:
    """Inputs of :func:`choose_l0_tile`; every field starts at its default (910B BF16 -> FP32, gates closed)."""

    def __init__(self) -> None:
        defaults = _chooser.L0TileConfig()
        for name in _FIELDS:
            object.__setattr__(self, name, getattr(defaults, name))

    def __setattr__(self, name: str, value: Any) -> None:
        if name not in _FIELDS:
            raise AttributeError(f"L0TileConfig has no field '{name}' (fields: {', '.join(_FIELDS)})")
        object.__setattr__(self, name, value)

    def frozen(self) -> _chooser.L0TileConfig:
        return replace(_chooser.L0TileConfig(), **{name: getattr(self, name) for name in _FIELDS})

    def __repr__(self) -> str:
        return repr(self.frozen()).replace("L0TileConfig(", "l0_tile_chooser.L0TileConfig(", 1)


def choose_l0_tile(config: L0TileConfig | _chooser.L0TileConfig) -> L0TileResult:
    """Pick the minimum-wall L0 design point (see :mod:`pypto.passes.l0_tile_chooser`)."""
    return _chooser.choose_l0_tile(config.frozen() if isinstance(config, L0TileConfig) else config)


__all__ = ["L0TileConfig", "L0TileResult", "Stationarity", "choose_l0_tile"]
