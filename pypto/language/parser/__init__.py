"""``pypto.language.parser``: upstream's parser package path, a face over pypto's DSL frontend.

The frontend itself lives in :mod:`pypto.language.function_parser` (and the modules it
imports). Upstream's public parser names are pl's own objects (``parser.function is pl.function``),
loaded on first use so that ``import pypto.language`` stays cheap. The error classes are under
:mod:`pypto.language.parser.diagnostics`.

Floor: ``language``.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

_LAZY = {
    "function": "pypto.language.decorators", "program": "pypto.language.decorators",
    "inline": "pypto.language.decorators", "InlineFunction": "pypto.language.decorators",
    "parse": "pypto.language.text", "loads": "pypto.language.text", "parse_program": "pypto.language.text",
    "loads_program": "pypto.language.text", "Scalar": "pypto.language.types", "Tensor": "pypto.language.types",
    "Tile": "pypto.language.types", "range": "pypto.language.dsl", "yield_": "pypto.language.dsl",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'pypto.language.parser' has no attribute '{name}'")
    return getattr(import_module(module), name)


__all__ = sorted(_LAZY)
