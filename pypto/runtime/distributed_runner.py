"""Upstream's ``pypto.runtime.distributed_runner``: what a SubWorker callback receives, dispatch handles.

:class:`DistributedWorker` and :func:`execute_distributed_compiled` compile-side objects live in
:mod:`pypto.jit.distributed` and are re-exported through ``_LAZY``.

A callback bound with ``prepare(callbacks={name: fn})`` is called as ``fn(args)`` with one
:class:`ContinuousTensor` per argument of the SubWorker call (scalars are passed as they are);
:func:`_tensor_from_continuous` turns one into a zero-copy ``torch.Tensor`` on the same memory, so a
callback may also write it.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass
from typing import Any

import numpy as np

from pypto.lazy import lazy_getattr
from pypto.runtime import dtypes


@dataclass(frozen=True)
class ContinuousTensor:
    """A contiguous tensor in host (shared) memory: address, element shape, runtime dtype."""

    data: int
    shape: tuple[int, ...]
    dtype: dtypes.RtDType
    owner: Any = None  # keeps the memory alive while the callback runs

    @staticmethod
    def of(value: Any) -> Any:
        """The callback argument for ``value`` (a torch tensor, numpy array or DeviceTensor)."""
        import torch

        if isinstance(value, torch.Tensor):
            if not value.is_contiguous():
                value = value.contiguous()
            return ContinuousTensor(value.data_ptr(), tuple(value.shape), dtypes.from_torch(value.dtype), value)
        if isinstance(value, np.ndarray):
            return ContinuousTensor(value.ctypes.data, value.shape, dtypes.from_numpy(value.dtype), value)
        if hasattr(value, "data_ptr") and hasattr(value, "shape"):
            return ContinuousTensor(int(value.data_ptr), tuple(value.shape), dtypes.coerce(value.dtype), value)
        return value


def _tensor_from_continuous(ct: Any) -> Any:
    """A zero-copy ``torch.Tensor`` on the memory of ``ct`` (a ContinuousTensor; a tensor is returned as is)."""
    import torch

    if isinstance(ct, torch.Tensor):
        return ct
    if not isinstance(ct, ContinuousTensor):
        raise TypeError(f"_tensor_from_continuous expects a ContinuousTensor, got {type(ct).__name__}")
    n = 1
    for d in ct.shape:
        n *= d
    raw = (ctypes.c_byte * max(1, n * ct.dtype.itemsize)).from_address(ct.data)
    arr = np.frombuffer(raw, dtype=dtypes.numpy_carrier(ct.dtype), count=n).reshape(ct.shape)
    t = torch.from_numpy(arr)
    return t if ct.dtype.numpy else t.view(getattr(torch, ct.dtype.torch))  # raw carrier bits, reinterpreted


class DistributedRunHandle:
    """Completion handle of :meth:`DistributedWorker.submit <pypto.jit.distributed.worker.DistributedWorker.submit>`.

    On the simulator a submitted dispatch runs to completion before ``submit`` returns (upstream's
    synchronous fallback), so the handle is already terminal: ``done`` is True, and :meth:`result`
    / :meth:`wait` raise the dispatch's error, if it failed, every time they are called.
    """

    def __init__(self, error: BaseException | None = None) -> None:
        self._error = error

    @property
    def done(self) -> bool:
        return True

    def result(self, timeout: float | None = None) -> None:
        """Raise the dispatch's error, if any (``timeout`` must be a non-negative number or None)."""
        if timeout is not None and (timeout < 0 or timeout != timeout or timeout == float("inf")):
            raise ValueError("DistributedRunHandle timeout must be a non-negative finite number of seconds")
        if self._error is not None:
            raise self._error

    wait = result


_LAZY = {"DistributedWorker": "pypto.jit.distributed.worker",
         "execute_distributed_compiled": "pypto.jit.distributed.program"}


__getattr__ = lazy_getattr(__name__, _LAZY, globals())


__all__ = ["ContinuousTensor", "DistributedRunHandle", "DistributedWorker",  # noqa: F822 - _LAZY names load on use
           "_tensor_from_continuous", "execute_distributed_compiled"]
