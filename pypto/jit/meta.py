"""Sample-argument classification for ``@pl.jit``: tensors become shape/dtype metadata."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pypto.ir.dtypes import DataType, from_meta, from_numpy


@dataclass(frozen=True, slots=True)
class TensorMeta:
    """What a jit specialization needs from a sample tensor."""

    shape: tuple[int, ...]
    dtype: DataType
    stride: tuple[int, ...] | None = None  # a strided (e.g. transposed, DN) view passed between kernels


def is_tensor_like(value: Any) -> bool:
    """numpy arrays, torch tensors and pypto DeviceTensors."""
    mod = type(value).__module__
    return hasattr(value, "shape") and hasattr(value, "dtype") and (
        mod.startswith(("numpy", "torch")) or type(value).__name__ == "DeviceTensor")


def tensor_meta(func_name: str, param: str, value: Any) -> TensorMeta:
    """TensorMeta of a numpy array or torch tensor (TypeError/ValueError for anything else)."""
    mod = type(value).__module__
    if type(value).__name__ == "DeviceTensor":
        raise ValueError(f"@pl.jit: missing inferred tensor metadata for parameter '{param}'. "
                         "A DeviceTensor carries no host metadata for specialization: compile with "
                         "host tensors first (kernel.compile(...)), then dispatch the CompiledProgram "
                         "with the DeviceTensor")
    if mod.startswith("torch"):
        from pypto.runtime.dtypes import from_torch

        try:
            dtype = from_meta(from_torch(value.dtype).meta)
        except TypeError:
            raise TypeError(f"@pl.jit function '{func_name}': parameter '{param}' has unsupported "
                            f"torch dtype {value.dtype}") from None
        return TensorMeta(tuple(int(d) for d in value.shape), dtype)
    try:
        dtype = from_numpy(value.dtype)
    except TypeError as exc:
        raise TypeError(f"@pl.jit function '{func_name}': parameter '{param}': {exc}") from None
    return TensorMeta(tuple(int(d) for d in value.shape), dtype)
