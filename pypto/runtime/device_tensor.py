"""Upstream's ``pypto.runtime.device_tensor``: :class:`DeviceTensor` and :class:`StackedDeviceTensor`.

A :class:`StackedDeviceTensor` is a ``[B, *tail]`` tensor whose ``B`` leading-dim shards are each
resident on a worker (``worker_ids[i]`` holds ``shards[i]``); a distributed program takes it in place
of a host tensor its HOST orchestrator slices per rank (``x[r]``). On the simulator every rank
shares one host, so :meth:`DistributedWorker.alloc_stacked_tensor
<pypto.jit.distributed.worker.DistributedWorker.alloc_stacked_tensor>` keeps the shards contiguous in
one shared buffer, which is what a program is given.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pypto.runtime.dispatch import DeviceTensor


@dataclass(frozen=True, init=False)
class StackedDeviceTensor:
    """``shards`` (one :class:`DeviceTensor` of shape ``full_shape[1:]`` per leading index), ``worker_ids``."""

    shards: tuple[DeviceTensor, ...]
    full_shape: tuple[int, ...]
    worker_ids: tuple[int, ...]

    def __init__(self, shards: Sequence[DeviceTensor], full_shape: Sequence[int], worker_ids: Sequence[int]) -> None:
        shards_t, full_t, workers_t = tuple(shards), tuple(int(d) for d in full_shape), tuple(worker_ids)
        if len(full_t) < 2 or full_t[0] < 1:
            raise ValueError(f"StackedDeviceTensor.full_shape must be [B >= 1, *tail] of rank >= 2, got {full_t}")
        if len(shards_t) != full_t[0] or len(workers_t) != full_t[0]:
            raise ValueError(f"StackedDeviceTensor of {full_t} needs {full_t[0]} shards and worker_ids, got "
                             f"{len(shards_t)} and {len(workers_t)}")
        if len(set(workers_t)) != len(workers_t):
            raise ValueError(f"StackedDeviceTensor.worker_ids must be distinct, got {workers_t}")
        for i, shard in enumerate(shards_t):
            if not isinstance(shard, DeviceTensor):
                raise TypeError(f"shard {i} must be a DeviceTensor, got {type(shard).__name__}")
            if shard.shape != full_t[1:]:
                raise ValueError(f"shard {i} has shape {shard.shape}; expected {full_t[1:]} (the tail of {full_t})")
            if shard.dtype != shards_t[0].dtype:
                raise ValueError(f"shard {i} dtype {shard.dtype} differs from shard 0 dtype {shards_t[0].dtype}")
        object.__setattr__(self, "shards", shards_t)
        object.__setattr__(self, "full_shape", full_t)
        object.__setattr__(self, "worker_ids", workers_t)

    @property
    def dtype(self) -> Any:
        return self.shards[0].dtype

    @property
    def shape(self) -> tuple[int, ...]:
        return self.full_shape

    def contiguous_base(self) -> int | None:
        """The address of shard 0 when the shards lie back to back in order (one buffer), else None."""
        step = self.shards[0].nbytes
        base = self.shards[0].data_ptr
        ok = all(s.data_ptr == base + i * step for i, s in enumerate(self.shards))
        return base if ok else None

    def __getitem__(self, idx: int | tuple[Any, ...]) -> DeviceTensor:
        """Shard ``i`` for ``x[i]``, ``x[i, ...]`` or ``x[i, <whole slices>]``; a partial slice is a ValueError."""
        rank, rest = (idx[0], idx[1:]) if isinstance(idx, tuple) and idx else (idx, ())
        if isinstance(rank, bool) or not isinstance(rank, int):
            raise TypeError(f"StackedDeviceTensor leading index must be an int, got {type(rank).__name__}")
        if not 0 <= rank < len(self.shards):
            raise IndexError(f"shard index {rank} out of range [0, {len(self.shards)})")
        tail = self.full_shape[1:]
        if sum(s is Ellipsis for s in rest) > 1:
            raise IndexError("StackedDeviceTensor index accepts at most one Ellipsis")
        rest = tuple(s for s in rest if s is not Ellipsis)
        if len(rest) > len(tail):
            raise IndexError(f"too many indices for StackedDeviceTensor of shape {self.full_shape}")
        for axis, s in enumerate(rest):
            if s not in (slice(None), slice(0, tail[axis])):
                raise ValueError(f"StackedDeviceTensor only supports whole-shard slicing on the leading dim; got "
                                 f"{s} on axis {axis + 1} (shard shape {tail})")
        return self.shards[rank]

    def __repr__(self) -> str:
        return f"StackedDeviceTensor(full_shape={self.full_shape}, worker_ids={self.worker_ids}, dtype={self.dtype})"


__all__ = ["DeviceTensor", "StackedDeviceTensor"]
