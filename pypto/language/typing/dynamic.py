"""``pl.dynamic("N")``: a named dynamic dimension (``DynVar``)."""

from pypto.language.types import DynVar, dynamic

__all__ = ["DynVar", "dynamic"]
