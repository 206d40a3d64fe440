"""Upstream's ``pypto.ir.op``: op builders that make typed ``Call`` nodes directly (no DSL parsing).

``ir.op.tile.add(a, b)`` is ``make_call("tile.add", [a, b])`` on the op registry: operands are checked
and the result type inferred exactly as for the DSL. Python ints / floats / lists become constants /
``MakeTuple``; keyword arguments are the op's keywords (``span=`` sets the span). ``tensor``, ``tile``,
``system`` and ``array`` are the modules ``tensor_ops`` & co; ``prefetch`` and the ``distributed`` comm ops
are stand-ins that raise UnsupportedFeatureError (pypto builds comm ops from the pld DSL only).

Floor: ``ir`` (the op registry only).
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

_SUBMODULES = {"tensor": "tensor_ops", "tile": "tile_ops", "system": "system_ops", "array": "array_ops",
               "prefetch": "prefetch_ops", "distributed": "distributed"}


def __getattr__(name: str) -> Any:
    if name in _SUBMODULES:
        return import_module(f"pypto.ir.op.{_SUBMODULES[name]}")
    raise AttributeError(f"module 'pypto.ir.op' has no attribute '{name}'")


__all__ = ["array", "distributed", "prefetch", "system", "tensor", "tile"]  # noqa: F822 (lazy submodules)
