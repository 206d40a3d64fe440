"""The shared window arena of a distributed run, and shared host arrays.

Both are anonymous ``MAP_SHARED`` mappings made in the parent before the rank processes fork, so every
rank sees them at the same virtual address and writes of one rank are seen by all.
"""

from __future__ import annotations

import ctypes
import math
import mmap
from collections.abc import Sequence
from typing import Any

import numpy as np

from pypto.errors import UserError

PAGE = mmap.PAGESIZE
WINDOW_MIN_BYTES = 4096  # every window buffer takes at least this much of a region (upstream's floor)
WINDOW_ALIGN = 512
STATUS_BYTES = 64  # one PtoSimCommStatus slot per rank (sim_capi.h), after the regions


def window_layout(sizes: Sequence[int]) -> tuple[list[int], int]:
    """Offsets of window buffers of ``sizes`` bytes inside one region, and the region size.

    Each buffer is padded to at least 4 KiB and starts 512-byte aligned; the region is a whole number
    of pages. Every rank's region has the same layout, so buffer ``i`` of rank ``r`` is at
    ``arena.base + r * region_bytes + offsets[i]``.
    """
    offsets, at = [], 0
    for i, size in enumerate(sizes):
        if int(size) <= 0:
            raise UserError(f"window buffer {i}: size must be positive, got {size} bytes")
        offsets.append(at)
        at += _round_up(max(int(size), WINDOW_MIN_BYTES), WINDOW_ALIGN)
    return offsets, max(PAGE, _round_up(at, PAGE))


def _round_up(n: int, k: int) -> int:
    return (n + k - 1) // k * k


def _address(mm: mmap.mmap) -> int:
    probe = ctypes.c_char.from_buffer(mm)  # a short-lived buffer export: close() is not blocked by it
    try:
        return ctypes.addressof(probe)
    finally:
        del probe


class RankArena:
    """``nranks`` equal regions of ``region_bytes`` (rounded up to pages) in one shared mapping, zeroed.

    A status slot per rank follows the regions (where a rank's runtime reports what it waits for).
    ``view`` returns zero-copy numpy arrays that keep the mapping alive; ``close()`` drops the arena's
    own reference (the memory goes when the last view does). Use it as a context manager.
    """

    def __init__(self, nranks: int, region_bytes: int) -> None:
        if int(nranks) < 1:
            raise UserError(f"RankArena: nranks must be >= 1, got {nranks}")
        if int(region_bytes) <= 0:
            raise UserError(f"RankArena: region_bytes must be positive, got {region_bytes}")
        self.nranks = int(nranks)
        self.region_bytes = _round_up(int(region_bytes), PAGE)
        self.total_bytes = self.nranks * self.region_bytes + _round_up(self.nranks * STATUS_BYTES, PAGE)
        self._mm: mmap.mmap | None = mmap.mmap(-1, self.total_bytes, flags=mmap.MAP_SHARED | mmap.MAP_ANONYMOUS)
        self.base = _address(self._mm)

    @property
    def closed(self) -> bool:
        return self._mm is None

    def _map(self) -> mmap.mmap:
        if self._mm is None:
            raise UserError("RankArena is closed")
        return self._mm

    def status_address(self, rank: int) -> int:
        """Address of rank ``rank``'s PtoSimCommStatus slot."""
        self._check_rank(rank)
        self._map()
        return self.base + self.nranks * self.region_bytes + rank * STATUS_BYTES

    def view(self, rank: int, offset: int, shape: Sequence[int] | int, dtype: Any) -> np.ndarray:
        """Zero-copy array on rank ``rank``'s region at byte ``offset`` (must fit in the region)."""
        self._check_rank(rank)
        shape = (int(shape),) if np.isscalar(shape) else tuple(int(s) for s in shape)
        dt = np.dtype(dtype)
        nbytes = math.prod(shape) * dt.itemsize
        if offset < 0 or offset + nbytes > self.region_bytes:
            raise UserError(f"RankArena.view: {nbytes} bytes at offset {offset} do not fit a region of "
                            f"{self.region_bytes} bytes")
        start = rank * self.region_bytes + int(offset)
        return np.frombuffer(self._map(), dtype=dt, count=math.prod(shape), offset=start).reshape(shape)

    def zero(self) -> None:
        """Zero every region and status slot (between runs; never while ranks run)."""
        np.frombuffer(self._map(), dtype=np.uint8)[:] = 0

    def wait_status(self, rank: int) -> str | None:
        """What rank ``rank`` is blocked on in a comm wait, as text, or None when it is not waiting."""
        return read_status(self.status_address(rank))

    def close(self) -> None:
        """Release the arena's reference to the mapping (idempotent)."""
        mm, self._mm = self._mm, None
        if mm is not None:
            try:
                mm.close()
            except BufferError:  # views are alive: the mapping goes with the last of them
                pass

    def _check_rank(self, rank: int) -> None:
        if not 0 <= int(rank) < self.nranks:
            raise UserError(f"rank {rank} is out of range for an arena of {self.nranks} ranks")

    def __enter__(self) -> RankArena:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"RankArena(nranks={self.nranks}, region_bytes={self.region_bytes}, base={self.base:#x})"


class _Status(ctypes.Structure):
    _fields_ = [("waiting", ctypes.c_int32), ("cmp", ctypes.c_int32), ("expected", ctypes.c_int32),
                ("last_seen", ctypes.c_int32), ("cell_offset", ctypes.c_uint64), ("task", ctypes.c_uint32),
                ("kind", ctypes.c_int32)]


_KINDS = {2: "WAIT", 4: "BARRIER"}
_CMPS = {0: "==", 1: ">="}


def read_status(address: int) -> str | None:
    """Decode a PtoSimCommStatus slot (None when its rank is not waiting)."""
    s = _Status.from_address(address)
    if not s.waiting:
        return None
    return (f"blocked in comm {_KINDS.get(s.kind, 'wait')} (task {s.task}) on the signal cell at byte offset "
            f"{s.cell_offset} of its region: expected {_CMPS.get(s.cmp, '?')} {s.expected}, last seen {s.last_seen}")


def shared_array(shape: Sequence[int] | int, dtype: Any, init: Any = None) -> np.ndarray:
    """A zeroed (or ``init``-filled) numpy array in an anonymous shared mapping.

    Made before the rank processes fork, every rank reads and writes it in place (host tensors of a
    distributed program). The mapping is freed with the array.
    """
    shape = (int(shape),) if np.isscalar(shape) else tuple(int(s) for s in shape)
    dt = np.dtype(dtype)
    n = math.prod(shape)
    mm = mmap.mmap(-1, max(1, n * dt.itemsize), flags=mmap.MAP_SHARED | mmap.MAP_ANONYMOUS)
    arr = np.frombuffer(mm, dtype=dt, count=n).reshape(shape)
    if init is not None:
        arr[...] = np.asarray(init)
    return arr
