"""Upstream's ``pypto.ir.compiled_program`` module path: ``CompiledProgram`` (loaded on first use), and the
two helpers upstream's model scripts import: ``_to_torch_dtype`` and ``_to_runtime_shape``."""

from __future__ import annotations

from collections.abc import Sequence
from importlib import import_module
from typing import Any

from pypto.ir.dtypes import DataType

_LAZY = {"CompiledProgram": "pypto.compiled"}  # the declared upward reach (tests/test_layers.py)


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'pypto.ir.compiled_program' has no attribute '{name}'")


def _to_torch_dtype(dtype: DataType) -> Any:
    """The torch dtype that carries ``dtype`` at the runtime boundary (``torch.float4_e2m1fn_x2`` for FP4),
    or None when the runtime has no carrier for it. Imports torch."""
    import torch

    runtime = import_module("pypto.runtime.dtypes")  # the runtime's table of carriers, read at call time
    info = runtime.BY_META.get(dtype.meta)
    return None if info is None or info.torch is None else getattr(torch, info.torch, None)


def _to_runtime_shape(shape: Sequence[int], dtype: DataType) -> list[int]:
    """The runtime carrier shape of a logical IR shape: packed FP4 holds two values per byte, so its last
    static dimension halves; every other dtype keeps its shape."""
    out = list(shape)
    if dtype is DataType.FP4 and out and out[-1] != -1:
        out[-1] //= 2
    return out
