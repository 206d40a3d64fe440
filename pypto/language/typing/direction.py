"""``pl.Out[T]`` / ``pl.InOut[T]``: parameter directions of a DSL function."""

from pypto.language.types import InOut, Out

__all__ = ["InOut", "Out"]
