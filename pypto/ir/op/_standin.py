"""An IR op builder that pypto does not have: calling it raises UnsupportedFeatureError with the reason."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pypto.errors import UnsupportedFeatureError


def stand_in(qualname: str, why: str, instead: str = "") -> Callable[..., Any]:
    def unsupported(*_args: Any, **_kwargs: Any) -> Any:
        raise UnsupportedFeatureError(f"{qualname} is not supported by pypto: {why}", hint=instead or None)

    unsupported.__name__ = qualname.rsplit(".", 1)[-1]
    unsupported.__qualname__ = qualname
    unsupported.__doc__ = f"Not supported by pypto: {why}."
    return unsupported
