"""``pl.Tile[[shape], dtype]``: an on-chip tile annotation."""

from pypto.language.types import Tile

__all__ = ["Tile"]
