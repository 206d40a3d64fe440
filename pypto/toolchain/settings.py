"""Typed settings: one object, resolved once at the API/CLI entry and passed down.

Each field maps to one ``PYPTO_*`` environment variable (``PTOAS_ROOT`` has no prefix). Precedence,
highest first: explicit argument > environment > config file (``--config FILE``, else ``pypto.toml``
in the working directory, else ``[tool.pypto]`` of ``pyproject.toml`` there) > default. Every value
remembers where it came from (:meth:`Settings.source_of`), so errors can name it. This is the only
module of pypto that reads ``os.environ``; code that starts subprocesses uses :func:`subprocess_env`.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, get_args, get_origin

from pydantic import AliasChoices, Field, PrivateAttr, ValidationError, field_validator
from pydantic_settings import (
    BaseSettings,
    InitSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

from pypto.errors import SettingsError
from pypto.toolchain import platforms
from pypto.toolchain.manifest import Manifest, latest_version, load_manifest

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


class _Recording(PydanticBaseSettingsSource):
    """Wraps a source and records, per field, the first (highest-priority) source that set it."""

    def __init__(self, settings_cls: type[BaseSettings], inner: PydanticBaseSettingsSource, label: str):
        super().__init__(settings_cls)
        self.inner = inner
        self.label = label

    def get_field_value(self, field: Any, field_name: str) -> tuple[Any, str, bool]:
        return self.inner.get_field_value(field, field_name)

    def __call__(self) -> dict[str, Any]:
        data = self.inner()
        record = _RECORD.get()
        if record is not None:
            for key in data:
                name = _ALIASES.get(key.upper(), key)
                record.setdefault(name, f"env {env_var(name)}" if self.label == "env" else self.label)
        return data


class Settings(BaseSettings):
    """Every knob of pypto. Fields map to ``PYPTO_<FIELD>`` environment variables."""

    model_config = SettingsConfigDict(
        env_prefix="PYPTO_",
        frozen=True,
        extra="forbid",
        env_ignore_empty=True,
        populate_by_name=True,
        validate_default=True,
    )

    prog_build_dir: Path | None = Field(None, description="Base dir of default output dirs (unset: build_output).")
    verify_level: VerifyLevel = Field("basic", description="IR verification: none | basic | roundtrip.")
    warning_level: WarningLevel = Field("pre_pipeline", description="Diagnostic phase gate (none silences).")
    log_level: LogLevel = Field("info", description="Log threshold (debug|info|warn|error|fatal|event|none).")
    compile_profiling: bool = Field(False, description="Write report/pipeline_profile.{txt,json}.")
    emit_pto_loc: bool = Field(True, description="Emit loc(...) source locations in .pto files.")
    codegen_max_workers: int | None = Field(None, ge=1, description="ptoas thread pool size (1 = sequential).")
    emit_debug_runner: bool = Field(True, description="Write debug/run.py into artifacts.")
    ptoas_root: str | None = Field(
        None,
        validation_alias=AliasChoices("PTOAS_ROOT", "ptoas_root"),
        description="A ptoas release dir to use instead of the pinned wheel (env PTOAS_ROOT).",
    )
    ascend_home_path: Path | None = Field(
        None,
        validation_alias=AliasChoices("ASCEND_HOME_PATH", "ascend_home_path"),
        description="CANN install dir for hardware platforms (env ASCEND_HOME_PATH).",
    )
    platform: str = Field(platforms.DEFAULT_PLATFORM, description="a2a3sim | a5sim | a2a3 | a5.")
    runtime: str = Field(platforms.DEFAULT_RUNTIME, description="tensormap_and_ringbuffer | host_build_graph.")
    toolchain: str = Field(default_factory=latest_version, description="Toolchain manifest version.")
    log_format: LogFormat = Field("auto", description="auto (console on a TTY, else JSON) | console | json.")
    cache_dir: Path = Field(default_factory=_default_cache_dir, description="Build and shim cache.")
    container_engine: ContainerEngine = Field("docker", description="Engine for --in-container: docker | podman.")
    container_image: str | None = Field(None, description="Image for --in-container (unset: from the manifest).")
    source_date_epoch: int | None = Field(
        None,
        ge=0,
        validation_alias=AliasChoices("SOURCE_DATE_EPOCH", "source_date_epoch"),
        description="Timestamp for reproducible image builds (env SOURCE_DATE_EPOCH).",
    )
    wheelhouse: Path | None = Field(None, description="Download cache of image wheels (unset: <checkout>/wheelhouse).")
    debian_mirror: str | None = Field(None, description="Debian mirror for debootstrap base images.")
    image_smoke_examples: str | None = Field(None, description="Comma list of examples the image smoke test compiles.")

    _sources: dict[str, str] = PrivateAttr(default_factory=dict)
    _config_file: Path | None = PrivateAttr(default=None)

    def __init__(self, **values: Any) -> None:
        record: dict[str, str] = {}
        token = _RECORD.set(record)
        try:
            super().__init__(**values)
        except ValidationError as exc:
            raise _wrap_validation_error(exc, record) from None
        finally:
            _RECORD.reset(token)
        self._sources = record
        self._config_file = _config_file()[0]
        self._check_agreement()

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        sources = [_Recording(settings_cls, init_settings, "argument"), _Recording(settings_cls, env_settings, "env")]
        config, table = _config_file()
        if config is not None:
            data = _read_config(config, table)
            sources.append(_Recording(settings_cls, InitSettingsSource(settings_cls, data), f"file {config}"))
        return tuple(sources)

    @field_validator(*_LOWERCASE, mode="before")
    @classmethod
    def _lower(cls, value: Any) -> Any:
        return value.strip().lower() if isinstance(value, str) else value

    @field_validator("platform")
    @classmethod
    def _platform(cls, value: str) -> str:
        if value not in platforms.PLATFORMS:
            raise ValueError(platforms.invalid_platform_text(value))
        return value

    @field_validator("runtime")
    @classmethod
    def _runtime(cls, value: str) -> str:
        if value not in platforms.RUNTIMES:
            raise ValueError(platforms.unknown_runtime_text(value))
        return value

    @field_validator("cache_dir", "prog_build_dir", "ascend_home_path", "wheelhouse")
    @classmethod
    def _expand(cls, value: Path | None) -> Path | None:
        return value.expanduser() if value is not None else None

    def _check_agreement(self) -> None:
        try:
            manifest = load_manifest(self.toolchain)
        except SettingsError as exc:
            src = self.source_of("toolchain")
            raise SettingsError(f"{exc.message} [toolchain from {src}]",
                                hint=platforms.fix_hint("toolchain", src, latest_version())) from None
        support = manifest.support
        platforms.check_supported(manifest.version, support.platforms, "platform", self.platform,
                                  self.source_of("platform"))
        platforms.check_supported(manifest.version, support.runtimes, "runtime", self.runtime,
                                  self.source_of("runtime"))

    def source_of(self, field: str) -> str:
        """``"argument"``, ``"env PYPTO_X"``, ``"file <path>"`` or ``"default"``."""
        if field not in type(self).model_fields:
            raise KeyError(field)
        return self._sources.get(field, "default")

    @property
    def config_file(self) -> Path | None:
        """The config file that was read, if any."""
        return self._config_file

    @property
    def manifest(self) -> Manifest:
        """The selected toolchain manifest."""
        return load_manifest(self.toolchain)

    @property
    def platform_info(self) -> platforms.PlatformInfo:
        """Facts about the selected platform."""
        return platforms.PLATFORMS[self.platform]

    @property
    def backend(self) -> str:
        """``Ascend910B`` for ``a2a3*``, ``Ascend950`` for ``a5*``."""
        return self.platform_info.backend

    @property
    def output_base(self) -> Path:
        """Where default output dirs go: ``prog_build_dir`` or ``build_output``."""
        return self.prog_build_dir or Path("build_output")

    def explicit_arguments(self) -> dict[str, Any]:
        """The values that came from arguments (to re-resolve with more overrides)."""
        return {k: getattr(self, k) for k, src in self._sources.items() if src == "argument"}

    def replace(self, **overrides: Any) -> Settings:
        """A new, re-validated Settings with more explicit arguments (None values are ignored)."""
        return resolve_settings(config_file=self._config_file, **{**self.explicit_arguments(), **overrides})

    def describe(self) -> list[dict[str, Any]]:
        """One row per field: name, value, source, environment variable (for ``--json`` dumps)."""
        return [
            {"name": name, "value": _jsonable(getattr(self, name)), "source": self.source_of(name),
             "env": env_var(name)}
            for name in type(self).model_fields
        ]


def _jsonable(value: Any) -> Any:
    return str(value) if isinstance(value, Path) else value


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


def _wrap_validation_error(exc: ValidationError, record: Mapping[str, str]) -> SettingsError:
    lines, first = [], None
    for err in exc.errors():
        field = _ALIASES.get(str(err["loc"][0]).upper(), str(err["loc"][0])) if err["loc"] else "settings"
        source = record.get(field, "default")
        reason = str(err.get("ctx", {}).get("error", "")) or err["msg"]
        if err["type"] == "extra_forbidden":
            reason = f"Unknown setting '{field}'"
        elif "error" not in err.get("ctx", {}):
            reason = f"Invalid value {err.get('input')!r} for setting '{field}': {reason}"
        lines.append(f"{reason} [{field} from {source}]")
        first = first or (field, source)
    field, source = first or ("settings", "default")
    example = _example(field)
    err = SettingsError("\n".join(lines), hint=_validation_hint(field, source, example))
    err.setting, err.source = field, source  # type: ignore[attr-defined]
    return err


def _example(field: str) -> str:
    info = Settings.model_fields.get(field)
    if info is None:
        return "<value>"
    choices = get_args(info.annotation)
    if get_origin(info.annotation) is Literal:
        return "|".join(choices)
    return _EXAMPLES.get(field, str(info.default))


def _validation_hint(field: str, source: str, example: str) -> str:
    if field not in Settings.model_fields:
        known = ", ".join(Settings.model_fields)
        return f"remove '{field}' from {source.removeprefix('file ')}; known settings: {known}"
    return platforms.fix_hint(field, source, example)


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
        return Settings(**args)
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
