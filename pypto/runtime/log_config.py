"""Upstream's runtime log threshold: :func:`configure_log`, :func:`current_level` (``PYPTO_RUNTIME_LOG``).

The threshold is a Python ``logging`` number; names are ``debug`` (10), ``v9``..``v0`` (10..19, more
verbose first), ``info`` (20), ``timing`` (25), ``warn``/``warning`` (30), ``error`` (40) and ``null``
(no output, 60). It governs the simulated runtime's own stderr lines (``[pto-sim] WARN: ...``, and an
orchestration's ``rt_log_*`` calls): at or below ``debug`` it prints DEBUG lines, at or below ``info``
INFO and TIMING lines, at or below ``warn`` WARN lines, at or below ``error`` ERROR lines, above that
none. The default is ``warn``. ``sync_pypto=True`` also moves pypto's own log level
(:func:`pypto.set_log_level`) to the same band. The environment variable ``PYPTO_RUNTIME_LOG`` sets
the threshold when ``pypto.runtime`` is first imported (``PYPTO_RUNTIME_LOG_SYNC=1`` adds the sync).
"""

from __future__ import annotations

_NAMES = {"debug": 10, "info": 20, "timing": 25, "warn": 30, "warning": 30, "error": 40, "null": 60,
          **{f"v{n}": 19 - n for n in range(10)}}
_DEFAULT = 30
_state = {"level": _DEFAULT, "configured": False}


def parse_level(level: int | str) -> int:
    """The ``logging`` threshold of a level name or number (ValueError naming the accepted names)."""
    if isinstance(level, bool) or not isinstance(level, int | str):
        raise ValueError(f"log level must be an int or a name, got {level!r}")
    if isinstance(level, int):
        return level
    text = level.strip().lower()
    if text.lstrip("-").isdigit():
        return int(text)
    if text not in _NAMES:
        raise ValueError(f"unknown runtime log level {level!r}; use one of {', '.join(_NAMES)} or a number")
    return _NAMES[text]


def configure_log(level: int | str, *, sync_pypto: bool = False) -> None:
    """Set the runtime log threshold (and, with ``sync_pypto``, pypto's own level to the same band)."""
    threshold = parse_level(level)
    _state["level"], _state["configured"] = threshold, True
    if sync_pypto:
        from pypto.toolchain.logging import LogLevel, set_log_level

        bands = ((10, LogLevel.DEBUG), (20, LogLevel.INFO), (30, LogLevel.WARN), (40, LogLevel.ERROR))
        set_log_level(next((lv for limit, lv in bands if threshold <= limit), LogLevel.NONE))


def current_level() -> int:
    """The runtime log threshold in effect (a ``logging`` number)."""
    return int(_state["level"])


def sim_log_level() -> int:
    """The simulated runtime's level for the threshold: 3 debug, 2 info, 1 warn, 0 error, -1 none."""
    threshold = current_level()
    return next((sim for limit, sim in ((10, 3), (25, 2), (30, 1), (40, 0)) if threshold <= limit), -1)


def _ensure_configured() -> None:
    """Apply ``PYPTO_RUNTIME_LOG`` once (an explicit :func:`configure_log` call wins)."""
    if _state["configured"]:
        return
    _state["configured"] = True
    from pypto.toolchain.settings import upstream_env

    raw = upstream_env("PYPTO_RUNTIME_LOG")
    if raw:
        configure_log(raw, sync_pypto=upstream_env("PYPTO_RUNTIME_LOG_SYNC") == "1")
