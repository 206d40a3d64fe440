"""Type-inference helpers shared by the op tables."""

from __future__ import annotations

from dataclasses import replace

from pypto.errors import UserError
from pypto.ir.dtypes import DataType
from pypto.ir.enums import MemorySpace
from pypto.ir.expr import ConstInt, Expr, MakeTuple, as_int
from pypto.ir.types import Dim, ShapedType, TensorType, TensorView, TileType, Type
from pypto.span import Span

KIND_NAME = {TensorType: "Tensor", TileType: "Tile"}


def kind_of(t: Type) -> str:
    return KIND_NAME.get(type(t), type(t).__name__.replace("Type", ""))


def shaped(e: Expr, op: str, what: str, span: Span, kind: type | None = None) -> ShapedType:
    """The ShapedType of operand ``what``; UserError when it is not a Tensor/Tile (of ``kind``)."""
    t = e.type
    want = kind or ShapedType
    if not isinstance(t, want):
        need = KIND_NAME.get(want, "Tensor or Tile")
        raise UserError(f"{op}: operand '{what}' must be a {need}, got {kind_of(t)}", e.span if e.span.is_known() else span)
    return t


def dim_eq(a: Dim, b: Dim) -> bool:
    """Static dims must match; a dynamic dim is only checked at run time."""
    x, y = as_int(a), as_int(b)
    if x is not None and y is not None:
        return x == y
    return True


def fmt_shape(shape: tuple[Dim, ...]) -> str:
    return "[" + ", ".join(str(d) if isinstance(d, int) else getattr(d, "name", "?") for d in shape) + "]"


def same_shape(op: str, a: ShapedType, b: ShapedType, span: Span) -> None:
    if len(a.shape) != len(b.shape) or not all(dim_eq(x, y) for x, y in zip(a.shape, b.shape, strict=True)):
        raise UserError(f"{op}: shape mismatch {fmt_shape(a.shape)} vs {fmt_shape(b.shape)}", span,
                        hint="elementwise operands must have the same shape")


def same_dtype(op: str, a: ShapedType, b: ShapedType, span: Span) -> None:
    if a.dtype is not b.dtype:
        raise UserError(f"{op}: dtype mismatch {a.dtype.value} vs {b.dtype.value}", span,
                        hint="insert pl.cast(x, ...) to convert one operand")


def dims(e: Expr, op: str, what: str, span: Span) -> tuple[Dim, ...]:
    """A list operand (MakeTuple of ints / index exprs) as a tuple of dims."""
    if not isinstance(e, MakeTuple):
        raise UserError(f"{op}: '{what}' must be a list such as [64, 64]", e.span if e.span.is_known() else span)
    from pypto.ir.ops.bounds import check_index_element

    out: list[Dim] = []
    for el in e.elements:
        check_index_element(el, op, what, span)
        out.append(el.value if isinstance(el, ConstInt) else el)
    return tuple(out)


def like(t: ShapedType, shape: tuple[Dim, ...] | None = None, dtype: DataType | None = None,
         space: MemorySpace | None | str = "keep") -> ShapedType:
    """A fresh type of the same kind (no memref/view) with shape/dtype/space replaced."""
    new_shape = t.shape if shape is None else tuple(shape)
    new_dtype = t.dtype if dtype is None else dtype
    if isinstance(t, TileType):
        mem = t.memory_space if space == "keep" else space
        return TileType(tile_shape(new_shape), new_dtype, memory_space=mem)  # type: ignore[arg-type]
    return TensorType(new_shape, new_dtype)


def valid_shape(t: ShapedType) -> tuple[Dim, ...]:
    """The region of a tensor that holds data: its ``set_validshape`` region, else its shape."""
    view = t.view if isinstance(t, TensorType) else None
    return tuple(view.valid_shape) if view is not None and view.valid_shape is not None else tuple(t.shape)


def narrowed_like(a: ShapedType, *others: ShapedType) -> ShapedType:
    """``like(a)``, keeping the valid region of a narrowed tensor (``tensor.set_validshape``) that every
    tensor operand shares (an elementwise result holds data where its operands do)."""
    out = like(a)
    valid = {valid_shape(t) for t in (a, *others) if isinstance(t, TensorType)}
    if isinstance(out, TensorType) and len(valid) == 1 and (v := valid.pop()) != tuple(a.shape):
        return TensorType(out.shape, out.dtype, view=TensorView(valid_shape=v))
    return out


def tile_shape(shape: tuple[Dim, ...]) -> tuple[Dim, ...]:
    """Tiles are 2-D: an N-D tile shape with constant leading dims is ``(prod(leading), last)``, the
    row-major flattening an N-D window of a packed tensor has (FlattenTileNdTo2D's rule, applied as
    tiles are made; the kernel codegen stores such a tile back through the N-D window)."""
    shape = tuple(shape)
    if len(shape) <= 2 or not all(isinstance(d, int) for d in shape[:-1]):
        return shape
    rows = 1
    for d in shape[:-1]:
        rows *= d  # type: ignore[operator]
    return (rows, shape[-1])


def matrix_dims(op: str, t: ShapedType, span: Span) -> tuple[Dim, Dim]:
    """The last two dims of an operand that is 2-D, or N-D with every leading dim 1 (one matrix)."""
    if t.rank > 2 and all(d == 1 for d in t.shape[:-2]):
        return t.shape[-2], t.shape[-1]
    return require_2d(op, t, span)


def batch_dims(op: str, a: ShapedType, b: ShapedType, span: Span) -> tuple[Dim, ...]:
    """The broadcast batch dims (all but the last two) of two matmul operands, numpy's rule: aligned from
    the right, equal or 1."""
    la, lb = tuple(a.shape[:-2]), tuple(b.shape[:-2])
    n = max(len(la), len(lb))
    la, lb = (1,) * (n - len(la)) + la, (1,) * (n - len(lb)) + lb
    out: list[Dim] = []
    for x, y in zip(la, lb, strict=True):
        if as_int(x) == 1 or dim_eq(x, y):
            out.append(y)
        elif as_int(y) == 1:
            out.append(x)
        else:
            raise UserError(f"{op}: batch dims {fmt_shape(a.shape[:-2])} and {fmt_shape(b.shape[:-2])} do not "
                            "broadcast", span, hint="batch dims must be equal or 1")
    return tuple(out)


def require_2d(op: str, t: ShapedType, span: Span) -> tuple[Dim, Dim]:
    if t.rank != 2:
        raise UserError(f"{op}: expects a 2-D operand, got rank {t.rank} {fmt_shape(t.shape)}", span)
    return t.shape[0], t.shape[1]


def with_space(t: TileType, space: MemorySpace) -> TileType:
    return replace(t, memory_space=space, memref=None, view=None)
