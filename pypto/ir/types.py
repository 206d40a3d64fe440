"""IR types. Shapes hold ``int`` for static dims and an ``Expr`` (usually a dynamic ``Var``) otherwise."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields, replace
from enum import Enum
from typing import TYPE_CHECKING, Any, Union

from pypto.ir.dtypes import DataType
from pypto.ir.enums import CompactMode, MemorySpace, PadValue, TensorLayout, TileLayout

if TYPE_CHECKING:
    from pypto.ir.expr import Expr, Var

Dim = Union[int, "Expr"]


@dataclass(frozen=True, slots=True)
class Type:
    """Base of all IR types."""


@dataclass(frozen=True, slots=True)
class UnknownType(Type):
    """Type not (yet) known."""


@dataclass(frozen=True, slots=True)
class ScalarType(Type):
    """A scalar of one element type."""

    dtype: DataType


@dataclass(frozen=True, slots=True)
class PtrType(Type):
    """An on-chip buffer base address produced by ``tile.alloc`` (printed ``pl.Ptr``)."""


@dataclass(frozen=True, slots=True)
class TupleType(Type):
    """Several results, e.g. a multi-value return."""

    types: tuple[Type, ...]


@dataclass(frozen=True, slots=True)
class ArrayType(Type):
    """``pl.Array[extent, dtype]``: a small fixed-size 1-D array of scalars (e.g. task ids in an
    orchestration); updated functionally by ``array.update_element``."""

    extent: int
    dtype: DataType


@dataclass(frozen=True, slots=True)
class MemRef:
    """Where a buffer lives: a ``tile.alloc`` base Var (or a DDR buffer name), byte offset and size."""

    base: Var | str
    offset: Dim
    size: int
    slots: int = 1           # pl.MemRef(name, slots=N)[slot]: an author buffer of N equal slots ...
    slot: Dim | None = None  # ... and the one this tile uses (resolved away by LowerPipelineLoops)


@dataclass(frozen=True, slots=True)
class TensorView:
    """Non-default GM view of a tensor: strides, layout, valid shape, pad."""

    stride: tuple[Dim, ...] | None = None
    layout: TensorLayout = TensorLayout.ND
    valid_shape: tuple[Dim, ...] | None = None
    pad: PadValue = PadValue.null


@dataclass(frozen=True, slots=True)
class TileView:
    """Explicit on-chip layout of a tile; ``None`` in a TileType means the memory space's default."""

    valid_shape: tuple[Dim, ...] | None = None
    stride: tuple[Dim, ...] | None = None
    start_offset: Dim | None = None
    blayout: TileLayout = TileLayout.row_major
    slayout: TileLayout = TileLayout.none_box
    fractal: int = 512
    pad: PadValue = PadValue.null
    compact: CompactMode = CompactMode.null


@dataclass(frozen=True, slots=True)
class ShapedType(Type):
    """Common base of tensors and tiles."""

    shape: tuple[Dim, ...]
    dtype: DataType

    @property
    def rank(self) -> int:
        return len(self.shape)

    def static_shape(self) -> tuple[int, ...] | None:
        """The shape as ints, or None when a dim is dynamic."""
        if all(isinstance(d, int) for d in self.shape):
            return tuple(self.shape)  # type: ignore[arg-type]
        return None

    def nbytes(self) -> int | None:
        """Static size in bytes, or None for dynamic shapes."""
        shape = self.static_shape()
        if shape is None:
            return None
        n = 1
        for d in shape:
            n *= d
        return n * self.dtype.nbytes


@dataclass(frozen=True, slots=True)
class TensorType(ShapedType):
    """A tensor in global memory (DDR)."""

    memref: MemRef | None = None
    view: TensorView | None = None


@dataclass(frozen=True, slots=True)
class TileType(ShapedType):
    """An on-chip tile; ``memory_space`` is None until InferTileMemorySpace decides it."""

    memref: MemRef | None = None
    view: TileView | None = None
    memory_space: MemorySpace | None = None


def default_tile_view(shape: tuple[Dim, ...], space: MemorySpace | None) -> TileView:
    """The implicit TileView of a memory space (canonical IR stores ``None`` for it)."""
    if space in (MemorySpace.Mat, MemorySpace.Left):
        return TileView(blayout=TileLayout.col_major if space is MemorySpace.Mat else TileLayout.row_major,
                        slayout=TileLayout.row_major)
    if space is MemorySpace.Right:
        return TileView(blayout=TileLayout.row_major, slayout=TileLayout.col_major)
    if space is MemorySpace.Acc:
        return TileView(blayout=TileLayout.col_major, slayout=TileLayout.row_major, fractal=1024)
    if len(shape) == 2 and shape[1] == 1 and shape[0] != 1:
        return TileView(blayout=TileLayout.col_major)
    return TileView()


_DIM_FIELDS: dict[type, tuple[str, ...]] = {}


def _dim_fields(cls: type) -> tuple[str, ...]:
    """The fields of a type/MemRef/view class that :func:`_map_dims` enters (all but a MemRef's base)."""
    names = _DIM_FIELDS.get(cls)
    if names is None:
        names = _DIM_FIELDS[cls] = tuple(f.name for f in fields(cls) if f.name != "base")
    return names


def _map_dims(value: Any, fn: Callable[[Expr], Expr]) -> Any:
    """``value`` (a dim, a tuple of dims, a MemRef/view/type, or anything else) with ``fn`` applied to
    each expression dim; the same object when nothing changed."""
    if isinstance(value, tuple):
        new = tuple(v if v.__class__ is int else _map_dims(v, fn) for v in value)  # static dims: as they are
        return value if all(a is b for a, b in zip(new, value, strict=True)) else new
    if isinstance(value, (Type, MemRef, TensorView, TileView)):
        changes = {}
        for name in _dim_fields(type(value)):
            old = getattr(value, name)
            if (new := _map_dims(old, fn)) is not old:
                changes[name] = new
        return replace(value, **changes) if changes else value
    if value is None or isinstance(value, (int, float, str, Enum)):
        return value
    return fn(value)


def map_type_exprs(t: Type, fn: Callable[[Expr], Expr]) -> Type:
    """``t`` with ``fn`` applied to every expression it holds (dynamic dims, valid shapes, strides,
    offsets, a MemRef's offset and slot; not a MemRef's base buffer); ``t`` itself when ``fn``
    changed none."""
    return _map_dims(t, fn)
