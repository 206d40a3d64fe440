"""Typed settings: one object, resolved once at the API/CLI entry and passed down.

Each field maps to one ``PYPTO_*`` environment variable (``PTOAS_ROOT`` has no prefix). Precedence,
highest first: explicit argument > environment > config file (``--config FILE``, else ``pypto.toml``
in the working directory, else ``[tool.pypto]`` of ``pyproject.toml`` there) > default. Every value
remembers where it came from (:meth:`Settings.source_of`), so errors can name it. This is the only
module of pypto that reads ``os.environ``; code that starts subprocesses uses :func:`subprocess_env`.

The pydantic model (:class:`Settings`, in ``settings_model``) is imported on first use; the run path
needs only :func:`cache_dir`, :func:`output_base`, :func:`jit_cache_enabled` and
:func:`compile_fingerprint`, which resolve with the same precedence without it.
"""

from __future__ import annotations

import hashlib
import os
import tomllib
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pypto.errors import SettingsError
from pypto.toolchain import platforms

if TYPE_CHECKING:
    from pypto.toolchain.settings_model import Settings

VerifyLevel = Literal["none", "basic", "roundtrip"]
WarningLevel = Literal["none", "pre_pipeline", "post_pass", "post_pipeline"]
LogLevel = Literal["debug", "info", "warn", "warning", "error", "fatal", "event", "none"]
LogFormat = Literal["auto", "console", "json"]
ContainerEngine = Literal["docker", "podman"]

_RECORD: ContextVar[dict[str, str] | None] = ContextVar("pypto_settings_record", default=None)
_CONFIG: ContextVar[Path | None] = ContextVar("pypto_settings_config", default=None)
_OVERRIDES: ContextVar[dict[str, Any]] = ContextVar("pypto_settings_overrides", default={})  # noqa: B039
_ALIASES = {env: field for field, env in platforms.UNPREFIXED_ENV.items()}
_EXAMPLES = {"codegen_max_workers": "4", "prog_build_dir": "build_output", "ptoas_root": "<ptoas release dir>",
             "cache_dir": "~/.cache/pypto", "container_image": "<image reference>"}
_LOWERCASE = ("verify_level", "warning_level", "log_level", "log_format", "container_engine")


def _default_cache_dir() -> Path:
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "pypto"


def env_var(field: str) -> str:
    """The environment variable of a field, e.g. ``platform`` -> ``PYPTO_PLATFORM``."""
    return platforms.UNPREFIXED_ENV.get(field, f"PYPTO_{field.upper()}")


def _config_file() -> tuple[Path | None, bool]:
    """The config file to read and whether it is a pyproject.toml (read its ``[tool.pypto]``)."""
    explicit = _CONFIG.get()
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
    try:
        return "pypto" in tomllib.loads(path.read_text()).get("tool", {})
    except (OSError, tomllib.TOMLDecodeError):
        return False


def _read_config(path: Path, pyproject: bool) -> dict[str, Any]:
    try:
        data = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise SettingsError(f"Cannot read config file {path}: {exc}",
                            hint="fix the TOML syntax, or pass another file with --config") from None
    return data.get("tool", {}).get("pypto", {}) if pyproject else data


def resolve_settings(config_file: str | Path | None = None, **overrides: Any) -> Settings:
    """Resolve settings once at an entry point: arguments > env > config file > defaults.

    Args:
        config_file: a ``pypto.toml`` (top-level keys) or ``pyproject.toml`` (``[tool.pypto]``);
            default: ``pypto.toml`` or ``pyproject.toml`` in the working directory.
        **overrides: explicit arguments by field name; None means "not given".

    Raises:
        SettingsError: naming the offending value, its source and the fix.
    """
    args = {**_OVERRIDES.get(), **{k: v for k, v in overrides.items() if v is not None}}
    path = Path(config_file).expanduser() if config_file is not None else None
    if path is not None and not path.is_file():
        raise SettingsError(f"Config file '{path}' does not exist",
                            hint="pass an existing pypto.toml or pyproject.toml to --config")
    token = _CONFIG.set(path)
    try:
        return _model()(**args)
    finally:
        _CONFIG.reset(token)


@contextmanager
def override(**overrides: Any) -> Iterator[Settings]:
    """Within the block, :func:`resolve_settings` treats ``overrides`` as explicit arguments (tests)."""
    token = _OVERRIDES.set({**_OVERRIDES.get(), **overrides})
    try:
        yield resolve_settings()
    finally:
        _OVERRIDES.reset(token)


def subprocess_env(extra: Mapping[str, str] | None = None, drop: tuple[str, ...] = ()) -> dict[str, str]:
    """The environment for a child process (g++, ptoas, docker): ours, minus ``drop``, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env.update(extra or {})
    return env


@dataclass(frozen=True, slots=True)
class TerminalEnv:
    """Colour and CI hints from the environment (``NO_COLOR``, ``FORCE_COLOR``, ``CI``)."""

    no_color: bool
    force_color: bool
    ci: bool


def terminal_env() -> TerminalEnv:
    """Read the terminal-related environment variables."""
    env = os.environ
    return TerminalEnv(no_color=bool(env.get("NO_COLOR")), force_color=bool(env.get("FORCE_COLOR")),
                       ci=bool(env.get("CI")))


def _model() -> type[Settings]:
    from pypto.toolchain.settings_model import Settings

    return Settings


def __getattr__(name: str) -> Any:
    if name == "Settings":  # loads pydantic on first use
        return _model()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# -- light resolution (no pydantic): the run path needs a few values only ----------------------------
_UNSET = object()
_TRUE = frozenset({"1", "true", "t", "yes", "y", "on"})
_FALSE = frozenset({"0", "false", "f", "no", "n", "off"})
# Settings that cannot change what a compile writes (left out of compile_fingerprint)
_RUN_ONLY = frozenset({"cache_dir", "jit_cache", "log_level", "log_format", "verify_level", "warning_level",
                       "codegen_max_workers", "container_engine", "container_image", "source_date_epoch",
                       "wheelhouse", "debian_mirror", "image_smoke_examples", "ascend_home_path"})


def _upper_env() -> dict[str, str]:
    return {k.upper(): v for k, v in os.environ.items() if v}  # case-insensitive, empty ignored (as Settings)


def _light_value(field: str) -> Any:
    """A field's raw value by Settings' precedence (argument > env > config file), or ``_UNSET``."""
    args = _OVERRIDES.get()
    if args.get(field) is not None:
        return args[field]
    env = _upper_env().get(env_var(field))
    if env is not None:
        return env
    config, table = _config_file()
    if config is not None:
        return _read_config(config, table).get(field, _UNSET)
    return _UNSET


def cache_dir() -> Path:
    """``Settings().cache_dir`` without importing pydantic: PYPTO_CACHE_DIR, config file, XDG default."""
    value = _light_value("cache_dir")
    if value is _UNSET:
        return _default_cache_dir()
    if not isinstance(value, str | os.PathLike):
        return Path(resolve_settings().cache_dir)  # let validation name the bad value and its source
    return Path(value).expanduser()


def output_base() -> Path:
    """``Settings().output_base`` (``prog_build_dir``, else ``build_output``) without importing pydantic."""
    value = _light_value("prog_build_dir")
    if value is _UNSET or value is None:
        return Path("build_output")
    if not isinstance(value, str | os.PathLike):
        return resolve_settings().output_base
    return Path(value).expanduser()


def jit_cache_enabled() -> bool:
    """``Settings().jit_cache`` (PYPTO_JIT_CACHE, default on) without importing pydantic."""
    value = _light_value("jit_cache")
    if value is _UNSET:
        return True
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in _TRUE or text in _FALSE:
        return text in _TRUE
    return bool(resolve_settings().jit_cache)  # raises a SettingsError naming the value and its source


def run_hw_on_sim() -> bool:
    """``Settings().run_hw_on_sim`` (PYPTO_RUN_HW_ON_SIM, default off) without importing pydantic.

    When on, a run configured for a hardware platform (``RunConfig(platform="a2a3")``) runs on the
    simulator of the same architecture instead, with a warning; see ``RunConfig``.
    """
    value = _light_value("run_hw_on_sim")
    if value is _UNSET:
        return False
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in _TRUE or text in _FALSE:
        return text in _TRUE
    return bool(resolve_settings().run_hw_on_sim)  # raises a SettingsError naming the value and its source


def compile_fingerprint() -> str:
    """Digest of every raw setting that may change what a compile writes (for on-disk compile caches).

    Arguments, ``PYPTO_*``/``PTOAS_ROOT`` environment variables and the config file, minus run-only
    settings; any change means a different digest (never a stale hit).
    """
    known = {env: f for f, env in platforms.UNPREFIXED_ENV.items()}
    env = sorted((k, v) for k, v in _upper_env().items()
                 if (k.startswith("PYPTO_") or k in known)
                 and known.get(k, k.removeprefix("PYPTO_").lower()) not in _RUN_ONLY)
    config, table = _config_file()
    data = _read_config(config, table) if config is not None else {}
    parts = (env, sorted((k, repr(v)) for k, v in data.items() if k not in _RUN_ONLY),
             sorted((k, repr(v)) for k, v in _OVERRIDES.get().items() if k not in _RUN_ONLY and v is not None))
    return hashlib.sha256(repr(parts).encode()).hexdigest()
