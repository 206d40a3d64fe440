"""Upstream's ``pypto.runtime.task_interface``: the chip runtime's argument types, as the simulator has them.

``ChipTensor`` is the 128-byte tensor descriptor a kernel reads (the simulator's ``ChipTensor``, a
``ctypes`` structure; ``Tensor`` names the same type), :func:`make_chip_tensor_arg` /
:func:`device_tensor_to_chip_tensor` fill one for a host tensor / a :class:`DeviceTensor` (the caller
keeps the memory alive), :func:`scalar_to_uint64` gives a scalar's 64-bit argument slot, and
``DataType`` / :func:`torch_dtype_to_datatype` are the runtime's element types. Upstream's native
call objects (``CallConfig``, ``ChipCallable``, ``ChipStorageTaskArgs``, ``CoreCallable``,
``TaskArgs``, the low-level ``Worker``) belong to its device runtime: the simulator's workers take
Python arguments directly (``ChipWorker.run(compiled, *args, config=RunConfig(...))``), so
constructing one raises :class:`~pypto.errors.UnsupportedFeatureError` saying so.
"""

from __future__ import annotations

import ctypes
from typing import Any

from pypto.errors import UnsupportedFeatureError
from pypto.runtime import dtypes
from pypto.runtime.dispatch import DeviceTensor, _pack, _tensor_facts, scalar_bits
from pypto.runtime.native import ChipTensor

Tensor = ChipTensor
DataType = dtypes.RtDType


def make_chip_tensor_arg(tensor: Any) -> ChipTensor:
    """The :class:`ChipTensor` describing a contiguous CPU tensor (torch or numpy) or a DeviceTensor."""
    addr, shape, dt, _owner = _tensor_facts(0, tensor, None)
    buf = ctypes.create_string_buffer(128)
    _pack(buf, 0, addr, tuple(shape), dt, 0)
    return ChipTensor.from_buffer_copy(buf)


def device_tensor_to_chip_tensor(dt: DeviceTensor) -> ChipTensor:
    """The :class:`ChipTensor` of a resident :class:`DeviceTensor` (ValueError once it was freed)."""
    if not isinstance(dt, DeviceTensor):
        raise TypeError(f"device_tensor_to_chip_tensor expects a DeviceTensor, got {type(dt).__name__}")
    return make_chip_tensor_arg(dt)


def scalar_to_uint64(value: Any) -> int:
    """The 64-bit argument slot of a scalar (int, float as fp32 bits, bool, or a ctypes value)."""
    return scalar_bits(0, value, None)


def torch_dtype_to_datatype(dtype: Any) -> dtypes.RtDType:
    """The runtime element type of a ``torch.dtype`` (KeyError naming it when the runtime has none)."""
    try:
        return dtypes.from_torch(dtype)
    except (TypeError, ValueError) as exc:
        raise KeyError(f"no runtime DataType for {dtype}") from exc


def _native_only(name: str) -> type:
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        raise UnsupportedFeatureError(
            f"pypto.runtime.task_interface.{name} is a native object of upstream's device runtime; the simulator "
            "has none", hint="run a compiled program with ChipWorker.run(compiled, *args, config=RunConfig(...)) "
                             "or pypto.runtime.execute_compiled(work_dir, args, platform=..., device_id=...)")

    return type(name, (), {"__init__": __init__, "__doc__": f"Upstream's native ``{name}`` (not on the simulator)."})


CallConfig = _native_only("CallConfig")
ChipCallable = _native_only("ChipCallable")
ChipStorageTaskArgs = _native_only("ChipStorageTaskArgs")
CoreCallable = _native_only("CoreCallable")
TaskArgs = _native_only("TaskArgs")
Worker = _native_only("Worker")
device_tensor_to_tensor = device_tensor_to_chip_tensor
make_tensor_arg = make_chip_tensor_arg

__all__ = ["CallConfig", "ChipCallable", "ChipStorageTaskArgs", "ChipTensor", "CoreCallable", "DataType", "TaskArgs",
           "Tensor", "Worker", "device_tensor_to_chip_tensor", "device_tensor_to_tensor", "make_chip_tensor_arg",
           "make_tensor_arg", "scalar_to_uint64", "torch_dtype_to_datatype"]
