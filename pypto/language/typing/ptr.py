"""``pl.Ptr``: a raw pointer annotation."""

from pypto.language.types import Ptr

__all__ = ["Ptr"]
