"""``pl.Tuple[...]``: a tuple annotation (several return values)."""

from pypto.language.types import Tuple

__all__ = ["Tuple"]
