"""Upstream's ``pypto.language.typing``: the DSL's annotation types, at upstream's module paths.

Every name is pl's own (``typing.Tensor is pl.Tensor``); ``IntLike`` / ``BoolLike`` and the prefetch
handle types are pl's stand-ins (not expressible with ptoas 0.1.1).

Floor: ``language`` (imports ``ir``).
"""

from __future__ import annotations

from pypto.language.typing.array import Array
from pypto.language.typing.direction import InOut, Out
from pypto.language.typing.dynamic import DynVar, dynamic
from pypto.language.typing.memref import MemRef
from pypto.language.typing.prefetch_handle import AsyncEvent, AsyncSession, PrefetchAsyncContext
from pypto.language.typing.ptr import Ptr
from pypto.language.typing.scalar import RUNTIME, BoolLike, RuntimeScalarMarker, Scalar, predicate_to_expr
from pypto.language.typing.tensor import Tensor
from pypto.language.typing.tile import Tile
from pypto.language.typing.tuple import Tuple
from pypto.language.unsupported import lookup

IntLike = lookup("pl", "IntLike")

__all__ = [
    "RUNTIME", "Array", "AsyncEvent", "AsyncSession", "BoolLike", "DynVar", "InOut", "IntLike", "MemRef", "Out",
    "PrefetchAsyncContext", "Ptr", "RuntimeScalarMarker", "Scalar", "Tensor", "Tile", "Tuple", "dynamic",
    "predicate_to_expr",
]
