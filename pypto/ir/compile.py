"""Upstream's ``pypto.ir.compile`` module path: ``compile(program, ...)`` (the driver's, loaded on first use).

Importing this module binds ``pypto.ir.compile`` to the module (Python sets a package attribute to each
submodule it imports); the module is therefore callable, and calling it is calling ``compile``.
"""

from __future__ import annotations

import sys
import types
from importlib import import_module
from typing import Any

_LAZY = {"compile": "pypto.jit.distributed.host"}  # the declared upward reach (tests/test_layers.py)


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'pypto.ir.compile' has no attribute '{name}'")


class _CallableModule(types.ModuleType):
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return __getattr__("compile")(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
