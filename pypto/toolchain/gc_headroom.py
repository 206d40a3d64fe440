"""Fewer garbage-collector passes while a compile (or a DSL parse) runs.

A compile allocates hundreds of thousands of short-lived, acyclic objects (immutable IR nodes, types,
sets of names). Under CPython's default first-generation threshold the collector runs after every 700
net container allocations, finds next to nothing to free, and promotes the survivors of the moment
into older generations, which later full collections then traverse along with every object the process
holds. Raising the first-generation threshold for the duration of a compile lets those temporaries die
by reference counting before any collection looks at them. Nothing is skipped: collections still run
(just less often), reference counting frees everything acyclic at once, and the previous thresholds
come back when the last overlapping compile ends. ``@pl.program`` / ``@pl.function`` parses run
under it too (they build the same kind of IR).
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

# Net container allocations between first-generation collections during a compile (CPython's default
# is 700). At most this many objects of cyclic garbage wait for a collection: a few megabytes.
COMPILE_GEN0_THRESHOLD = 50_000

_lock = threading.Lock()
_depth = 0
_saved: tuple[int, ...] = ()


@contextmanager
def gc_headroom(gen0: int = COMPILE_GEN0_THRESHOLD) -> Iterator[None]:
    """Run the block with the first-generation threshold at least ``gen0``; nested and concurrent uses
    share one raise, undone when the outermost ends. A threshold of 0 (collection off) is left alone."""
    global _depth, _saved
    with _lock:
        if _depth == 0:
            _saved = gc.get_threshold()
            if 0 < _saved[0] < gen0:
                gc.set_threshold(gen0, *_saved[1:])
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                gc.set_threshold(*_saved)
