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
from pypto.language.distributed._markers import construct
from pypto.language.types import TypeCtor


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


class _DistributedTensorCtor(TypeCtor):
    """``pld.DistributedTensor[[shape], dtype]``: a tensor bound to a window buffer (visible to peers).

    In a kernel it is an ordinary GM tensor (this rank's copy of the window); comm ops require it.
    """

    __slots__ = ()

    def __init__(self) -> None:
        super().__init__("Tensor")

    def __repr__(self) -> str:
        return "pld.DistributedTensor"


DistributedTensor = _DistributedTensorCtor()

world_size = construct("pld.world_size", "the @pl.jit.host orchestrator")
alloc_window_buffer = construct("pld.alloc_window_buffer", "the @pl.jit.host orchestrator")
window = construct("pld.window", "the @pl.jit.host orchestrator")
get_comm_ctx = construct("pld.get_comm_ctx", "a @pl.jit.incore kernel")
rank = construct("pld.rank", "a @pl.jit.incore kernel")
nranks = construct("pld.nranks", "a @pl.jit.incore kernel")

__all__ = [
    "AtomicType", "DistributedTensor", "NotifyOp", "ReduceOp", "WaitCmp", "alloc_window_buffer", "get_comm_ctx",
    "nranks", "rank", "system", "tensor", "tile", "window", "world_size",
]
