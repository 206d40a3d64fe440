"""Read an artifact directory: ``kernel_config.py`` (what to build) and ``compiled_meta.json`` (parameters)."""

from __future__ import annotations

import json
import runpy
import sys
import threading
import types
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from pypto.runtime import kernel_config as _kc

DEFAULT_RUNTIME = "tensormap_and_ringbuffer"


@dataclass(frozen=True, slots=True)
class KernelSpec:
    """One ``KERNELS`` entry of ``kernel_config.py``."""

    func_id: int
    name: str
    source: Path
    core_type: str
    include_dirs: tuple[Path, ...] = ()


@dataclass(frozen=True, slots=True)
class ParamSpec:
    """One ``params`` entry of ``compiled_meta.json``; ``shape`` None means unknown (or a scalar)."""

    name: str
    direction: str
    shape: tuple[int | None, ...] | None
    dtype: str | None


@dataclass(frozen=True, slots=True)
class ArtifactInfo:
    """Everything the runtime needs from an artifact directory."""

    root: Path
    runtime: str
    runtime_config: dict[str, Any]
    orchestration: Path
    kernels: tuple[KernelSpec, ...]
    params: tuple[ParamSpec, ...]
    platform: str | None
    backend_type: str | None
    num_return_types: int
    meta: dict[str, Any]

    @property
    def output_indices(self) -> tuple[int, ...]:
        """Indices of pure ``Out`` parameters (allocated by return-style calls)."""
        return _outputs(self.params)


@lru_cache(maxsize=256)
def _outputs(params: tuple[ParamSpec, ...]) -> tuple[int, ...]:
    return tuple(i for i, p in enumerate(params) if p.direction == "Out")


_lock = threading.Lock()
_cache: dict[tuple[Path, float, float], ArtifactInfo] = {}


def _mtime(path: Path) -> float:
    return path.stat().st_mtime if path.exists() else -1.0


def load_artifact(root: str | Path) -> ArtifactInfo:
    """Parse an artifact directory (cached until either file changes)."""
    root = Path(root).resolve()
    cfg, meta = root / "kernel_config.py", root / "compiled_meta.json"
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
    sys.modules.update(shim)
    try:
        return runpy.run_path(str(cfg), run_name="kernel_config")
    finally:
        for name in shim:
            sys.modules.pop(name, None)


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
    if meta and meta.get("schema") != 1:
        raise ValueError(f"{meta_path}: unsupported schema {meta.get('schema')!r} (expected 1)")
    params = tuple(
        ParamSpec(str(p["name"]), str(p.get("direction", "In")),
                  None if p.get("shape") is None else tuple(p["shape"]), p.get("dtype"))
        for p in meta.get("params", [])
    )
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
