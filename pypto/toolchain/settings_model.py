"""The pydantic model behind :mod:`pypto.toolchain.settings` (imported on first use of ``Settings``).

Importing pydantic costs a noticeable part of a second, so the light readers (``cache_dir()``,
``jit_cache_enabled()``, ...) live in ``settings`` and this module loads only when a full
:class:`Settings` is resolved. The model declares no default, constraint or parsing of its own: its
fields are built from ``settings_fields.FIELDS`` and its values come from ``settings_sources.raw_values``
through ``settings_fields.parse``, the resolution the light readers use.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from pathlib import Path
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    ValidationInfo,
    field_validator,
)

from pypto.errors import SettingsError, ToolchainError
from pypto.toolchain import platforms
from pypto.toolchain.manifest import Manifest, latest_version, load_manifest, manifest_states
from pypto.toolchain.settings_fields import (
    FIELDS,
    OUTPUT_BASE,
    ContainerEngine,
    LogFormat,
    LogLevel,
    VerifyLevel,
    WarningLevel,
    parse,
    settings_error,
)
from pypto.toolchain.settings_sources import config_file, default_of, env_var, raw_values, resolve_with


def _field(name: str) -> Any:
    """The pydantic field of setting ``name``: its default (or default factory) and help from FIELDS."""
    spec = FIELDS[name]
    if spec.factory is not None:
        return Field(default_factory=partial(default_of, name), description=spec.help)
    return Field(spec.default, description=spec.help)


class Settings(BaseModel):
    """Every knob of pypto. Fields map to ``PYPTO_<FIELD>`` environment variables (see ``FIELDS``)."""

    model_config = ConfigDict(frozen=True, extra="forbid", validate_default=True)

    prog_build_dir: Path | None = _field("prog_build_dir")
    verify_level: VerifyLevel = _field("verify_level")
    warning_level: WarningLevel = _field("warning_level")
    log_level: LogLevel = _field("log_level")
    compile_profiling: bool = _field("compile_profiling")
    emit_pto_loc: bool = _field("emit_pto_loc")
    file_prefix_map: str | None = _field("file_prefix_map")
    codegen_max_workers: int | None = _field("codegen_max_workers")
    emit_debug_runner: bool = _field("emit_debug_runner")
    ptoas_root: str | None = _field("ptoas_root")
    ascend_home_path: Path | None = _field("ascend_home_path")
    platform: str = _field("platform")
    runtime: str = _field("runtime")
    toolchain: str = _field("toolchain")
    log_format: LogFormat = _field("log_format")
    cache_dir: Path = _field("cache_dir")
    jit_cache: bool = _field("jit_cache")
    cache_max_mb: int = _field("cache_max_mb")
    prebuilt_dir: str | None = _field("prebuilt_dir")
    run_hw_on_sim: bool = _field("run_hw_on_sim")
    run_platform: str | None = _field("run_platform")
    ptoas_timeout_s: float = _field("ptoas_timeout_s")
    build_timeout_s: float = _field("build_timeout_s")
    docker_timeout_s: float = _field("docker_timeout_s")
    run_max_bytes: int | None = _field("run_max_bytes")
    container_engine: ContainerEngine = _field("container_engine")
    container_image: str | None = _field("container_image")
    source_date_epoch: int | None = _field("source_date_epoch")
    wheelhouse: Path | None = _field("wheelhouse")
    debian_mirror: str | None = _field("debian_mirror")
    image_smoke_examples: str | None = _field("image_smoke_examples")

    _sources: dict[str, str] = PrivateAttr(default_factory=dict)
    _config_file: Path | None = PrivateAttr(default=None)

    def __init__(self, **arguments: Any) -> None:
        values, sources = raw_values(arguments)
        try:
            super().__init__(**values)
        except ValidationError as exc:
            raise _wrap_validation_error(exc, sources) from None
        self._sources = sources
        self._config_file = config_file()[0]
        self._check_agreement()

    @field_validator("*", mode="before")
    @classmethod
    def _parse(cls, value: Any, info: ValidationInfo) -> Any:
        return parse(info.field_name or "", value)  # the one parser (settings_fields), for every field

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
        return self.prog_build_dir or OUTPUT_BASE

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


def _wrap_validation_error(exc: ValidationError, sources: Mapping[str, str]) -> SettingsError:
    problems = []
    for err in exc.errors():
        field = str(err["loc"][0]) if err["loc"] else "settings"
        reason = str(err.get("ctx", {}).get("error", "")) or err["msg"]  # parse's text, or pydantic's
        if err["type"] == "extra_forbidden":
            reason = f"Unknown setting '{field}'"
        problems.append((field, sources.get(field, "default"), reason))
    return settings_error(problems)
