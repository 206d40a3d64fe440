"""Upstream's ``pypto.jit.cache``: the cache key of a ``@pl.jit`` specialization and an on-disk (L2) store.

A key is a plain hashable tuple ``(source_hash, platform, strategy, tensor infos, scalar infos,
distributed config, compile options)``: the sources, every tensor parameter's shape (``None`` on a
dynamic axis) and dtype, every specialized scalar's value, and the compile options that change the
artifact. :func:`l2_store` copies an artifact directory into a slot named by the key's hash under
``<cache_dir>/jit-l2/`` and :func:`l2_lookup` finds it again (``None`` on a miss or when the copy is
gone). ``@pl.jit`` itself keys its caches with its own, wider fingerprint
(:mod:`pypto.jit.disk_cache`: referenced globals, package and toolchain digests, settings).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pypto
from pypto.ir.dtypes import DataType


@dataclass(frozen=True)
class TensorCacheInfo:
    """A tensor parameter in a key: ``name``, ``shape`` (None on dynamic axes), ``dtype``, ``layout``."""

    name: str
    shape: tuple[int | None, ...]
    dtype: DataType
    layout: Any = None


@dataclass(frozen=True)
class ScalarCacheInfo:
    """A specialized scalar parameter in a key: ``name`` and its ``value``."""

    name: str
    value: int | float | bool


CacheKey = tuple[str, str | None, Any, tuple[TensorCacheInfo, ...], tuple[ScalarCacheInfo, ...],
                 tuple[Any, ...] | None, tuple[Any, ...] | None]


def _freeze(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return tuple((f.name, _freeze(getattr(value, f.name))) for f in dataclasses.fields(value))
    if isinstance(value, list | tuple):
        return tuple(_freeze(v) for v in value)
    return value


def compute_source_hash(sources: list[str]) -> str:
    """SHA-256 (first 16 hex digits) of the pypto version and the sources, in order."""
    h = hashlib.sha256(pypto.__version__.encode())
    for src in sources:
        h.update(src.encode())
    return h.hexdigest()[:16]


def make_cache_key(source_hash: str, param_names: list[str], tensor_shapes: dict[str, tuple[int, ...]],
                   tensor_dtypes: dict[str, DataType], dynamic_dims: set[tuple[str, int]],
                   scalar_values: dict[str, int | float | bool], platform: str | None = None, strategy: Any = None,
                   distributed_config: Any = None, analyze_auto_scopes_for_deps: bool = False,
                   dump_ptoas_passes: bool = False, memory_planner: Any = None,
                   enable_pypto_l0c_double_buffer: bool = False, tensor_layouts: dict[str, Any] | None = None,
                   dep_layouts: tuple[tuple[str, str, str], ...] = (),
                   runtime: Any = "tensormap_and_ringbuffer") -> CacheKey:
    """The key of one specialization; dynamic ``(param, axis)`` pairs key as None so any extent shares it."""
    tensors = tuple(TensorCacheInfo(n, tuple(None if (n, i) in dynamic_dims else d
                                             for i, d in enumerate(tensor_shapes[n])),
                                    tensor_dtypes[n], (tensor_layouts or {}).get(n))
                    for n in param_names if n in tensor_shapes)
    scalars = tuple(ScalarCacheInfo(n, scalar_values[n]) for n in param_names if n in scalar_values)
    planner = None if memory_planner is None else str(getattr(memory_planner, "name", memory_planner))
    opts = (("analyze_auto_scopes_for_deps", analyze_auto_scopes_for_deps), ("dump_ptoas_passes", dump_ptoas_passes),
            ("memory_planner", planner),
            ("enable_pypto_l0c_double_buffer", enable_pypto_l0c_double_buffer and planner in (None, "PYPTO")),
            ("dep_layouts", tuple(dep_layouts)), ("runtime", str(getattr(runtime, "value", runtime))))
    dist = _freeze(distributed_config) if distributed_config is not None else None
    return (source_hash, platform, strategy, tensors, scalars, dist, opts)


def _l2_root() -> Path:
    from pypto.jit.disk_cache import cache_root

    return cache_root().parent / "jit-l2"


def _key_hash(key: CacheKey) -> str:
    return hashlib.sha256(json.dumps(key, default=str).encode()).hexdigest()


def l2_lookup(key: CacheKey) -> str | None:
    """The stored artifact directory of ``key``, or None (a miss, or its copy was removed)."""
    manifest = _l2_root() / _key_hash(key) / "manifest.json"
    try:
        out = json.loads(manifest.read_text()).get("output_dir", "")
    except (OSError, ValueError):
        return None
    return out if out and Path(out).is_dir() else None


def l2_store(key: CacheKey, output_dir: str | os.PathLike[str]) -> None:
    """Copy the artifact directory ``output_dir`` into ``key``'s slot (a failure only skips the store)."""
    slot = _l2_root() / _key_hash(key)
    try:
        slot.mkdir(parents=True, exist_ok=True)
        artifacts = slot / "artifacts"
        tmp = slot / f".artifacts.tmp{os.getpid()}"
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.copytree(output_dir, tmp)
        shutil.rmtree(artifacts, ignore_errors=True)
        os.replace(tmp, artifacts)
        (slot / "manifest.json").write_text(json.dumps({"output_dir": str(artifacts)}))
    except OSError:
        pass


__all__ = ["CacheKey", "ScalarCacheInfo", "TensorCacheInfo", "compute_source_hash", "l2_lookup", "l2_store",
           "make_cache_key"]
