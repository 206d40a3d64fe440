"""Upstream's ``pypto.pypto_core.logging``: log levels, log calls and checks, over pypto's structlog logging.

``set_log_level`` / ``get_log_level`` are the process-wide threshold; ``_set_thread_log_level`` puts a
higher threshold on the calling thread only (its log lines below it are dropped) until
``_clear_thread_log_level``. A thread threshold below the process one cannot bring back lines the
process threshold filters (pypto filters before per-thread processing): it raises ValueError.
"""

from __future__ import annotations

import threading
from typing import Any

from pypto.errors import InternalError, PyptoError, check, internal_check  # noqa: F401 - upstream's names here
from pypto.span import Span
from pypto.toolchain import logging as _log
from pypto.toolchain.logging import LogLevel, ensure_configured, get_log_level, set_log_level

Error = PyptoError
_THREAD = threading.local()
_NAMES = {"debug": LogLevel.DEBUG, "info": LogLevel.INFO, "warning": LogLevel.WARN, "warn": LogLevel.WARN,
          "error": LogLevel.ERROR, "critical": LogLevel.FATAL, "fatal": LogLevel.FATAL}


def _thread_filter(_logger: Any, method: str, event: Any) -> Any:
    level = getattr(_THREAD, "level", None)
    if level is not None and _NAMES.get(method, LogLevel.INFO) < level:
        import structlog

        raise structlog.DropEvent
    return event


def _install() -> None:
    """Put the thread filter first in the processor chain (again, if logging was reconfigured since)."""
    import structlog

    ensure_configured()
    processors = list(structlog.get_config()["processors"])
    if _thread_filter not in processors:
        structlog.configure(processors=[_thread_filter, *processors])


def _set_thread_log_level(level: LogLevel) -> None:
    """Drop this thread's log lines below ``level`` (others threads are unaffected)."""
    level = LogLevel(int(level))
    if level < get_log_level():
        raise ValueError(f"thread log level {level.name} is below the process level {get_log_level().name}; "
                         "lower the process level with set_log_level first")
    _install()
    _THREAD.level = level


def _clear_thread_log_level() -> None:
    """Remove this thread's threshold."""
    _THREAD.level = None


def _with_thread_filter(log: Any) -> Any:
    """``log`` (pypto's own log call) with the thread filter put back first, if logging was reconfigured."""

    def call(message: str) -> None:
        _install()
        log(message)

    call.__name__, call.__doc__ = log.__name__, log.__doc__
    return call


log_debug, log_info, log_warn = (_with_thread_filter(f) for f in (_log.log_debug, _log.log_info, _log.log_warn))
log_error, log_fatal, log_event = (_with_thread_filter(f) for f in (_log.log_error, _log.log_fatal, _log.log_event))


def internal_check_span(condition: bool, message: str, span: Span) -> None:
    """Like ``internal_check``, with the source location appended."""
    if not condition:
        raise InternalError(f"{message} [{span}]")


InternalError = InternalError

__all__ = ["Error", "InternalError", "LogLevel", "check", "get_log_level", "internal_check", "internal_check_span",
           "log_debug", "log_error", "log_event", "log_fatal", "log_info", "log_warn", "set_log_level"]
