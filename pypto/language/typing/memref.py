"""``pl.MemRef(...)``: an explicit memory reference in a tile annotation."""

from pypto.language.types import MemRef

__all__ = ["MemRef"]
