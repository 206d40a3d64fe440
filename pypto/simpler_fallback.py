"""``import simpler`` without upstream's runtime package: a finder of last resort, serving pypto's simulator stand-in.

:func:`install_fallback` appends :class:`SimplerFallbackFinder` to the *end* of ``sys.meta_path``, so a real
``simpler`` on ``sys.path`` is always found first; only when there is none do ``simpler`` and
``simpler.worker`` resolve to pypto's level-2 ``Worker`` for ``a2a3sim`` / ``a5sim``
(:mod:`pypto.runtime.simpler_compat`). The stand-in says what it is: ``simpler.__pypto_fallback__ is True``.
Importing :mod:`pypto.compiled` installs it (the handle whose ``chip_callable`` such a worker runs);
:func:`uninstall_fallback` removes it. Standard library only, so installing it costs nothing.

Floor: beside ``debug``, below ``compiled``; the runtime module is imported when ``simpler`` is.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import types
from typing import Any

FALLBACK_MODULES = ("simpler", "simpler.worker")


def is_fallback(module: Any) -> bool:
    """Whether ``module`` is pypto's stand-in rather than a real ``simpler``."""
    return bool(getattr(module, "__pypto_fallback__", False))


class _Loader(importlib.abc.Loader):
    def create_module(self, spec: importlib.machinery.ModuleSpec) -> None:
        return None

    def exec_module(self, module: types.ModuleType) -> None:
        compat = importlib.import_module("pypto.runtime.simpler_compat")
        module.__pypto_fallback__ = True
        module.Worker = compat.Worker
        if module.__name__ == "simpler":
            module.__doc__ = "pypto's simulator stand-in for simpler (no real simpler is installed)."
        else:
            module.__doc__ = "simpler.worker: pypto's level-2 Worker on the simulators."
            module.CallableHandle = compat.CallableHandle


class SimplerFallbackFinder(importlib.abc.MetaPathFinder):
    """Serves ``simpler`` / ``simpler.worker`` only after every other finder found nothing."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if fullname not in FALLBACK_MODULES:
            return None
        if fullname != "simpler" and not is_fallback(sys.modules.get("simpler")):
            return None  # a submodule the real simpler lacks is its own affair
        return importlib.machinery.ModuleSpec(fullname, _Loader(), is_package=fullname == "simpler")


def install_fallback() -> None:
    """Append the finder to ``sys.meta_path`` (once); a real ``simpler`` keeps precedence."""
    if not any(isinstance(f, SimplerFallbackFinder) for f in sys.meta_path):
        sys.meta_path.append(SimplerFallbackFinder())


def uninstall_fallback() -> None:
    """Remove the finder and forget stand-in modules already imported."""
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, SimplerFallbackFinder)]
    for name in FALLBACK_MODULES:
        if is_fallback(sys.modules.get(name)):
            del sys.modules[name]


__all__ = ["FALLBACK_MODULES", "SimplerFallbackFinder", "install_fallback", "is_fallback", "uninstall_fallback"]
