"""Structured logs (structlog): configured once at the entry point, always written to stderr.

Human-readable console lines on a TTY, JSON lines otherwise or when ``log_format="json"``. Context
bound with :func:`bind_context` or :func:`bound_context` (toolchain, platform, program, stage,
output_dir) is attached to every line. Stdout stays free for data (``--json`` results).
"""

from __future__ import annotations

import logging as _stdlib_logging
import sys
import time
from enum import IntEnum
from typing import TYPE_CHECKING, Any, TextIO

import structlog

if TYPE_CHECKING:
    from pypto.toolchain.settings import Settings

LEVELS: dict[str, int] = {
    "debug": _stdlib_logging.DEBUG,
    "info": _stdlib_logging.INFO,
    "event": _stdlib_logging.INFO,
    "warn": _stdlib_logging.WARNING,
    "warning": _stdlib_logging.WARNING,
    "error": _stdlib_logging.ERROR,
    "fatal": _stdlib_logging.CRITICAL,
    "none": _stdlib_logging.CRITICAL,
}
CONTEXT_KEYS = ("toolchain", "platform", "program", "stage", "output_dir")
_current_level = "info"


class LogLevel(IntEnum):
    """Upstream pypto's log levels (``pypto.LogLevel``); ``EVENT`` logs like INFO, ``NONE`` silences."""

    DEBUG = 0
    INFO = 1
    WARN = 2
    ERROR = 3
    FATAL = 4
    EVENT = 5
    NONE = 6


_LEVEL_NAMES = {LogLevel.DEBUG: "debug", LogLevel.INFO: "info", LogLevel.WARN: "warn", LogLevel.ERROR: "error",
                LogLevel.FATAL: "fatal", LogLevel.EVENT: "event", LogLevel.NONE: "none"}
_BY_NAME = {**{v: k for k, v in _LEVEL_NAMES.items()}, "warning": LogLevel.WARN}


class _Stderr:
    """A file-like object that writes to whatever ``sys.stderr`` is at write time."""

    def write(self, text: str) -> int:
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()

    def isatty(self) -> bool:
        return bool(getattr(sys.stderr, "isatty", lambda: False)())


def _use_json(log_format: str, stream: TextIO | _Stderr) -> bool:
    if log_format == "json":
        return True
    if log_format == "console":
        return False
    return not stream.isatty()


def _colors(stream: TextIO | _Stderr) -> bool:
    from pypto.toolchain.settings import terminal_env

    term = terminal_env()
    if term.no_color:
        return False
    return term.force_color or stream.isatty()


def configure_logging(
    settings: Settings | None = None,
    *,
    level: str | None = None,
    log_format: str | None = None,
    stream: TextIO | None = None,
) -> None:
    """Configure structlog for this process and bind ``toolchain`` and ``platform`` from settings.

    Args:
        settings: resolved settings (``log_level``, ``log_format``, ``toolchain``, ``platform``).
        level: overrides ``settings.log_level``.
        log_format: ``auto`` | ``console`` | ``json``; overrides ``settings.log_format``.
        stream: where to write (default: the current ``sys.stderr``, looked up at each write).
    """
    global _current_level
    level = level or (settings.log_level if settings else "info")
    _current_level = level
    log_format = log_format or (settings.log_format if settings else "auto")
    out: TextIO | _Stderr = stream or _Stderr()
    shared: list[Any] = [
        *([_drop_all] if level == "none" else []),
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    if _use_json(log_format, out):
        renderer: list[Any] = [structlog.processors.dict_tracebacks, structlog.processors.JSONRenderer()]
    else:
        renderer = [structlog.dev.ConsoleRenderer(colors=_colors(out), pad_event_to=0,
                                                  exception_formatter=structlog.dev.plain_traceback)]
    structlog.configure(
        processors=[*shared, *renderer],
        wrapper_class=structlog.make_filtering_bound_logger(LEVELS[level]),
        logger_factory=structlog.PrintLoggerFactory(file=out),  # type: ignore[arg-type]
        cache_logger_on_first_use=False,
    )
    structlog.contextvars.clear_contextvars()
    if settings is not None:
        bind_context(toolchain=settings.toolchain, platform=settings.platform)
        _check_env(settings)


def _check_env(settings: Settings) -> None:
    """Unknown ``PYPTO_*`` variables (typos) are warned about once per process, with the closest setting."""
    from pypto.toolchain.settings import warn_unknown_env

    warn_unknown_env(settings)


def _drop_all(_logger: Any, _method: str, _event: Any) -> Any:
    raise structlog.DropEvent


def ensure_configured(settings: Settings | None = None) -> None:
    """Configure logging with ``settings`` (or info level) unless the application already did.

    Library use of pypto (no CLI) then logs at info to stderr instead of structlog's
    print-everything default.
    """
    if not structlog.is_configured():
        configure_logging(settings)
    elif settings is not None:
        _check_env(settings)


def set_log_level(level: LogLevel | int | str) -> None:
    """Set the threshold of pypto's log lines (``pypto.set_log_level(pypto.LogLevel.DEBUG)``).

    Keeps the output format and the bound context; only messages at or above ``level`` are written.
    """
    global _current_level
    try:
        name = level.lower() if isinstance(level, str) else _LEVEL_NAMES[LogLevel(int(level))]
    except ValueError:
        raise ValueError(f"unknown log level {level!r}; use a pypto.LogLevel member") from None
    if name not in LEVELS:
        raise ValueError(f"unknown log level {level!r}; use one of {', '.join(LEVELS)}")
    ensure_configured()
    processors = [p for p in structlog.get_config()["processors"] if p is not _drop_all]
    structlog.configure(processors=[_drop_all, *processors] if name == "none" else processors,
                        wrapper_class=structlog.make_filtering_bound_logger(LEVELS[name]))
    _current_level = name


def get_log_level() -> LogLevel:
    """The current threshold as a :class:`LogLevel`."""
    return _BY_NAME.get(_current_level, LogLevel.INFO)


def get_logger(name: str | None = None, **context: Any) -> Any:
    """A lazy logger (it follows later :func:`configure_logging` calls); ``name`` shows as ``logger_name=``."""
    ensure_configured()
    initial = {"logger_name": name, **context} if name else context
    return structlog.get_logger(**initial)


def bind_context(**context: Any) -> None:
    """Attach context (e.g. ``program=``, ``output_dir=``) to every following log line."""
    structlog.contextvars.bind_contextvars(**{k: str(v) for k, v in context.items() if v is not None})


class _Bound:
    """The context manager of :func:`bound_context` (a class: it is entered on every compile)."""

    __slots__ = ("_context", "_tokens")

    def __init__(self, context: dict[str, Any]) -> None:
        self._context = {k: str(v) for k, v in context.items() if v is not None}
        self._tokens: Any = None

    def __enter__(self) -> None:
        self._tokens = structlog.contextvars.bind_contextvars(**self._context)

    def __exit__(self, *exc: object) -> None:
        structlog.contextvars.reset_contextvars(**self._tokens)


def bound_context(**context: Any) -> _Bound:
    """Attach context to log lines inside the block only."""
    return _Bound(context)


_debug_by_wrapper: dict[type, bool] = {}


def _debug_enabled() -> bool:
    """Would a debug line be written? (Asked once per configured wrapper class; one that cannot tell is
    taken to write it.)"""
    wrapper = structlog.get_config()["wrapper_class"]
    known = _debug_by_wrapper.get(wrapper)
    if known is None:
        try:
            known = bool(wrapper(None, processors=[], context={}).is_enabled_for(_stdlib_logging.DEBUG))
        except Exception:  # noqa: BLE001 - not a filtering logger: assume it writes debug lines
            known = True
        _debug_by_wrapper[wrapper] = known
    return known


class _Stage(_Bound):
    __slots__ = ("_log", "_start")

    def __init__(self, name: str, logger: Any | None, context: dict[str, Any]) -> None:
        super().__init__({"stage": name, **context})
        self._log = logger

    def __enter__(self) -> None:
        self._start = time.perf_counter()
        super().__enter__()
        if _debug_enabled():  # the loggers and both lines only when debug lines are written
            self._log = self._log or get_logger("pypto.stage")
            self._log.debug("stage start")
        else:
            self._log = None

    def __exit__(self, *exc: object) -> None:
        try:
            if self._log is not None:
                self._log.debug("stage done", duration_ms=round((time.perf_counter() - self._start) * 1000, 3))
        finally:
            super().__exit__(*exc)


def stage(name: str, logger: Any | None = None, **context: Any) -> _Stage:
    """Log a compile stage's start and duration at debug, with ``stage=<name>`` bound inside."""
    return _Stage(name, logger, context)


_LOG_METHODS = {"debug": "debug", "info": "info", "event": "info", "warn": "warning", "error": "error",
                "fatal": "critical"}


def _log_at(level: str, message: str) -> None:
    """One line through pypto's logger; an EVENT line is written at INFO and tagged ``event_kind=event``."""
    extra = {"event_kind": "event"} if level == "event" else {}
    getattr(get_logger("pypto"), _LOG_METHODS[level])(str(message), **extra)


def log_debug(message: str) -> None:
    """Upstream's ``pypto.log_debug``: one log line at DEBUG (shown under ``set_log_level(LogLevel.DEBUG)``)."""
    _log_at("debug", message)


def log_info(message: str) -> None:
    """One log line at INFO."""
    _log_at("info", message)


def log_warn(message: str) -> None:
    """One log line at WARN."""
    _log_at("warn", message)


def log_error(message: str) -> None:
    """One log line at ERROR."""
    _log_at("error", message)


def log_fatal(message: str) -> None:
    """One log line at FATAL (logged; like upstream's, it does not raise or exit)."""
    _log_at("fatal", message)


def log_event(message: str) -> None:
    """One log line at EVENT (upstream's level for milestones; written like INFO, tagged ``event_kind``)."""
    _log_at("event", message)
