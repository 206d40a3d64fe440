"""The module ``__getattr__`` of a face that re-exports names from higher layers on first use.

``__getattr__ = lazy_getattr(__name__, _LAZY, globals())``: a name listed in ``_LAZY`` (name -> the
module that defines it) is imported when first read and then kept in the module's namespace; any
other name is an AttributeError, as for a plain module. ``tests/test_layers.py`` reads ``_LAZY`` to
allow exactly these upward re-exports.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def lazy_getattr(module_name: str, table: dict[str, str], namespace: dict[str, Any]) -> Callable[[str], Any]:
    """A module-level ``__getattr__`` serving ``table``'s names from ``namespace``'s module."""

    def __getattr__(name: str) -> Any:
        source = table.get(name)
        if source is None:
            raise AttributeError(f"module {module_name!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(source), name)
        namespace[name] = value
        return value

    return __getattr__
