"""Upstream's ``pypto.pypto_core.logging``: log levels, log calls and checks, over pypto's structlog logging.

``set_log_level`` / ``get_log_level`` are the process-wide threshold; ``_set_thread_log_level`` puts a
higher threshold on the calling thread only (its log lines below it are dropped) until
``_clear_thread_log_level``. A thread threshold below the process one cannot bring back lines the
process threshold filters (pypto filters before per-thread processing): it raises ValueError.
"""

from __future__ import annotations

import threading
from typing import Any

from pypto.errors import InternalError, PyptoError
from pypto.span import Span
from pypto.toolchain.logging import LogLevel, ensure_configured, get_log_level, get_logger, set_log_level

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


def _log(method: str, message: str) -> None:
    _install()
    getattr(get_logger("pypto"), method)(message)


def log_debug(message: str) -> None:
    _log("debug", message)


def log_info(message: str) -> None:
    _log("info", message)


def log_warn(message: str) -> None:
    _log("warning", message)


def log_error(message: str) -> None:
    _log("error", message)


def log_fatal(message: str) -> None:
    _log("critical", message)


def log_event(message: str) -> None:
    """An EVENT line logs like INFO."""
    _log("info", message)


def check(condition: bool, message: str) -> None:
    """ValueError(message) unless ``condition``."""
    if not condition:
        raise ValueError(message)


def internal_check(condition: bool, message: str) -> None:
    """InternalError(message) unless ``condition`` (a broken invariant: a pypto bug)."""
    if not condition:
        raise InternalError(message)


def internal_check_span(condition: bool, message: str, span: Span) -> None:
    """Like ``internal_check``, with the source location appended."""
    if not condition:
        raise InternalError(f"{message} [{span}]")


InternalError = InternalError

__all__ = ["Error", "InternalError", "LogLevel", "check", "get_log_level", "internal_check", "internal_check_span",
           "log_debug", "log_error", "log_event", "log_fatal", "log_info", "log_warn", "set_log_level"]
