"""``pypto.language.distributed`` (imported as ``pld``): the names of distributed (HOST-level) programs.

A distributed program has three levels: a ``@pl.jit.host`` orchestrator (control plane on the host: it
allocates window buffers and dispatches one chip-level program per rank with ``device=r``), the
chip-level ``@pl.jit`` orchestrations, and their ``@pl.jit.incore`` kernels. The host body is lowered
by :mod:`pypto.language.distributed.host_frontend`; the comm ops of kernels are split out by
:mod:`pypto.language.distributed.comm_split`. Every name here is a DSL construct: called as plain
Python outside those bodies it raises a :class:`~pypto.errors.UserError` saying where it belongs.

Floor: ``language`` (imports ``ir`` and ``errors`` only).
"""

from __future__ import annotations

from enum import IntEnum

from pypto.ir.enums import AtomicType
from pypto.language.distributed import system, tensor, tile
from pypto.language.distributed.system import get_comm_ctx, nranks, rank, world_size
from pypto.language.distributed.tensor import alloc_window_buffer, window
from pypto.language.distributed.typing import CommCtx, CommCtxType, DistributedTensor


class NotifyOp(IntEnum):
    """How ``pld.system.notify`` updates the peer's signal cell."""

    Set = 0
    AtomicAdd = 1


class WaitCmp(IntEnum):
    """How ``pld.system.wait`` compares the local signal cell with ``expected``."""

    Eq = 0
    Ge = 1


class ReduceOp(IntEnum):
    """The combining operation of a reducing collective."""

    Sum = 0
    Max = 1
    Min = 2
    Prod = 3


# the unified short forms: a tile moves with pld.tile.* (a whole-tensor remote_store is not implemented)
remote_load = tile.remote_load
remote_store = tile.remote_store

__all__ = [
    "AtomicType", "CommCtx", "CommCtxType", "DistributedTensor", "NotifyOp", "ReduceOp", "WaitCmp",
    "alloc_window_buffer", "get_comm_ctx", "nranks", "rank", "remote_load", "remote_store", "system", "tensor",
    "tile", "window", "world_size",
]
