"""The one resolution of settings: arguments > environment > config file > defaults.

:func:`raw_values` finds each given value and where it came from; :func:`resolve_field` turns one into
its value with the parser of :mod:`pypto.toolchain.settings_fields` (the light readers of
:mod:`pypto.toolchain.settings`), and the pydantic model (:mod:`pypto.toolchain.settings_model`)
builds itself from :func:`raw_values` and the same parser. This file imports neither of them.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from contextvars import ContextVar
from pathlib import Path
from typing import Any, TypeVar

from pypto.errors import SettingsError
from pypto.toolchain import platforms
from pypto.toolchain.settings_fields import (
    FIELDS,
    ContainerEngine,
    LogFormat,
    LogLevel,
    VerifyLevel,
    WarningLevel,
    parse,
    settings_error,
)

__all__ = ["ContainerEngine", "LogFormat", "LogLevel", "VerifyLevel", "WarningLevel"]

T = TypeVar("T")

CONFIG: ContextVar[Path | None] = ContextVar("pypto_settings_config", default=None)
OVERRIDES: ContextVar[dict[str, Any]] = ContextVar("pypto_settings_overrides", default={})  # noqa: B039
ALIASES = {env: field for field, env in platforms.UNPREFIXED_ENV.items()}


def default_of(field: str) -> Any:
    """The default of a setting (a factory's default is computed from the environment now)."""
    spec = FIELDS[field]
    return spec.factory(os.environ) if spec.factory is not None else spec.default


def upper_env() -> dict[str, str]:
    """The environment with upper-cased names, empty values left out (both mean "not set")."""
    return {k.upper(): v for k, v in os.environ.items() if v}


def raw_values(arguments: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """Every value given for a setting, unparsed, and its source (``"argument"``, ``"env PYPTO_X"``,
    ``"file <path>"``), the highest-precedence source winning: arguments (None: not given) >
    environment > config file. A setting given nowhere is absent (its default applies). Unknown names
    among the arguments and the config file's keys are kept, for the caller to reject."""
    values: dict[str, Any] = {}
    sources: dict[str, str] = {}
    config, pyproject = config_file()
    if config is not None:
        for key, value in read_config(config, pyproject).items():
            name = ALIASES.get(key, key)
            values[name], sources[name] = value, f"file {config}"
    env = upper_env()
    for name in FIELDS:
        if (value := env.get(env_var(name))) is not None:
            values[name], sources[name] = value, f"env {env_var(name)}"
    for key, value in arguments.items():
        if value is not None:
            name = ALIASES.get(key, key)
            values[name], sources[name] = value, "argument"
    return values, sources


def resolve_field(field: str) -> Any:
    """One setting's value, resolved and parsed exactly as :func:`resolve_settings` would, without
    the model (no pydantic import: the run path's readers). A bad value raises the same SettingsError."""
    values, sources = raw_values(OVERRIDES.get())
    raw, source = (values[field], sources[field]) if field in values else (default_of(field), "default")
    try:
        return parse(field, raw)
    except ValueError as exc:
        raise settings_error([(field, source, str(exc))]) from None


def env_var(field: str) -> str:
    """The environment variable of a field, e.g. ``platform`` -> ``PYPTO_PLATFORM``."""
    return platforms.UNPREFIXED_ENV.get(field, f"PYPTO_{field.upper()}")


def config_file() -> tuple[Path | None, bool]:
    """The config file to read and whether it is a pyproject.toml (read its ``[tool.pypto]``)."""
    explicit = CONFIG.get()
    if explicit is not None:
        return explicit, explicit.name == "pyproject.toml"
    local = Path.cwd() / "pypto.toml"
    if local.is_file():
        return local, False
    pyproject = Path.cwd() / "pyproject.toml"
    if pyproject.is_file() and _has_pypto_table(pyproject):
        return pyproject, True
    return None, False


def _has_pypto_table(path: Path) -> bool:
    """Does this pyproject.toml have a ``[tool.pypto]`` table? A malformed one is a SettingsError, as a
    malformed pypto.toml is: it may hold settings that would otherwise be silently ignored."""
    tool = _load_toml(path).get("tool", {})
    return isinstance(tool, dict) and "pypto" in tool


def _load_toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_bytes().decode("utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        what = "it is not UTF-8 text" if isinstance(exc, UnicodeDecodeError) else str(exc)
        raise SettingsError(f"Cannot read config file {path}: {what}",
                            hint="fix the TOML syntax, or pass another file with --config") from None


def read_config(path: Path, pyproject: bool) -> dict[str, Any]:
    data = _load_toml(path)
    tool = data.get("tool", {})
    table = (tool.get("pypto", {}) if isinstance(tool, dict) else {}) if pyproject else data
    if not isinstance(table, dict):
        raise SettingsError(f"Cannot read config file {path}: [tool.pypto] is not a table",
                            hint="write the settings as keys of a [tool.pypto] table")
    return table


def resolve_with(model: type[T], config_file: str | Path | None = None, **overrides: Any) -> T:
    """Build ``model`` with arguments > env > config file > defaults (see ``settings.resolve_settings``).

    The model is frozen, so a resolution is reused while everything it read is unchanged: the same
    arguments, environment, working directory and config files (path, size and mtime), and whatever
    the model's ``resolution_inputs()`` classmethod reports (the manifest directory). Anything else (a
    changed variable, an edited ``pypto.toml``, another directory) resolves afresh.
    """
    args = {**OVERRIDES.get(), **{k: v for k, v in overrides.items() if v is not None}}
    path = Path(config_file).expanduser() if config_file is not None else None
    if path is not None and not path.is_file():
        raise SettingsError(f"Config file '{path}' does not exist",
                            hint="pass an existing pypto.toml or pyproject.toml to --config")
    key = _resolution_key(model, path, args)
    if key is not None and (hit := _RESOLVED.get(key)) is not None:
        return hit
    token = CONFIG.set(path)
    try:
        value = model(**args)
    finally:
        CONFIG.reset(token)
    if key is not None:
        if len(_RESOLVED) >= _RESOLVED_MAX:
            _RESOLVED.pop(next(iter(_RESOLVED)))
        _RESOLVED[key] = value
    return value


_RESOLVED: dict[tuple[Any, ...], Any] = {}  # resolution key -> frozen settings (oldest first)
_RESOLVED_MAX = 32


def _file_state(path: str | Path) -> tuple[str, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return os.fspath(path), st.st_size, st.st_mtime_ns


# the environment part of the key: re-sorted only when os.environ changed (a C-level dict compare of
# the raw bytes table; a mapping without one is read every time)
_env_seen: list[Any] = [None, ()]


def _env_items() -> tuple[tuple[str, str], ...]:
    raw = getattr(os.environ, "_data", None)
    if raw is not None and raw == _env_seen[0]:
        return _env_seen[1]
    items = tuple(sorted(os.environ.items()))
    if raw is not None:
        _env_seen[:] = [dict(raw), items]
    return items


def _resolution_key(model: type, path: Path | None, args: dict[str, Any]) -> tuple[Any, ...] | None:
    """Everything a resolution reads, as a hashable key; None when an argument is not hashable."""
    cwd = os.getcwd()
    files = (_file_state(path),) if path is not None else (
        _file_state(os.path.join(cwd, "pypto.toml")), _file_state(os.path.join(cwd, "pyproject.toml")))
    extra = getattr(model, "resolution_inputs", None)  # what else the model reads (its manifests)
    key = (model, cwd, files, _env_items(), tuple(sorted(args.items(), key=str)) if args else (),
           extra() if extra is not None else None)
    try:
        hash(key)
    except TypeError:
        return None
    return key
