"""``pl.Array[[n], dtype]``: a small on-core array of scalars."""

from pypto.language.types import Array

__all__ = ["Array"]
