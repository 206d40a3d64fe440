"""Stand-ins for upstream C++-binding names with no meaning on pypto's toolchain.

A stand-in exists (so ``from pypto.pypto_core.passes import X`` and attribute chains resolve) and any
use — calling it, indexing it, or reading an attribute off it and using that — raises an
UnsupportedFeatureError that names it and says why.
"""

from __future__ import annotations

from typing import Any

from pypto.errors import UnsupportedFeatureError


class StandIn:
    """``pypto.pypto_core.<module>.<name>`` that pypto does not provide."""

    __slots__ = ("_qualname", "_why")

    def __init__(self, qualname: str, why: str) -> None:
        object.__setattr__(self, "_qualname", qualname)
        object.__setattr__(self, "_why", why)

    def error(self) -> UnsupportedFeatureError:
        return UnsupportedFeatureError(f"{self._qualname} is not available in pypto: {self._why}")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise self.error()

    def __getitem__(self, item: Any) -> Any:
        raise self.error()

    def __getattr__(self, name: str) -> StandIn:
        if name.startswith("__"):
            raise AttributeError(name)
        return StandIn(f"{self._qualname}.{name}", self._why)

    def __eq__(self, other: object) -> bool:
        raise self.error()

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return f"<{self._qualname}: not available in pypto>"


def stand_ins(module: str, names: str, why: str) -> dict[str, StandIn]:
    """``{name: StandIn}`` for each space-separated name."""
    return {n: StandIn(f"{module}.{n}", why) for n in names.split()}
