"""The host orchestrator at run time: the ``__rt__`` object of ``host_orch.py`` records a plan.

Running the generated host function does not touch a chip: window allocations become
:class:`WindowBuffer` records (their offsets inside every rank's region of the shared arena), each
dispatch a :class:`Dispatch` of one chip-level program on one rank, each SubWorker call a
:class:`Callback`. Consecutive dispatches form one :class:`Phase`, run by all ranks at once (ranks
rendezvous through their windows); a callback ends a phase and runs after every rank finished it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pypto.errors import UserError
from pypto.ir.dtypes import DataType
from pypto.runtime.distributed import window_layout


@dataclass(frozen=True)
class WindowBuffer:
    """``pld.alloc_window_buffer``: one buffer of ``nbytes``, at ``offset`` inside every rank's region
    (the layout of :func:`~pypto.runtime.distributed.window_layout`: at least 4 KiB each, 512-aligned)."""

    index: int
    shape: tuple[int, ...]
    dtype: DataType
    offset: int
    nbytes: int


@dataclass(frozen=True)
class WindowView:
    """``pld.window(buf, shape, dtype)``: the rank's own copy of ``buf`` seen as a tensor."""

    buffer: WindowBuffer
    shape: tuple[int, ...]
    dtype: DataType


@dataclass
class Dispatch:
    program: str
    args: list[Any]
    rank: int


@dataclass
class Callback:
    name: str
    args: list[Any]


@dataclass
class Phase:
    dispatches: list[Dispatch] = field(default_factory=list)


def _dtype(value: Any) -> DataType:
    if isinstance(value, DataType):
        return value
    try:
        return DataType(str(value))
    except ValueError:
        raise UserError(f"'{value}' is not a pypto dtype", hint="use pl.FP32, pl.INT32, ...") from None


def _shape(value: Any) -> tuple[int, ...]:
    dims = list(value) if isinstance(value, list | tuple) else [value]
    if not dims or any(not isinstance(d, int) or d <= 0 for d in dims):
        raise UserError(f"a window shape must be a list of positive ints, got {value!r}")
    return tuple(dims)


class HostRecorder:
    """The ``__rt__`` of a host function: ``world_size``, ``alloc_window_buffer``, ``window``,
    ``dispatch`` and ``callback``.

    ``outputs`` maps a chip program name to the argument positions it writes (Out/InOut): a dispatch
    returns those arguments, as the chip call would.
    """

    def __init__(self, world_size: int, outputs: dict[str, list[int]], callbacks: frozenset[str]) -> None:
        self._world = world_size
        self._outputs = outputs
        self._callbacks = callbacks
        self.buffers: list[WindowBuffer] = []
        self.steps: list[Phase | Callback] = []

    @property
    def region_bytes(self) -> int:
        return window_layout([b.nbytes for b in self.buffers] or [1])[1]

    def world_size(self) -> int:
        return self._world

    def alloc_window_buffer(self, shape: Any, dtype: Any = DataType.FP32) -> WindowBuffer:
        dims, dt = _shape(shape), _dtype(dtype)
        nbytes = _nbytes(dims, dt)
        offsets, _ = window_layout([b.nbytes for b in self.buffers] + [nbytes])  # >= 4 KiB each, 512-aligned
        buf = WindowBuffer(len(self.buffers), dims, dt, offsets[-1], nbytes)
        self.buffers.append(buf)
        return buf

    def window(self, buf: Any, shape: Any, dtype: Any = None) -> WindowView:
        if not isinstance(buf, WindowBuffer):
            raise UserError(f"pld.window() takes a buffer from pld.alloc_window_buffer, got {type(buf).__name__}")
        dims, dt = _shape(shape), _dtype(dtype if dtype is not None else buf.dtype)
        if _nbytes(dims, dt) > _nbytes(buf.shape, buf.dtype):
            raise UserError(f"pld.window() view {list(dims)} {dt.value} is larger than its buffer "
                            f"{list(buf.shape)} {buf.dtype.value}")
        return WindowView(buf, dims, dt)

    def dispatch(self, program: str, args: list[Any], device: Any = None) -> Any:
        rank = 0 if device is None else device
        if not isinstance(rank, int) or not 0 <= rank < self._world:
            raise UserError(f"dispatch of '{program}' to device={device!r}: the program runs on "
                            f"{self._world} rank(s) (device must be in [0, {self._world}))",
                            hint="give DistributedConfig(device_ids=[...]) one id per rank the host loop uses")
        if not self.steps or not isinstance(self.steps[-1], Phase):
            self.steps.append(Phase())
        self.steps[-1].dispatches.append(Dispatch(program, list(args), rank))
        outs = [args[i] for i in self._outputs.get(program, []) if i < len(args)]
        return outs[0] if len(outs) == 1 else (tuple(outs) if outs else None)

    def callback(self, name: str, args: list[Any]) -> None:
        if name not in self._callbacks:
            raise UserError(f"SubWorker '{name}' has no bound callback")
        self.steps.append(Callback(name, list(args)))


def _nbytes(shape: tuple[int, ...], dt: DataType) -> int:
    n = dt.nbytes
    for d in shape:
        n *= d
    return n
