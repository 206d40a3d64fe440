"""Platform, backend and runtime tables, and the rules that make them agree.

A platform names where an artifact runs (``a2a3sim``, ``a5sim`` on the CPU simulator; ``a2a3``, ``a5`` on
hardware). Its backend (``Ascend910B`` or ``Ascend950``) fixes the codegen target. A runtime
(``tensormap_and_ringbuffer`` or ``host_build_graph``) is chosen at compile time and baked into the
artifact; a worker only accepts artifacts built for its own platform, runtime and toolchain.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from pypto.errors import SettingsError


@dataclass(frozen=True, slots=True)
class PlatformInfo:
    """Facts about one platform."""

    name: str
    backend: str
    arch: str
    """``target_arch`` written into ``.pto`` files."""
    simulated: bool
    kernel_compiler: str
    """Compiler for InCore kernels: ``g++`` (sim, a ``.so``) or CANN's ``ccec`` (hardware, a ``.o``)."""


PLATFORMS: dict[str, PlatformInfo] = {
    "a2a3sim": PlatformInfo("a2a3sim", "Ascend910B", "a2a3", True, "g++"),
    "a2a3": PlatformInfo("a2a3", "Ascend910B", "a2a3", False, "ccec"),
    "a5sim": PlatformInfo("a5sim", "Ascend950", "a5", True, "g++"),
    "a5": PlatformInfo("a5", "Ascend950", "a5", False, "ccec"),
}
BACKEND_DEFAULT_SIM: dict[str, str] = {"Ascend910B": "a2a3sim", "Ascend950": "a5sim"}
BACKEND_ARCH: dict[str, str] = {p.backend: p.arch for p in PLATFORMS.values()}  # Ascend910B -> a2a3
HARDWARE_PLATFORMS: tuple[str, ...] = tuple(n for n, p in PLATFORMS.items() if not p.simulated)
RUNTIMES: tuple[str, ...] = ("tensormap_and_ringbuffer", "host_build_graph")
DEFAULT_PLATFORM = "a2a3sim"
DEFAULT_RUNTIME = "tensormap_and_ringbuffer"
GRAPH_RUNTIME = "host_build_graph"
TASK_MAX_TENSORS = 32
"""Tensor arguments one kernel task takes (the runtime's ``CORE_MAX_TENSOR_ARGS``)."""
TASK_MAX_SCALARS = 16
"""Scalar arguments one kernel task takes (the runtime's ``CORE_MAX_SCALAR_ARGS``)."""
# the preprocessor macro a kernel of each core type is compiled with (g++ on sim, ccec on hardware)
CORE_MACROS: dict[str, str] = {"aiv": "-D__DAV_VEC__", "aic": "-D__DAV_CUBE__"}

UNPREFIXED_ENV = {"ptoas_root": "PTOAS_ROOT", "ascend_home_path": "ASCEND_HOME_PATH",
                  "source_date_epoch": "SOURCE_DATE_EPOCH"}
_FLAGS = {"platform": "--platform", "runtime": "--runtime", "toolchain": "--toolchain",
          "log_level": "--log-level", "log_format": "--log-format"}


def invalid_platform_text(name: object) -> str:
    """The upstream error text for an unknown platform name."""
    return f"Invalid platform '{name}'. Expected 'a2a3sim', 'a2a3', 'a5sim', or 'a5'."


def unknown_runtime_text(name: object) -> str:
    """The upstream error text for an unknown runtime name."""
    return f"Unknown runtime '{name}': expected one of {', '.join(RUNTIMES)}"


def fix_hint(setting: str, source: str, example: str) -> str:
    """How to change ``setting`` where it was set (``source`` as from ``Settings.source_of``)."""
    env_var = UNPREFIXED_ENV.get(setting, f"PYPTO_{setting.upper()}")
    if source.startswith("env "):
        return f"set {source[4:]}={example} (or unset it)"
    if source.startswith("file "):
        return f"change `{setting} = \"{example}\"` in {source[5:]}"
    flag = _FLAGS.get(setting)
    cli = f" (CLI: {flag} {example})" if flag else ""
    if source == "argument":
        return f"pass {setting}='{example}'{cli}"
    if source == "artifact":
        return f"recompile the program with {flag or setting} {example}"
    return f"set {env_var}={example}{cli}"


def _error(message: str, setting: str, source: str, example: str) -> SettingsError:
    err = SettingsError(f"{message} [{setting} from {source}]", hint=fix_hint(setting, source, example))
    err.setting, err.source = setting, source
    return err


def platform_info(name: str, source: str = "argument") -> PlatformInfo:
    """Look up a platform; unknown names raise SettingsError with the upstream text."""
    info = PLATFORMS.get(name)
    if info is None:
        raise _error(invalid_platform_text(name), "platform", source, "a2a3sim")
    return info


def backend_for(platform: str, source: str = "argument") -> str:
    """``a2a3*`` -> ``Ascend910B``, ``a5*`` -> ``Ascend950``."""
    return platform_info(platform, source).backend


def sim_twin(platform: str) -> str:
    """The simulation platform of the same architecture (``a2a3`` -> ``a2a3sim``; a sim maps to itself)."""
    info = platform_info(platform)
    return info.name if info.simulated else BACKEND_DEFAULT_SIM[info.backend]


def default_sim_platform(backend: str) -> str:
    """The simulation platform a backend compiles for when no platform is given."""
    if backend not in BACKEND_DEFAULT_SIM:
        raise SettingsError(
            f"Unknown backend '{backend}': expected one of {', '.join(BACKEND_DEFAULT_SIM)}",
            hint="use Ascend910B (a2a3, a2a3sim) or Ascend950 (a5, a5sim)",
        )
    return BACKEND_DEFAULT_SIM[backend]


def check_runtime(name: str, source: str = "argument") -> str:
    """Return ``name`` if it is a known runtime, else raise the upstream error text."""
    if name not in RUNTIMES:
        raise _error(unknown_runtime_text(name), "runtime", source, DEFAULT_RUNTIME)
    return name


def check_backend_agrees(platform: str, backend: str, source: str = "argument") -> None:
    """A backend given next to a platform must be the platform's backend."""
    expected = backend_for(platform, source)
    if backend != expected:
        raise _error(
            f"Platform '{platform}' needs backend {expected}, but backend {backend} was requested",
            "platform",
            source,
            BACKEND_DEFAULT_SIM.get(backend, "a2a3sim"),
        )


def check_supported(
    toolchain: str,
    supported: Iterable[str],
    setting: str,
    value: str,
    source: str,
) -> None:
    """``value`` of ``setting`` (platform or runtime) must be listed by the toolchain manifest."""
    allowed = list(supported)
    if value not in allowed:
        raise _error(
            f"Toolchain {toolchain} does not support {setting} '{value}' (supported: {', '.join(allowed)})",
            setting,
            source,
            allowed[0] if allowed else value,
        )


def check_graph_runtime(function_name: str, runtime: str, source: str = "argument") -> None:
    """A ``Graph`` function needs the ``host_build_graph`` runtime (host builds and replays the graph)."""
    if runtime != GRAPH_RUNTIME:
        raise _error(
            f"Graph function '{function_name}' requires runtime '{GRAPH_RUNTIME}', but runtime is '{runtime}'",
            "runtime",
            source,
            GRAPH_RUNTIME,
        )


def _meta_get(meta: Mapping[str, Any] | Any, key: str) -> Any:
    if isinstance(meta, Mapping):
        return meta.get(key)
    return getattr(meta, key, None)


def check_artifact_agreement(
    meta: Mapping[str, Any] | Any,
    worker_platform: str,
    worker_runtime: str,
    toolchain: str | Any | None = None,
) -> None:
    """A worker accepts only artifacts built for its platform, runtime and toolchain.

    Args:
        meta: ``compiled_meta.json`` contents (a mapping) or an object with ``platform``,
            ``runtime`` (or ``runtime_name``), ``backend_type`` and ``toolchain`` attributes.
            A missing runtime means the default runtime; a missing toolchain (artifacts from
            the upstream compiler) is not checked.
        worker_platform: the worker's platform.
        worker_runtime: the worker's runtime.
        toolchain: the worker's toolchain version (a string or a manifest with ``version``).
    """
    platform = _meta_get(meta, "platform")
    platform_info(str(platform), "artifact")
    backend = _meta_get(meta, "backend_type")
    if backend is not None:
        check_backend_agrees(str(platform), str(backend), "artifact")
    if platform != worker_platform:
        raise _error(
            f"CompiledProgram.platform='{platform}' does not match ChipWorker.platform='{worker_platform}'. "
            "Compile for the matching platform, or construct ChipWorker(config=RunConfig(platform=...)).",
            "platform",
            "artifact",
            worker_platform,
        )
    runtime = _meta_get(meta, "runtime") or _meta_get(meta, "runtime_name") or DEFAULT_RUNTIME
    check_runtime(str(runtime), "artifact")
    if runtime != worker_runtime:
        raise _error(
            f"CompiledProgram requires runtime='{runtime}' but ChipWorker was constructed with "
            f"runtime='{worker_runtime}'. Recompile with runtime='{worker_runtime}' or use a worker "
            f"with runtime='{runtime}'.",
            "runtime",
            "artifact",
            worker_runtime,
        )
    _check_toolchain(_meta_get(meta, "toolchain"), toolchain)


def _check_toolchain(built_with: Any, toolchain: Any) -> None:
    if built_with is None or toolchain is None:
        return
    built = str(getattr(built_with, "version", built_with))
    worker = str(getattr(toolchain, "version", toolchain))
    if built != worker:
        raise _error(
            f"Artifact was built with toolchain {built} but this worker uses toolchain {worker}. "
            "Recompile the program with the worker's toolchain.",
            "toolchain",
            "artifact",
            worker,
        )
