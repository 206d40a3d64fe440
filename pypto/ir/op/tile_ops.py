"""``ir.op.tile.<name>(...)``: a typed ``tile.<name>`` Call built from the op registry."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pypto.ir.op._build import lookup, names


def __getattr__(name: str) -> Callable[..., Any]:
    return lookup("tile", name, __name__)


def __dir__() -> list[str]:
    return names("tile")
