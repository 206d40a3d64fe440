"""Typed settings: one object, resolved once at the API/CLI entry and passed down.

Each field maps to one ``PYPTO_*`` environment variable (``PTOAS_ROOT`` has no prefix). Precedence,
highest first: explicit argument > environment > config file (``--config FILE``, else ``pypto.toml``
in the working directory, else ``[tool.pypto]`` of ``pyproject.toml`` there) > default. Every value
remembers where it came from (:meth:`Settings.source_of`), so errors can name it. This is the only
module of pypto that reads ``os.environ`` (with ``settings_sources``, the resolution it shares with the
model); code that starts subprocesses uses :func:`subprocess_env`.

Every setting is declared once, in ``settings_fields.FIELDS``. The pydantic model (:class:`Settings`,
in ``settings_model``) is imported on first use; the run path's light readers (:func:`cache_dir`,
:func:`jit_cache_enabled`, :func:`tool_timeout`, ...) resolve one field through the same
``settings_sources.resolve_field`` and parser without it, so they return what the model holds.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pypto.toolchain import platforms
from pypto.toolchain import settings_sources as _sources
from pypto.toolchain.settings_fields import (
    FIELDS,
    OUTPUT_BASE,
    RUN_MEMORY_FRACTION,
    ContainerEngine,
    LogFormat,
    LogLevel,
    VerifyLevel,
    WarningLevel,
)
from pypto.toolchain.settings_sources import env_var, resolve_field, resolve_with

if TYPE_CHECKING:
    from pypto.toolchain.settings_model import Settings

__all__ = ["ContainerEngine", "LogFormat", "LogLevel", "Settings", "TerminalEnv", "VerifyLevel", "WarningLevel",
           "cache_dir", "cache_max_mb", "compile_fingerprint", "env_var", "ptoas_root", "jit_cache_enabled", "output_base", "override",
           "physical_memory_bytes", "resolve_settings", "upstream_env", "export_upstream_env", "run_max_bytes", "subprocess_env", "terminal_env", "tool_timeout"]
TOOL_TIMEOUTS = ("ptoas_timeout_s", "build_timeout_s", "docker_timeout_s")  # the settings of tool deadlines


def resolve_settings(config_file: str | Path | None = None, **overrides: Any) -> Settings:
    """Resolve settings once at an entry point: arguments > env > config file > defaults.

    Args:
        config_file: a ``pypto.toml`` (top-level keys) or ``pyproject.toml`` (``[tool.pypto]``);
            default: ``pypto.toml`` or ``pyproject.toml`` in the working directory.
        **overrides: explicit arguments by field name; None means "not given".

    Raises:
        SettingsError: naming the offending value, its source and the fix.
    """
    return resolve_with(_model(), config_file, **overrides)


@contextmanager
def override(**overrides: Any) -> Iterator[Settings]:
    """Within the block, :func:`resolve_settings` treats ``overrides`` as explicit arguments (tests)."""
    token = _sources.OVERRIDES.set({**_sources.OVERRIDES.get(), **overrides})
    try:
        yield resolve_settings()
    finally:
        _sources.OVERRIDES.reset(token)


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


def engine_env() -> dict[str, str]:
    """The variables that locate a container engine's API socket (``DOCKER_HOST``, podman's
    ``CONTAINER_HOST``, ``XDG_RUNTIME_DIR``), those that are set and non-empty."""
    return {k: os.environ[k] for k in ("CONTAINER_HOST", "DOCKER_HOST", "XDG_RUNTIME_DIR") if os.environ.get(k)}


def _model() -> type[Settings]:
    from pypto.toolchain.settings_model import Settings

    return Settings


def __getattr__(name: str) -> Any:
    if name == "Settings":  # loads pydantic on first use
        return _model()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# PYPTO_* variables read outside Settings: opt-in test switches, the CI workflow's ref (docker/README.md)
# and upstream's runtime switches (UPSTREAM_ENV)
UPSTREAM_ENV = frozenset({"PYPTO_RUNTIME_LOG", "PYPTO_RUNTIME_LOG_SYNC", "PYPTO_REBUILD_FROM_PTO", "PTO_ISA_ROOT"})
OTHER_ENV = frozenset({"PYPTO_EXP_SWEEP", "PYPTO_UPSTREAM_REFERENCE", "PYPTO_SIMPLER_ROOT", "PYPTO_REF"}) | UPSTREAM_ENV


def upstream_env(name: str) -> str | None:
    """One of upstream's runtime variables (``PYPTO_RUNTIME_LOG``, ``PYPTO_REBUILD_FROM_PTO``, ...), or None."""
    if name not in UPSTREAM_ENV:
        raise KeyError(f"{name} is not one of upstream's runtime variables: {sorted(UPSTREAM_ENV)}")
    return os.environ.get(name)


def export_upstream_env(name: str, value: str) -> None:
    """Set one of upstream's variables for this process and its children (``PTO_ISA_ROOT``)."""
    if name not in UPSTREAM_ENV:
        raise KeyError(f"{name} is not one of upstream's runtime variables: {sorted(UPSTREAM_ENV)}")
    os.environ[name] = value
_env_checked: list[bool] = []


def unknown_env(settings: Settings) -> list[tuple[str, str | None]]:
    """``PYPTO_*`` environment variables that are no setting: (name, the closest setting's variable or None)."""
    from difflib import get_close_matches

    known = {env_var(f).removeprefix("PYPTO_"): env_var(f) for f in type(settings).model_fields}
    names = {k.upper() for k in os.environ if k.upper().startswith("PYPTO_")} - set(known.values()) - OTHER_ENV
    # compared without the common prefix, which would make every name look alike
    close = {n: get_close_matches(n.removeprefix("PYPTO_"), sorted(known), n=1, cutoff=0.7) for n in names}
    return [(n, known[close[n][0]] if close[n] else None) for n in sorted(names)]


def warn_unknown_env(settings: Settings) -> None:
    """Warn once per process about each unknown ``PYPTO_*`` variable (a typo is otherwise silently ignored)."""
    if _env_checked:
        return
    _env_checked.append(True)
    from pypto.toolchain.logging import get_logger

    for name, close in unknown_env(settings):
        hint = f"did you mean {close}?" if close else "`pypto settings` lists the known ones"
        get_logger("pypto.settings").warning(
            f"environment variable {name} is not a pypto setting and is ignored; {hint}", variable=name)


# -- light readers (no pydantic): the run path needs a few values only -------------------------------
# Each is settings_sources.resolve_field: the resolution and parser the model uses, so each returns
# what resolve_settings() would hold and raises the same SettingsError for a bad value.


def cache_dir() -> Path:
    """``Settings().cache_dir`` (PYPTO_CACHE_DIR, config file, XDG default), absolute."""
    return Path(resolve_field("cache_dir"))


def ptoas_root() -> str | None:
    """``Settings().ptoas_root`` (``PTOAS_ROOT``, config file)."""
    root: str | None = resolve_field("ptoas_root")
    return root


def output_base() -> Path:
    """``Settings().output_base``: ``prog_build_dir``, else ``build_output``."""
    base: Path | None = resolve_field("prog_build_dir")
    return base or OUTPUT_BASE


def jit_cache_enabled() -> bool:
    """``Settings().jit_cache`` (PYPTO_JIT_CACHE, default on)."""
    return bool(resolve_field("jit_cache"))


def cache_max_mb() -> int:
    """``Settings().cache_max_mb`` (PYPTO_CACHE_MAX_MB): the ptoas output cache's bound in MB (0: off)."""
    return int(resolve_field("cache_max_mb"))


def run_hw_on_sim() -> bool:
    """``Settings().run_hw_on_sim`` (PYPTO_RUN_HW_ON_SIM, default off).

    When on, a run configured for a hardware platform (``RunConfig(platform="a2a3")``) runs on the
    simulator of the same architecture instead, with a warning; see ``RunConfig``.
    """
    return bool(resolve_field("run_hw_on_sim"))


def tool_timeout(field: str) -> float:
    """``Settings().<field>`` of a tool deadline (``ptoas_timeout_s``, ``build_timeout_s``,
    ``docker_timeout_s``)."""
    if field not in TOOL_TIMEOUTS:
        raise KeyError(f"{field} is not a tool deadline: {sorted(TOOL_TIMEOUTS)}")
    return float(resolve_field(field))


def run_max_bytes() -> int:
    """``Settings().run_max_bytes``, or (unset) half of the physical memory: what a CLI run may allocate."""
    limit: int | None = resolve_field("run_max_bytes")
    return limit if limit is not None else int(physical_memory_bytes() * RUN_MEMORY_FRACTION)


def physical_memory_bytes() -> int:
    """Physical memory of this machine (``sysconf``), 8 GiB where it cannot be read."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (OSError, ValueError, AttributeError):
        return 8 << 30


def run_platform() -> str | None:
    """``Settings().run_platform`` (PYPTO_RUN_PLATFORM, default unset): the platform of a ``RunConfig()``
    that names none (upstream's default is a2a3sim)."""
    platform: str | None = resolve_field("run_platform")
    return platform


def compile_fingerprint() -> str:
    """Digest of every raw setting that may change what a compile writes (for on-disk compile caches).

    Arguments, ``PYPTO_*``/``PTOAS_ROOT`` environment variables and the config file, minus run-only
    settings; any change means a different digest (never a stale hit).
    """
    known = {env: f for f, env in platforms.UNPREFIXED_ENV.items()}
    env = sorted((k, v) for k, v in _sources.upper_env().items()
                 if (k.startswith("PYPTO_") or k in known)
                 and _compile_input(known.get(k, k.removeprefix("PYPTO_").lower())))
    config, table = _sources.config_file()
    data = _sources.read_config(config, table) if config is not None else {}
    parts = (env, sorted((k, repr(v)) for k, v in data.items() if _compile_input(k)),
             sorted((k, repr(v)) for k, v in _sources.OVERRIDES.get().items() if _compile_input(k) and v is not None))
    return hashlib.sha256(repr(parts).encode()).hexdigest()


def _compile_input(name: str) -> bool:
    """May setting ``name`` change what a compile writes? (An unknown name may: never a stale hit.)"""
    spec = FIELDS.get(name)
    return spec is None or spec.compile_input
