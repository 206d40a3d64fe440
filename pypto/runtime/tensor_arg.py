"""Upstream's ``pypto.runtime.tensor_arg``: one orchestration tensor argument as the kernel sees it.

:func:`make_tensor_arg` gives the :class:`~pypto.runtime.task_interface.ChipTensor` of a host tensor,
of a :class:`~pypto.runtime.DeviceTensor` the given worker allocated (a tensor of another worker, or
a freed one, is refused as upstream refuses it), or returns a ``ChipTensor`` as it is.
"""

from __future__ import annotations

from typing import Any

from pypto.runtime.dispatch import DeviceTensor
from pypto.runtime.native import ChipTensor
from pypto.runtime.task_interface import make_chip_tensor_arg


def bind_tensor_arg_owner(worker: Any, owner: Any) -> None:
    """Record ``owner`` as the worker whose DeviceTensors ``worker`` may pass (upstream binds raw workers)."""
    worker._pypto_tensor_owner = owner


def make_tensor_arg(worker: Any, arg: Any) -> ChipTensor:
    """The :class:`ChipTensor` of ``arg`` for a dispatch on ``worker``."""
    if isinstance(arg, ChipTensor):
        return arg
    if isinstance(arg, DeviceTensor):
        owner = getattr(worker, "_pypto_tensor_owner", worker)
        if arg.buffer is None:
            raise TypeError("A raw-pointer DeviceTensor cannot be passed; allocate it with Worker.alloc_tensor()")
        if arg.buffer is not owner or arg.freed:
            raise ValueError("DeviceTensor belongs to another Worker or was freed; allocate it on this Worker")
    return make_chip_tensor_arg(arg)


__all__ = ["bind_tensor_arg_owner", "make_tensor_arg"]
