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

    def _text(self) -> str:
        return self.name


class DynDim:
    """``M * 2``, ``M + K``, ``N // 4`` of ``pl.dynamic`` names, as Python evaluates an annotation at def time.

    Only a stand-in so the ``def`` line runs: the parser reads the annotation's source and builds the
    index expression itself. Its text is the expression, for messages.
    """

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text

    def _text(self) -> str:
        return f"({self.text})"


def _dim_text(v: Any) -> str | None:
    if isinstance(v, DynVar | DynDim):
        return v._text()
    return str(v) if isinstance(v, int) and not isinstance(v, bool) else None


def _dim_op(symbol: str, reflected: bool = False) -> Any:
    def op(self: Any, other: Any) -> Any:
        rhs = _dim_text(other)
        if rhs is None:
            return NotImplemented
        lhs = self._text()
        return DynDim(f"{rhs} {symbol} {lhs}" if reflected else f"{lhs} {symbol} {rhs}")
    return op


for _cls in (DynVar, DynDim):
    for _name, _symbol in (("add", "+"), ("sub", "-"), ("mul", "*"), ("floordiv", "//"), ("mod", "%")):
        setattr(_cls, f"__{_name}__", _dim_op(_symbol))
        setattr(_cls, f"__r{_name}__", _dim_op(_symbol, reflected=True))


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
