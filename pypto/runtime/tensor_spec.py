"""``TensorSpec`` / ``ScalarSpec``: upstream's descriptions of a program's run-time arguments.

A TensorSpec names a tensor, its shape and torch dtype, how to fill it (zeros, a constant, a given
tensor, a torch factory such as ``torch.randn`` called with the shape, or any no-argument callable)
and whether it is an output; ``create_tensor()`` builds it. torch is imported only when a tensor
is built.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

_CTYPES = ("int64", "int32", "uint64", "uint32", "float", "double")


@dataclass
class TensorSpec:
    """One tensor argument: ``name``, ``shape``, torch ``dtype``, ``init_value``, ``is_output``."""

    name: str
    shape: list[int]
    dtype: Any
    init_value: int | float | Any | Callable[..., Any] | None = None
    is_output: bool = False

    def create_tensor(self) -> Any:
        """The tensor this spec describes (zeros when ``init_value`` is None)."""
        import torch

        value = self.init_value
        if value is None:
            return torch.zeros(self.shape, dtype=self.dtype)
        if isinstance(value, bool) or not isinstance(value, int | float | torch.Tensor) and not callable(value):
            raise TypeError(f"TensorSpec {self.name!r}: init_value must be a number, a tensor or a callable, "
                            f"got {type(value).__name__}")
        if isinstance(value, int | float):
            return torch.full(self.shape, value, dtype=self.dtype)
        if isinstance(value, torch.Tensor):
            return value.to(dtype=self.dtype)
        if value in (torch.randn, torch.rand, torch.zeros, torch.ones):
            return value(self.shape, dtype=self.dtype)
        return torch.as_tensor(value(), dtype=self.dtype)


@dataclass
class ScalarSpec:
    """One scalar argument: ``name``, ``value`` and its C type (int64, int32, uint64, uint32, float, double)."""

    name: str
    value: int | float
    ctype: str = "int64"

    def __post_init__(self) -> None:
        if self.ctype not in _CTYPES:
            raise ValueError(f"ScalarSpec {self.name!r}: unsupported ctype {self.ctype!r}; "
                             f"use one of {', '.join(_CTYPES)}")
