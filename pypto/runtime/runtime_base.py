"""Upstream's ``pypto.runtime.runtime_base``: :class:`Worker`, the base both worker kinds share.

:class:`~pypto.runtime.ChipWorker` (one chip) and the distributed
:class:`~pypto.jit.distributed.worker.DistributedWorker` are registered as its subclasses, so library
code can type against ``Worker`` and ``isinstance(w, Worker)`` holds for both. A subclass offers
memory (``malloc``/``free``/``copy_to``/``copy_from`` where its level has raw memory,
``alloc_tensor``/``free_tensor`` for :class:`~pypto.runtime.DeviceTensor` s) and dispatch (``run``).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any


class Worker(ABC):
    """A runtime handle: device tensors and dispatch of compiled programs."""

    @abstractmethod
    def alloc_tensor(self, shape: Any, dtype: Any, *, init: Any = None, worker_id: int = 0) -> Any:
        """A device tensor of ``shape``/``dtype`` (zeroed, or filled from ``init``) on worker ``worker_id``."""

    @abstractmethod
    def free_tensor(self, t: Any, *, worker_id: int = 0) -> None:
        """Release a tensor from :meth:`alloc_tensor` (idempotent)."""

    @abstractmethod
    def run(self, compiled: Any, *args: Any, config: Any = None) -> Any:
        """Run ``compiled`` with ``args`` on this worker."""


__all__ = ["Worker"]
