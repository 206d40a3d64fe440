"""``pypto.language.op``: upstream's op package path. Every name is pl's own op object.

``op.tile`` / ``op.tensor`` / ``op.system`` / ``op.array`` / ``op.prefetch`` are the modules
``tile_ops`` & co (each a face over ``pl.tile`` & co); the other names are pl's top-level ops
(``op.add is pl.add``: the unified dispatcher). Ops ptoas 0.1.1 cannot express are pl's stand-ins
that raise UnsupportedFeatureError on use.

Floor: ``language``.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

_SUBMODULES = {"tile": "tile_ops", "tensor": "tensor_ops", "system": "system_ops", "array": "array_ops",
               "prefetch": "prefetch_ops", "unified": "unified_ops"}


def __getattr__(name: str) -> Any:
    if name in _SUBMODULES:
        return import_module(f"pypto.language.op.{_SUBMODULES[name]}")
    from pypto.language.op._face import top_level_op

    return top_level_op(name, "pypto.language.op")


def __dir__() -> list[str]:
    from pypto.language.op._face import top_level_names

    return sorted({*_SUBMODULES, *top_level_names()})
