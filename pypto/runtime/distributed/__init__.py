"""Distributed programs on the CPU simulators: one OS process per rank, a shared window arena.

Floor: inside ``runtime``; imports the rest of ``runtime`` (worker, build, native) and ``errors`` only.

- :class:`RankArena`: the window buffers of every rank in one anonymous shared mapping, made before the
  ranks fork (same address everywhere); :func:`window_layout` places buffers in a region;
  :func:`shared_array` makes host arrays every rank reads and writes in place.
- :class:`CommContext`: a rank's place in the run, given to that rank's ChipWorker (``comm=``).
- :func:`run_ranks`: fork one process per rank, run ``fn(rank)`` in each, collect the results; every
  failure, timeout or interrupt kills and reaps every rank and names the ranks in the error.

Fork rule: the parent forks only while no ChipWorker is alive in it (core threads must not be forked
mid-state; the idle implicit workers of ``compiled(...)`` calls are closed first); build workers inside
``fn`` (each rank makes its own). Build the programs (cached) before
``run_ranks`` so the ranks only load them.
"""

from pypto.runtime.distributed.arena import RankArena, shared_array, window_layout
from pypto.runtime.distributed.comm import CommContext
from pypto.runtime.distributed.ranks import (
    DistributedRunError,
    DistributedTimeoutError,
    RankFailure,
    run_ranks,
)

__all__ = [
    "CommContext",
    "DistributedRunError",
    "DistributedTimeoutError",
    "RankArena",
    "RankFailure",
    "run_ranks",
    "shared_array",
    "window_layout",
]
