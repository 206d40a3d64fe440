"""The artifact directory: its layout, the compile's begin/commit, and reading it back for the runtime.

Only this package knows the file names inside an artifact directory. A compile calls :func:`begin`
(stale completion markers removed) before writing anything and :func:`commit` (``compiled_meta.json``
written last, atomically) after everything else, so a failed or interrupted compile never leaves a
directory that looks complete. :func:`load_artifact` reads ``kernel_config.py`` (what to build) and
``compiled_meta.json`` (parameters) for the runtime.
"""

from __future__ import annotations

import json
import os
import runpy
import sys
import threading
import types
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pypto.artifact import kernel_config as _kc
from pypto.artifact.meta import DEFAULT_RUNTIME, META_FILE, ArtifactMeta, ParamInfo

if TYPE_CHECKING:
    from pypto.artifact.model import KernelUnit

KERNEL_CONFIG = "kernel_config.py"
REPORT_DIR = "report"
PASSES_DUMP_DIR = "passes_dump"
CODEGEN_ERRORS = f"{REPORT_DIR}/codegen_errors.txt"
DEBUG_RUN_SCRIPT = "debug/run.py"  # re-runs the artifact (pypto.runtime.debug.run_script_writer)
# a kernel source's ptoas body sits between these two lines (spliced again by rebuild_kernel_cpp_from_pto)
PTOAS_BODY_BEGIN = "// --- ptoas-generated code ---"
PTOAS_BODY_END = "// --- Kernel entry point ---"
# completion markers of every build kind, deleted by a fresh compile before it writes anything
# markers of the other build kinds, deleted by a fresh compile; perf_hints.log is appended to during a
# compile, so a recompile starts it anew (byte-identical artifacts)
STALE_MARKERS = (META_FILE, "distributed_meta.json", KERNEL_CONFIG, "orchestration/host_orch.py",
                 f"{REPORT_DIR}/perf_hints.log")


def orchestration_source(name: str) -> str:
    """Relative path of an orchestration's C++ source."""
    return f"orchestration/{name}.cpp"


def kernel_source(core: str, name: str) -> str:
    """Relative path of a wrapped kernel (``kernels/<aiv|aic>/<func>.cpp``)."""
    return f"kernels/{core}/{name}.cpp"


def ptoas_file(unit: str, suffix: str) -> str:
    """Relative path of a ptoas input or product of one kernel unit (``ptoas/<unit>.<pto|cpp|log>``)."""
    return f"ptoas/{unit}.{suffix}"


def ptoas_passes_file(unit: str, name: str) -> str:
    """Relative path of one ptoas pass dump of a unit (``dump_ptoas_passes``)."""
    return f"ptoas_passes/{unit}/{name}"


def skip_ptoas_files(units: list[KernelUnit]) -> dict[str, str]:
    """Raw MLIR per unit: ``kernels/<core>/<func>.pto`` (one-function units) or ``kernels/<group>.pto``."""
    out = {}
    for u in units:
        path = f"kernels/{u.core}/{u.name}.pto" if len(u.funcs) == 1 else f"kernels/{u.name}.pto"
        out[path] = u.pto
    return out


def begin(out: str | os.PathLike[str]) -> Path:
    """Start writing an artifact into ``out``: create it (and ``report/``) and drop stale markers."""
    root = Path(out)
    (root / REPORT_DIR).mkdir(parents=True, exist_ok=True)
    base = os.fspath(root)
    for marker in STALE_MARKERS:
        try:
            os.unlink(os.path.join(base, marker))
        except FileNotFoundError:
            pass
    return root


def commit(out: str | os.PathLike[str], meta: ArtifactMeta) -> None:
    """Write ``compiled_meta.json`` atomically: the completeness marker, only ever after every other file."""
    from pypto.toolchain.files import text_bytes, write_file

    root = os.fspath(out)
    tmp = os.path.join(root, f".{META_FILE}.tmp{os.getpid()}")
    write_file(tmp, text_bytes(meta.text()))
    os.replace(tmp, os.path.join(root, META_FILE))


def is_complete(out: str | os.PathLike[str]) -> bool:
    """Did a compile commit this directory (``compiled_meta.json`` present)?"""
    return (Path(out) / META_FILE).is_file()


def is_assembled(out: str | os.PathLike[str]) -> bool:
    """Did ptoas run (``kernel_config.py`` present, so the artifact can be built and run)?"""
    return (Path(out) / KERNEL_CONFIG).is_file()


@dataclass(frozen=True, slots=True)
class KernelSpec:
    """One ``KERNELS`` entry of ``kernel_config.py``."""

    func_id: int
    name: str
    source: Path
    core_type: str
    include_dirs: tuple[Path, ...] = ()


@dataclass(frozen=True, slots=True)
class ArtifactInfo:
    """Everything the runtime needs from an artifact directory."""

    root: Path
    runtime: str
    runtime_config: dict[str, Any]
    orchestration: Path
    kernels: tuple[KernelSpec, ...]
    params: tuple[ParamInfo, ...]
    platform: str | None
    backend_type: str | None
    num_return_types: int
    meta: dict[str, Any]

    @property
    def output_indices(self) -> tuple[int, ...]:
        """Indices of pure ``Out`` parameters (allocated by return-style calls)."""
        return _outputs(self.params)


@lru_cache(maxsize=256)
def _outputs(params: tuple[ParamInfo, ...]) -> tuple[int, ...]:
    return tuple(i for i, p in enumerate(params) if p.direction == "Out")


_lock = threading.Lock()
_cache: dict[tuple[Path, float, float], ArtifactInfo] = {}


def _mtime(path: Path) -> float:
    return path.stat().st_mtime if path.exists() else -1.0


def load_artifact(root: str | Path) -> ArtifactInfo:
    """Parse an artifact directory (cached until either file changes)."""
    root = Path(root).resolve()
    cfg, meta = root / KERNEL_CONFIG, root / META_FILE
    if not cfg.is_file():
        raise FileNotFoundError(
            f"Cannot execute PyPTO artifact '{root}': required '{cfg}' was not generated. "
            "It is written only when ptoas ran; recompile without skip_ptoas=True "
            "(ptoas is located via PTOAS_ROOT or PATH; `pypto doctor` checks it)."
        )
    key = (root, _mtime(cfg), _mtime(meta))
    with _lock:
        if key not in _cache:
            _cache[key] = _parse(root, cfg, meta)
        return _cache[key]


def _run_config_file(cfg: Path) -> dict[str, Any]:
    # Upstream artifacts import ArgDirection from simpler; serve ours under that name if simpler is absent.
    shim = {}
    if "simpler.task_interface" not in sys.modules:
        try:
            import simpler.task_interface  # noqa: F401
        except ImportError:
            pkg = types.ModuleType("simpler")
            pkg.task_interface = _kc  # type: ignore[attr-defined]
            shim = {"simpler": pkg, "simpler.task_interface": _kc}
    before = {name: sys.modules.get(name) for name in shim}  # e.g. pypto's stand-in simpler (no task_interface)
    sys.modules.update(shim)
    try:
        return runpy.run_path(str(cfg), run_name="kernel_config")
    finally:
        for name, module in before.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module


def _parse(root: Path, cfg: Path, meta_path: Path) -> ArtifactInfo:
    ns = _run_config_file(cfg)
    rc = dict(ns.get("RUNTIME_CONFIG", {}))
    orch = ns.get("ORCHESTRATION")
    if not orch or "source" not in orch:
        raise ValueError(f"{cfg}: ORCHESTRATION with a 'source' entry is required")
    kernels = tuple(
        KernelSpec(
            func_id=int(k["func_id"]),
            name=str(k["name"]),
            source=_resolve(root, k["source"]),
            core_type=str(k.get("core_type", "aiv")),
            include_dirs=tuple(_resolve(root, d) for d in k.get("extra_include_dirs", ())),
        )
        for k in sorted(ns.get("KERNELS", []), key=lambda k: int(k["func_id"]))
    )
    meta = json.loads(meta_path.read_text()) if meta_path.is_file() else {}
    params = ArtifactMeta.from_json(meta, meta_path).params if meta else ()
    return ArtifactInfo(
        root=root,
        runtime=str(rc.get("runtime") or meta.get("runtime") or DEFAULT_RUNTIME),
        runtime_config=rc,
        orchestration=_resolve(root, orch["source"]),
        kernels=kernels,
        params=params,
        platform=meta.get("platform"),
        backend_type=meta.get("backend_type"),
        num_return_types=int(meta.get("num_return_types", 0)),
        meta=meta,
    )


def _resolve(root: Path, path: str | Path) -> Path:
    p = Path(path)
    return p if p.is_absolute() else root / p


def invalidate_binary_cache(work_dir: str | os.PathLike[str]) -> None:
    """Delete the built kernel and orchestration copies in ``work_dir`` (and its ranks' ``next_levels/``).

    Sources stay; the next run builds again from them. Builds are cached by the content of the
    source (plus flags, headers and compiler), so an edited ``.cpp`` is always rebuilt and an
    unchanged one is taken from the cache. Prints how many files were removed.
    """
    root = Path(work_dir)
    dirs = [root, *sorted(d for d in (root / "next_levels").glob("*") if d.is_dir())]
    removed = 0
    for base in dirs:
        for sub in ("kernels", "orchestration"):
            for built in sorted((base / sub).rglob("*")) if (base / sub).is_dir() else ():
                if built.is_file() and built.name.endswith((".so", ".so.key", ".o")):
                    built.unlink()
                    removed += 1
    print(f"[cpp->.so] invalidated {removed} cached binary file(s); cpp will rebuild" if removed
          else "[cpp->.so] no cached binaries to invalidate")
