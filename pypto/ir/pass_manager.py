"""Public face for upstream's ``pypto.ir.pass_manager`` import path.

``OptimizationStrategy`` lives in :mod:`pypto.ir.options`. ``PassManager`` lives in
:mod:`pypto.passes.manager`, above the IR; it is re-exported lazily (a declared upward reach, like
``pypto.ir.compile``) so importing this module imports nothing above ``pypto.ir``.
"""

from __future__ import annotations

from typing import Any

from pypto.ir.options import OptimizationStrategy

_LAZY = {"PassManager": "pypto.passes.manager"}  # the declared upward reach (tests/test_layers.py)


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'pypto.ir.pass_manager' has no attribute '{name}'")


__all__ = ["OptimizationStrategy", "PassManager"]  # noqa: F822 (PassManager is lazy)
