"""The pydantic model behind :mod:`pypto.toolchain.settings` (imported on first use of ``Settings``).

Importing pydantic costs a noticeable part of a second, so the light helpers (``cache_dir()``,
``jit_cache_enabled()``, ``subprocess_env()``) live in ``settings`` and this module loads only when a
full :class:`Settings` is resolved. Only ``settings`` reads ``os.environ`` itself; the environment
source of pydantic-settings reads it here on its behalf.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, get_args, get_origin

from pydantic import AliasChoices, Field, PrivateAttr, ValidationError, field_validator
from pydantic_settings import (
    BaseSettings,
    InitSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

from pypto.errors import SettingsError, ToolchainError
from pypto.toolchain import platforms
from pypto.toolchain.manifest import Manifest, latest_version, load_manifest, manifest_states
from pypto.toolchain.settings_sources import (
    ALIASES,
    CACHE_MAX_MB,
    EXAMPLES,
    LOWERCASE,
    RECORD,
    TOOL_TIMEOUTS,
    ContainerEngine,
    LogFormat,
    LogLevel,
    VerifyLevel,
    WarningLevel,
    config_file,
    default_cache_dir,
    env_var,
    read_config,
    resolve_with,
)


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
        record = RECORD.get()
        if record is not None:
            for key in data:
                name = ALIASES.get(key.upper(), key)
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
    file_prefix_map: str | None = Field(
        None, description="OLD=NEW[;OLD=NEW]: rewrite source paths recorded in artifacts (gcc -ffile-prefix-map).")
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
    cache_dir: Path = Field(default_factory=default_cache_dir, description="Build and shim cache.")
    jit_cache: bool = Field(True, description="Reuse @pl.jit compiles across processes (<cache_dir>/jit).")
    cache_max_mb: int = Field(CACHE_MAX_MB, ge=0, description="MB the ptoas output cache (<cache_dir>/ptoas-cpp) "
                              "may hold; least recently used entries go first (0: no ptoas cache).")
    run_hw_on_sim: bool = Field(False, description="Run RunConfig(platform='a2a3'|'a5') on a2a3sim|a5sim, warning.")
    run_platform: str | None = Field(None, description="Platform of a RunConfig() given none (unset: a2a3sim).")
    ptoas_timeout_s: float = Field(TOOL_TIMEOUTS["ptoas_timeout_s"], gt=0,
                                   description="Seconds one ptoas run may take before it is killed.")
    build_timeout_s: float = Field(TOOL_TIMEOUTS["build_timeout_s"], gt=0,
                                   description="Seconds one g++ run (kernel, runtime) may take before it is killed.")
    docker_timeout_s: float = Field(TOOL_TIMEOUTS["docker_timeout_s"], gt=0,
                                    description="Seconds one container-engine request may take.")
    run_max_bytes: int | None = Field(
        None, ge=1, description="Bytes of generated inputs/outputs a CLI run may allocate (unset: half of RAM).")
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
        token = RECORD.set(record)
        try:
            super().__init__(**values)
        except ValidationError as exc:
            raise _wrap_validation_error(exc, record) from None
        finally:
            RECORD.reset(token)
        self._sources = record
        self._config_file = config_file()[0]
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
        config, table = config_file()
        if config is not None:
            data = read_config(config, table)
            sources.append(_Recording(settings_cls, InitSettingsSource(settings_cls, data), f"file {config}"))
        return tuple(sources)

    @field_validator(*LOWERCASE, mode="before")
    @classmethod
    def _lower(cls, value: Any) -> Any:
        return value.strip().lower() if isinstance(value, str) else value

    @field_validator("run_platform")
    @classmethod
    def _run_platform(cls, value: str | None) -> str | None:
        if value is not None and value not in platforms.PLATFORMS:
            raise ValueError(platforms.invalid_platform_text(value))
        return value

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

    @field_validator("prog_build_dir")
    @classmethod
    def _expand(cls, value: Path | None) -> Path | None:
        return value.expanduser() if value is not None else None

    @field_validator("cache_dir", "ascend_home_path", "wheelhouse")
    @classmethod
    def _absolute(cls, value: Path | None) -> Path | None:
        # resolved against the working directory now: tools (ptoas, g++) run in other directories
        return value.expanduser().absolute() if value is not None else None

    @field_validator("ptoas_root")
    @classmethod
    def _absolute_root(cls, value: str | None) -> str | None:
        return str(Path(value).expanduser().absolute()) if value else value

    @field_validator("container_image")
    @classmethod
    def _image(cls, value: str | None) -> str | None:
        from pypto.toolchain.image_ref import reference_problem

        problem = reference_problem(value) if value is not None else None
        if problem:
            raise ValueError(problem)
        return value

    @field_validator("file_prefix_map")
    @classmethod
    def _prefix_map(cls, value: str | None) -> str | None:
        from pypto.toolchain.prefix_map import format_prefix_map, parse_prefix_map

        return format_prefix_map(parse_prefix_map(value)) or None  # ValueError names the bad entry

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

    @classmethod
    def resolution_inputs(cls) -> tuple[str, ...]:
        """What a resolution reads besides env and config file: the toolchain manifests (for its cache)."""
        try:
            return manifest_states()
        except (SettingsError, ToolchainError):
            return ()

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
        return resolve_with(type(self), config_file=self._config_file, **{**self.explicit_arguments(), **overrides})

    def describe(self) -> list[dict[str, Any]]:
        """One row per field: name, value, source, environment variable (for ``--json`` dumps)."""
        return [
            {"name": name, "value": _jsonable(getattr(self, name)), "source": self.source_of(name),
             "env": env_var(name)}
            for name in type(self).model_fields
        ]


def _jsonable(value: Any) -> Any:
    return str(value) if isinstance(value, Path) else value


def _wrap_validation_error(exc: ValidationError, record: Mapping[str, str]) -> SettingsError:
    lines, first = [], None
    for err in exc.errors():
        field = ALIASES.get(str(err["loc"][0]).upper(), str(err["loc"][0])) if err["loc"] else "settings"
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
    return EXAMPLES.get(field, str(info.default))


def _validation_hint(field: str, source: str, example: str) -> str:
    if field not in Settings.model_fields:
        known = ", ".join(Settings.model_fields)
        return f"remove '{field}' from {source.removeprefix('file ')}; known settings: {known}"
    return platforms.fix_hint(field, source, example)
