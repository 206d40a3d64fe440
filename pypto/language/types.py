"""Annotation objects of the DSL (``pl.Tensor[[64, 64], pl.FP32]``, ``pl.Out[...]``, ``pl.dynamic``).

Python evaluates annotations and decorator arguments when a ``def`` runs, so these objects must
accept any subscript. They carry no meaning at run time: the frontend reads the annotation *source*
(see ``annotations.py``) and only uses these classes to recognise what a name refers to.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pypto.ir.dtypes import DataType
from pypto.ir.enums import ArgDirection
from pypto.ir.expr import Var
from pypto.ir.types import ScalarType


@dataclass(frozen=True, slots=True)
class AnnotationSpec:
    """What ``ctor[items]`` evaluated to at def time (kept only for introspection)."""

    ctor: str
    items: Any


class TypeCtor:
    """``pl.Tensor``, ``pl.Tile``, ``pl.Scalar``, ``pl.Out``, ``pl.InOut``, ``pl.Tuple``, ``pl.Ptr``."""

    __slots__ = ("kind",)

    def __init__(self, kind: str) -> None:
        self.kind = kind

    def __getitem__(self, items: Any) -> AnnotationSpec:
        return AnnotationSpec(self.kind, items)

    def __repr__(self) -> str:
        return f"pl.{self.kind}"


Tensor = TypeCtor("Tensor")
Tile = TypeCtor("Tile")
Scalar = TypeCtor("Scalar")
Out = TypeCtor("Out")
InOut = TypeCtor("InOut")
Tuple = TypeCtor("Tuple")
Ptr = TypeCtor("Ptr")
Array = TypeCtor("Array")
PtrType = Ptr
TaskId = AnnotationSpec("Scalar", DataType.TASK_ID)


class DynVar:
    """A dynamic dimension ``M = pl.dynamic("M")``; the same object is the same IR Var everywhere."""

    __slots__ = ("name", "var")

    def __init__(self, name: str) -> None:
        if not isinstance(name, str) or not name.isidentifier():
            raise TypeError(f"pl.dynamic() needs an identifier name, got {name!r}")
        self.name = name
        self.var = Var(name, ScalarType(DataType.INDEX))

    def __repr__(self) -> str:
        return f'pl.dynamic("{self.name}")'


def dynamic(name: str) -> DynVar:
    """Declare a dynamic dimension; reuse the returned object for the same dimension."""
    return DynVar(name)


@dataclass(frozen=True, slots=True)
class _CallSpec:
    """Def-time value of ``pl.MemRef(...)``, ``pl.TileView(...)``, ``pl.TensorView(...)``."""

    ctor: str
    args: tuple[Any, ...]
    kwargs: dict[str, Any]

    def __getitem__(self, slot: Any) -> _CallSpec:
        return _CallSpec(self.ctor, self.args, {**self.kwargs, SLOT_KEY: slot})


SLOT_KEY = "__slot"  # _CallSpec kwarg holding the [k] of pl.MemRef(..., slots=N)[k]


def MemRef(*args: Any, **kwargs: Any) -> _CallSpec:  # noqa: N802
    """Annotation slot ``pl.MemRef(base, pl.const(offset, pl.INT64), size)`` or ``pl.MemRef("name")``;
    ``pl.MemRef("name", slots=N)[k]`` picks slot ``k`` of an N-slot buffer."""
    return _CallSpec("MemRef", args, kwargs)


def TileView(*args: Any, **kwargs: Any) -> _CallSpec:  # noqa: N802
    """Annotation slot ``pl.TileView(blayout=..., slayout=..., fractal=...)``."""
    return _CallSpec("TileView", args, kwargs)


def TensorView(*args: Any, **kwargs: Any) -> _CallSpec:  # noqa: N802
    """Annotation slot ``pl.TensorView(stride=..., layout=..., valid_shape=..., pad=...)``."""
    return _CallSpec("TensorView", args, kwargs)


class _ArgDirs:
    """``pl.adir.input`` ... call-site argument direction markers."""

    input = ArgDirection.Input
    output = ArgDirection.Output
    inout = ArgDirection.InOut
    output_existing = ArgDirection.OutputExisting
    no_dep = ArgDirection.NoDep
    scalar = ArgDirection.Scalar


adir = _ArgDirs()
