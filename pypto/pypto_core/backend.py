"""Upstream's ``pypto.pypto_core.backend``: names :mod:`pypto.backend` provides are its own; the rest
(upstream's C++ hardware model) are stand-ins that raise UnsupportedFeatureError when used."""

from __future__ import annotations

from importlib import import_module
from typing import Any

from pypto.pypto_core._standin import StandIn

_NAMES = ("Backend Backend910B Backend950 BackendHandler BackendType Cluster Core Die Mem SoC get_backend_instance "
          "get_backend_type get_handler is_backend_configured reset_for_testing set_backend_type").split()


def __getattr__(name: str) -> Any:
    if name not in _NAMES:
        raise AttributeError(f"module 'pypto.pypto_core.backend' has no attribute '{name}'")
    backend = import_module("pypto.backend")
    if hasattr(backend, name):
        return getattr(backend, name)
    return StandIn(f"{__name__}.{name}", "pypto's backend module does not model this part of upstream's C++ "
                   "hardware description")


__all__ = _NAMES
