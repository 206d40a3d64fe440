"""CommContext: a rank's place in a distributed run, given to the ChipWorker of that rank."""

from __future__ import annotations

from dataclasses import dataclass

from pypto.errors import UserError
from pypto.runtime.distributed.arena import RankArena

DEFAULT_WAIT_TIMEOUT_S = 30.0  # as RunConfig.deadlock_timeout_s (a polled wait does not count as no progress)


@dataclass(frozen=True, slots=True)
class CommContext:
    """What a rank's chip runtime needs for comm tasks.

    Attributes:
        rank: this process's rank, in ``[0, nranks)``.
        nranks: number of ranks of the run.
        arena_base: address of the shared arena (same in every rank).
        region_bytes: bytes per rank region; peer ``p``'s copy of a window element at ``addr`` of rank
            ``rank`` is at ``addr + (p - rank) * region_bytes``.
        wait_timeout_s: how long a comm WAIT/BARRIER may wait before the run fails with a
            :class:`~pypto.runtime.native.CommTimeoutError` naming the rank, cell, expected and last value.
        status_address: the rank's status slot in the arena (0: none), where its runtime reports what it
            waits for so the parent can name it when the run times out.

    Give it to the worker of the rank: ``ChipWorker(config, comm=ctx)`` or ``worker.set_comm_context(ctx)``
    (``None`` clears it). Orchestrations read it with ``rt_comm_rank()`` / ``rt_comm_nranks()``.
    """

    rank: int
    nranks: int
    arena_base: int
    region_bytes: int
    wait_timeout_s: float = DEFAULT_WAIT_TIMEOUT_S
    status_address: int = 0

    def __post_init__(self) -> None:
        if self.nranks < 1 or not 0 <= self.rank < self.nranks:
            raise UserError(f"CommContext: rank {self.rank} is not in [0, {self.nranks})")
        if self.region_bytes <= 0 or self.arena_base <= 0:
            raise UserError("CommContext: arena_base and region_bytes must be positive")
        if self.wait_timeout_s <= 0:
            raise UserError(f"CommContext: wait_timeout_s must be positive, got {self.wait_timeout_s}")

    @classmethod
    def for_rank(cls, arena: RankArena, rank: int, wait_timeout_s: float = DEFAULT_WAIT_TIMEOUT_S) -> CommContext:
        """The context of ``rank`` on ``arena`` (with its status slot)."""
        return cls(rank, arena.nranks, arena.base, arena.region_bytes, wait_timeout_s, arena.status_address(rank))

    def peer_address(self, address: int, peer: int) -> int:
        """Address of peer ``peer``'s copy of the window element at ``address`` (of this rank)."""
        if not 0 <= peer < self.nranks:
            raise UserError(f"peer {peer} is not in [0, {self.nranks})")
        return address + (peer - self.rank) * self.region_bytes
