"""Upstream's ``pypto.ir.distributed_compiled_program`` import path: the configuration record of a
distributed (HOST-level, multi-chip) compile, and :class:`DistributedCompiledProgram` re-exported from
:mod:`pypto.jit.distributed.program` through ``_LAZY`` (it compiles and runs, floors above ``ir``).

Floor: ``ir`` (imports nothing of pypto; the one upward name is declared in ``_LAZY``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class DistributedConfig:
    """Where and how a multi-chip program would run.

    ``device_ids``: distinct non-negative device indices, one rank each. ``num_sub_workers``: extra
    sub-workers per chip process (0 = as many as the program declares). ``runtime``: the runtime
    flavour. ``aicpu_thread_num``: 0 for the platform default, otherwise at least 2.
    """

    device_ids: list[int] = field(default_factory=lambda: [0])
    num_sub_workers: int = 0
    runtime: str = "tensormap_and_ringbuffer"
    aicpu_thread_num: int = 0

    def __post_init__(self) -> None:
        ids = list(self.device_ids)
        if not ids:
            raise ValueError("DistributedConfig.device_ids is empty: give at least one device index")
        if any(d < 0 for d in ids) or len(set(ids)) != len(ids):
            raise ValueError(f"DistributedConfig.device_ids must be distinct non-negative indices, got {ids}")
        if self.num_sub_workers < 0:
            raise ValueError(f"DistributedConfig.num_sub_workers must be >= 0, got {self.num_sub_workers}")
        if self.aicpu_thread_num < 0 or self.aicpu_thread_num == 1:
            raise ValueError("DistributedConfig.aicpu_thread_num must be 0 (platform default) or >= 2, "
                             f"got {self.aicpu_thread_num}")


_LAZY = {"DistributedCompiledProgram": "pypto.jit.distributed.program"}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = ["DistributedCompiledProgram", "DistributedConfig"]
