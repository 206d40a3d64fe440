"""Upstream's ``pypto.pypto_core`` (its C++ bindings), as a face over pypto's own modules.

``DataType``, ``LogLevel``, the log calls and checks, and the submodules ``ir``, ``passes``, ``arith``,
``logging``, ``backend``, ``codegen`` and ``testing``. A binding name with no meaning on pypto's
toolchain is a stand-in that raises UnsupportedFeatureError when used (see each submodule).

Floor: above ``passes``, ``arith`` and ``toolchain``, whose names it re-exports.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from pypto.ir.dtypes import DataType
from pypto.pypto_core.logging import (
    Error,
    InternalError,
    LogLevel,
    _clear_thread_log_level,
    _set_thread_log_level,
    check,
    get_log_level,
    internal_check,
    internal_check_span,
    log_debug,
    log_error,
    log_event,
    log_fatal,
    log_info,
    log_warn,
    set_log_level,
)

_SUBMODULES = ("arith", "backend", "codegen", "ir", "passes", "testing")


def __getattr__(name: str) -> Any:
    if name in _SUBMODULES:
        return import_module(f"pypto.pypto_core.{name}")
    raise AttributeError(f"module 'pypto.pypto_core' has no attribute '{name}'")


__all__ = [  # noqa: F822 (submodules load on first use)
    "DataType", "Error", "InternalError", "LogLevel", "arith", "backend", "check", "codegen", "get_log_level",
    "internal_check", "internal_check_span", "ir", "log_debug", "log_error", "log_event", "log_fatal", "log_info",
    "log_warn", "passes", "set_log_level", "testing", "_clear_thread_log_level", "_set_thread_log_level",
]
