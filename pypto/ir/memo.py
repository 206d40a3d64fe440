"""Results remembered per IR object: the IR is immutable, so what was computed from a node holds for as
long as the node lives, and a pass that leaves a node alone hands the same object on."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class IdentityMemo:
    """``make(obj)`` once per (key, object). An entry keeps its object alive, so its id is not reused
    while cached; the table starts afresh when it is full."""

    def __init__(self, limit: int) -> None:
        self._table: dict[tuple[object, int], tuple[Any, object]] = {}
        self._limit = limit

    def get(self, key: object, obj: Any, make: Callable[[Any], object]) -> Any:
        hit = self._table.get((key, id(obj)))
        if hit is not None and hit[0] is obj:
            return hit[1]
        value = make(obj)
        if len(self._table) >= self._limit:
            self._table.clear()
        self._table[(key, id(obj))] = (obj, value)
        return value
