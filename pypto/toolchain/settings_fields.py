"""Every setting declared once: its kind, default, constraints and help, and the one parser of its values.

Both the pydantic model (:mod:`pypto.toolchain.settings_model`, its fields built from :data:`FIELDS`)
and the light readers of :mod:`pypto.toolchain.settings` (through ``settings_sources.resolve_field``)
parse a value with :func:`parse` and report a bad one with :func:`settings_error`, so the two agree on
every value and every error text. Nothing here reads the environment or imports pydantic.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, get_args

from pypto.errors import SettingsError
from pypto.toolchain import platforms

VerifyLevel = Literal["none", "basic", "roundtrip"]
WarningLevel = Literal["none", "pre_pipeline", "post_pass", "post_pipeline"]
LogLevel = Literal["debug", "info", "warn", "warning", "error", "fatal", "event", "none"]
LogFormat = Literal["auto", "console", "json"]
ContainerEngine = Literal["docker", "podman"]

Kind = Literal["bool", "int", "float", "str", "path", "choice"]
OUTPUT_BASE = Path("build_output")  # where default output dirs go while prog_build_dir is unset
RUN_MEMORY_FRACTION = 0.5  # unset run_max_bytes: this fraction of physical memory
_TRUE = frozenset({"1", "true", "t", "yes", "y", "on"})
_FALSE = frozenset({"0", "false", "f", "no", "n", "off"})


@dataclass(frozen=True, slots=True)
class Spec:
    """One setting: how its values are read and checked, its default and its help line."""

    kind: Kind
    help: str
    default: Any = None
    factory: Callable[[Mapping[str, str]], Any] | None = None  # a default computed from the environment
    optional: bool = False  # None (unset) is a value
    ge: int | None = None
    gt: int | None = None
    choices: tuple[str, ...] = ()  # kind "choice": the allowed spellings (compared lowercased)
    absolute: bool = False  # kind "path": made absolute against the working directory
    check: Callable[[Any], Any] | None = None  # last step: normalise, or raise ValueError(text)
    example: str | None = None  # for hints; default: the choices or the default
    compile_input: bool = True  # False: cannot change what a compile writes (left out of fingerprints)


def _xdg_cache_dir(env: Mapping[str, str]) -> Path:
    xdg = env.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "pypto"


def _latest_toolchain(env: Mapping[str, str]) -> str:
    from pypto.toolchain.manifest import latest_version

    return latest_version()


def _platform(value: str) -> str:
    if value not in platforms.PLATFORMS:
        raise ValueError(platforms.invalid_platform_text(value))
    return value


def _runtime(value: str) -> str:
    if value not in platforms.RUNTIMES:
        raise ValueError(platforms.unknown_runtime_text(value))
    return value


def _ptoas_root(value: str) -> str | None:
    # resolved against the working directory now: tools (ptoas, g++) run in other directories
    return str(Path(value).expanduser().absolute()) if value else None


def _image(value: str) -> str:
    from pypto.toolchain.image_ref import reference_problem

    problem = reference_problem(value)
    if problem:
        raise ValueError(problem)
    return value


def _prefix_map(value: str) -> str | None:
    from pypto.toolchain.prefix_map import format_prefix_map, parse_prefix_map

    return format_prefix_map(parse_prefix_map(value)) or None  # ValueError names the bad entry


def _timeout(default: float, help: str, example: str) -> Spec:
    return Spec("float", help, default, gt=0, example=example, compile_input=False)


FIELDS: dict[str, Spec] = {
    "prog_build_dir": Spec("path", "Base dir of default output dirs (unset: build_output).", optional=True,
                           example="build_output", compile_input=False),
    "verify_level": Spec("choice", "IR verification: none | basic | roundtrip.", "basic",
                         choices=get_args(VerifyLevel), compile_input=False),
    "warning_level": Spec("choice", "Diagnostic phase gate (none silences).", "pre_pipeline",
                          choices=get_args(WarningLevel), compile_input=False),
    "log_level": Spec("choice", "Log threshold (debug|info|warn|error|fatal|event|none).", "info",
                      choices=get_args(LogLevel), compile_input=False),
    "compile_profiling": Spec("bool", "Write report/pipeline_profile.{txt,json}.", False),
    "emit_pto_loc": Spec("bool", "Emit loc(...) source locations in .pto files.", True),
    "file_prefix_map": Spec("str", "OLD=NEW[;OLD=NEW]: rewrite source paths recorded in artifacts "
                            "(gcc -ffile-prefix-map).", optional=True, check=_prefix_map),
    "codegen_max_workers": Spec("int", "ptoas thread pool size (1 = sequential).", optional=True, ge=1,
                                example="4", compile_input=False),
    "emit_debug_runner": Spec("bool", "Write debug/run.py into artifacts.", True),
    "ptoas_root": Spec("str", "A ptoas release dir to use instead of the pinned wheel (env PTOAS_ROOT).",
                       optional=True, check=_ptoas_root, example="<ptoas release dir>"),
    "ascend_home_path": Spec("path", "CANN install dir for hardware platforms (env ASCEND_HOME_PATH).",
                             optional=True, absolute=True, compile_input=False),
    "platform": Spec("str", "a2a3sim | a5sim | a2a3 | a5.", platforms.DEFAULT_PLATFORM, check=_platform),
    "runtime": Spec("str", "tensormap_and_ringbuffer | host_build_graph.", platforms.DEFAULT_RUNTIME,
                    check=_runtime),
    "toolchain": Spec("str", "Toolchain manifest version.", factory=_latest_toolchain),
    "log_format": Spec("choice", "auto (console on a TTY, else JSON) | console | json.", "auto",
                       choices=get_args(LogFormat), compile_input=False),
    "cache_dir": Spec("path", "Build and shim cache.", factory=_xdg_cache_dir, absolute=True,
                      example="~/.cache/pypto", compile_input=False),
    "jit_cache": Spec("bool", "Reuse @pl.jit and run(program) compiles across processes (<cache_dir>/jit).",
                      True, compile_input=False),
    "cache_max_mb": Spec("int", "MB the ptoas output cache (<cache_dir>/ptoas-cpp) may hold; least recently "
                         "used entries go first (0: no ptoas cache).", 512, ge=0, compile_input=False),
    "prebuilt_dir": Spec("str", "Prebuilt sim runtime objects (python -m pypto.runtime.prebuild; unset: "
                         "pypto/runtime/sim/prebuilt of the install; 'none': use none).", optional=True,
                         example="/opt/pypto-prebuilt", compile_input=False),
    "run_hw_on_sim": Spec("bool", "Run RunConfig(platform='a2a3'|'a5') on a2a3sim|a5sim, warning.", False),
    "run_platform": Spec("str", "Platform of a RunConfig() given none (unset: a2a3sim).", optional=True,
                         check=_platform),
    "ptoas_timeout_s": _timeout(300.0, "Seconds one ptoas run may take before it is killed.", "600"),
    "build_timeout_s": _timeout(900.0, "Seconds one g++ run (kernel, runtime) may take before it is killed.",
                                "1800"),
    "docker_timeout_s": _timeout(120.0, "Seconds one container-engine request may take.", "300"),
    "run_max_bytes": Spec("int", "Bytes of generated inputs/outputs a CLI run may allocate (unset: half of "
                          "RAM).", optional=True, ge=1, example="8000000000", compile_input=False),
    "container_engine": Spec("choice", "Engine for --in-container: docker | podman.", "docker",
                             choices=get_args(ContainerEngine), compile_input=False),
    "container_image": Spec("str", "Image for --in-container (unset: from the manifest).", optional=True,
                            check=_image, example="<image reference>", compile_input=False),
    "source_date_epoch": Spec("int", "Timestamp for reproducible image builds (env SOURCE_DATE_EPOCH).",
                              optional=True, ge=0, compile_input=False),
    "wheelhouse": Spec("path", "Download cache of image wheels (unset: <checkout>/wheelhouse).", optional=True,
                       absolute=True, compile_input=False),
    "debian_mirror": Spec("str", "Debian mirror for debootstrap base images.", optional=True,
                          compile_input=False),
    "image_smoke_examples": Spec("str", "Comma list of examples the image smoke test compiles.", optional=True,
                                 compile_input=False),
}


class _Bad(ValueError):
    """A value that is not of the field's kind or breaks a bound (pydantic's wording)."""


def _bool(spec: Spec, raw: object) -> bool:
    if isinstance(raw, bool):
        return raw
    if isinstance(raw, int) and raw in (0, 1):
        return bool(raw)
    text = raw.strip().lower() if isinstance(raw, str) else None
    if text in _TRUE or text in _FALSE:
        return text in _TRUE
    raise _Bad("Input should be a valid boolean, unable to interpret input")


def _int(spec: Spec, raw: object) -> int:
    if isinstance(raw, int) and not isinstance(raw, bool):
        return raw
    if isinstance(raw, float) and raw.is_integer():
        return int(raw)
    if not isinstance(raw, str):
        raise _Bad("Input should be a valid integer")
    try:
        return int(raw)
    except ValueError:
        raise _Bad("Input should be a valid integer, unable to parse string as an integer") from None


def _float(spec: Spec, raw: object) -> float:
    try:
        value = float(raw) if isinstance(raw, int | float | str) and not isinstance(raw, bool) else None
    except ValueError:
        raise _Bad("Input should be a valid number, unable to parse string as a number") from None
    if value is None:
        raise _Bad("Input should be a valid number")
    if not math.isfinite(value):
        raise _Bad("Input should be a finite number")
    return value


def _str(spec: Spec, raw: object) -> str:
    if isinstance(raw, str):
        return raw
    raise _Bad("Input should be a valid string")


def _path(spec: Spec, raw: object) -> Path:
    if not isinstance(raw, str | os.PathLike):
        raise _Bad("Input should be a valid path")
    path = Path(raw).expanduser()
    return path.absolute() if spec.absolute else path


def _choice(spec: Spec, raw: object) -> str:
    text = raw.strip().lower() if isinstance(raw, str) else None
    if text in spec.choices:
        return text
    *head, last = (repr(c) for c in spec.choices)
    raise _Bad(f"Input should be {', '.join(head)} or {last}")


_PARSERS: dict[str, Callable[[Spec, object], Any]] = {
    "bool": _bool, "int": _int, "float": _float, "str": _str, "path": _path, "choice": _choice}


def parse(name: str, raw: object) -> Any:
    """The value of setting ``name`` given as ``raw`` (a string from the environment, a TOML value or an
    argument). Raises ValueError with the full reason: ``Invalid value ... for setting 'name': ...``."""
    spec = FIELDS[name]
    if raw is None and spec.optional:
        return None
    try:
        value = _PARSERS[spec.kind](spec, raw)
        if spec.ge is not None and value < spec.ge:
            raise _Bad(f"Input should be greater than or equal to {spec.ge}")
        if spec.gt is not None and value <= spec.gt:
            raise _Bad(f"Input should be greater than {spec.gt}")
    except _Bad as exc:
        raise ValueError(f"Invalid value {raw!r} for setting '{name}': {exc}") from None
    return spec.check(value) if spec.check is not None else value


def example(name: str) -> str:
    """A value to show in a hint: the choices, the spec's example, or the default."""
    spec = FIELDS.get(name)
    if spec is None:
        return "<value>"
    if spec.choices:
        return "|".join(spec.choices)
    return spec.example if spec.example is not None else str(spec.default)


def settings_error(problems: Iterable[tuple[str, str, str]]) -> SettingsError:
    """One SettingsError for ``(setting, source, reason)`` problems, its hint fixing the first one."""
    problems = list(problems)
    lines = [f"{reason} [{field} from {source}]" for field, source, reason in problems]
    field, source, _ = problems[0]
    if field in FIELDS:
        hint = platforms.fix_hint(field, source, example(field))
    else:
        hint = f"remove '{field}' from {source.removeprefix('file ')}; known settings: {', '.join(FIELDS)}"
    err = SettingsError("\n".join(lines), hint=hint)
    err.setting, err.source = field, source
    return err
