"""Public face for upstream's ``pypto.ir.distributed_compiled_program`` import path.

Distributed (HOST-level, multi-chip) programs are not compiled by this pypto yet: ``ir.compile``
rejects a ``distributed_config`` and HOST-level functions with a UserError. What this module gives
is the import path and the configuration record, so programs that import it (and single-chip code
paths of those programs) load; ``DistributedConfig`` validates its fields the way a multi-chip run
would need them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pypto.errors import UserError


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


class DistributedCompiledProgram:
    """The compiled form of a HOST-level program; this pypto cannot produce one."""

    def __init__(self, *_args: Any, **_kwargs: Any) -> None:
        raise UserError("distributed (HOST-level, multi-chip) programs are not supported by this pypto",
                        hint="compile the CHIP-level part of the program on its own")


__all__ = ["DistributedCompiledProgram", "DistributedConfig"]
