"""Three-operand and slope/xor elementwise ops of upstream's ``pl.tile`` (and ``pl.xors`` for tensors).

``addc(a, b, c) = a + b + c``, ``subc(a, b, c) = a - b - c``, ``addsc(a, s, c) = a + s + c``,
``subsc(a, s, c) = a - s - c``, ``prelu(x, slope) = x > 0 ? x : x * slope`` (elementwise slope tile),
``xors(a, s) = a ^ s`` on integer tiles. The trailing ``tmp`` operand upstream's signatures carry for
newer hardware is accepted and unused.
"""

from __future__ import annotations

from typing import Any

from pypto.errors import UserError
from pypto.ir.dtypes import DataType
from pypto.ir.enums import PadValue
from pypto.ir.expr import Expr
from pypto.ir.ops.infer import like, same_dtype, same_shape, shaped
from pypto.ir.ops.registry import OpDef, register
from pypto.ir.types import ScalarType, TensorType, TileType, Type
from pypto.span import Span


def _tiles(name: str, positions: tuple[int, ...]):
    def infer(args: list[Expr], kw: dict[str, Any], span: Span) -> Type:
        first = shaped(args[0], name, "lhs", span, TileType)
        for i in positions[1:]:
            other = shaped(args[i], name, f"operand {i}", span, TileType)
            same_shape(name, first, other, span)
            same_dtype(name, first, other, span)
        if 1 not in positions and not isinstance(args[1].type, ScalarType):
            raise UserError(f"{name}: operand 'rhs' must be a scalar, got {args[1].type}", span)
        return like(first)
    return infer


def _same_tensors(name: str):
    def infer(args: list[Expr], kw: dict[str, Any], span: Span) -> Type:
        a = shaped(args[0], name, "lhs", span, TensorType)
        b = shaped(args[1], name, "rhs", span, TensorType)
        same_shape(name, a, b, span)
        same_dtype(name, a, b, span)
        return like(a)
    return infer


def _xors(name: str, kind: type):
    def infer(args: list[Expr], kw: dict[str, Any], span: Span) -> Type:
        a = shaped(args[0], name, "lhs", span, kind)
        if a.dtype.is_float:
            raise UserError(f"{name}: needs an integer operand, got {a.dtype.value}", span)
        t = args[1].type
        if not isinstance(t, ScalarType) or t.dtype.is_float:
            raise UserError(f"{name}: operand 'rhs' must be an integer scalar, got {t}", span)
        return like(a)
    return infer


register(OpDef("tile.addc", ("lhs", "rhs", "rhs2"), _tiles("tile.addc", (0, 1, 2)), category="ternary"))
register(OpDef("tile.subc", ("lhs", "rhs", "rhs2"), _tiles("tile.subc", (0, 1, 2)), category="ternary",
                  in_place=False))
register(OpDef("tile.addsc", ("lhs", "rhs", "rhs2"), _tiles("tile.addsc", (0, 2)), category="ternary"))
register(OpDef("tile.subsc", ("lhs", "rhs", "rhs2"), _tiles("tile.subsc", (0, 2)), category="ternary",
                  in_place=False))
register(OpDef("tile.prelu", ("tile", "slope", "tmp?"), _tiles("tile.prelu", (0, 1)), category="binary"))
register(OpDef("tile.xors", ("lhs", "rhs", "tmp?"), _xors("tile.xors", TileType), category="scalar", signless=True))
register(OpDef("tensor.xors", ("lhs", "rhs"), _xors("tensor.xors", TensorType), category="scalar", signless=True))


def _ci(name: str, kind: type):
    def infer(args: list[Expr], kw: dict[str, Any], span: Span) -> Type:
        from pypto.ir.enums import MemorySpace
        from pypto.ir.ops.infer import dims

        shape = dims(args[1], name, "shape", span)
        dtype = kw.get("dtype")
        if dtype not in (DataType.INT16, DataType.INT32, DataType.UINT16, DataType.UINT32):
            raise UserError(f"{name}: dtype must be pl.INT16, pl.INT32, pl.UINT16 or pl.UINT32, got {dtype!r}",
                            span)
        if len(shape) == 2 and shape[0] != 1:
            raise UserError(f"{name}: the sequence fills one row; the shape must be [1, N], got {list(shape)}", span)
        t = args[0].type
        if not isinstance(t, ScalarType) or t.dtype.is_float:
            raise UserError(f"{name}: 'start' must be an integer scalar, got {t}", span)
        if kind is TileType:
            return TileType(tuple(shape), dtype, memory_space=MemorySpace.Vec)
        return TensorType(tuple(shape), dtype)
    return infer


def _extract(args: list[Expr], kw: dict[str, Any], span: Span) -> Type:
    from pypto.ir.enums import MemorySpace
    from pypto.ir.ops.infer import dims, require_2d

    src = shaped(args[0], "tile.extract", "src", span, TileType)
    rows, cols = require_2d("tile.extract", src, span)
    shape = dims(args[3], "tile.extract", "shape", span)
    if len(shape) != 2:
        raise UserError(f"tile.extract: shape must be 2-D, got {list(shape)}", span)
    space = kw.get("target_memory")
    if not isinstance(space, MemorySpace):
        raise UserError("tile.extract: target_memory must be a memory space such as pl.Mem.Left", span)
    for axis, (off, n, full) in enumerate(zip(args[1:3], shape, (rows, cols), strict=True)):
        o = getattr(off, "value", None)
        if isinstance(o, int) and isinstance(n, int) and isinstance(full, int) and not 0 <= o <= full - n:
            raise UserError(f"tile.extract: window [{o}, {o + n}) on axis {axis} is outside the source's {full}", span)
    return TileType(tuple(shape), src.dtype, memory_space=space)


register(OpDef("tile.ci", ("start", "shape"), _ci("tile.ci", TileType),
               {"dtype": DataType.INT32, "descending": False}, category="create", signless=True))
register(OpDef("tensor.ci", ("start", "shape"), _ci("tensor.ci", TensorType),
               {"dtype": DataType.INT32, "descending": False}, category="create", signless=True))
register(OpDef("tile.extract", ("src", "index_row", "index_col", "shape"), _extract, {"target_memory": None},
               category="memory", signless=True))
register(OpDef("tile.fillpad_inplace", ("tile",), lambda a, kw, sp: like(shaped(a[0], "tile.fillpad_inplace", "tile",
                                                                                 sp, TileType)),
               {"pad_value": None}, category="view"))

# part_*: where both operands are valid apply the op, where only one is valid copy it (valid regions may differ)
for _op in ("part_add", "part_max", "part_min"):
    register(OpDef(f"tile.{_op}", ("lhs", "rhs"), _tiles(f"tile.{_op}", (0, 1)), category="binary"))
    register(OpDef(f"tensor.{_op}", ("lhs", "rhs"), _same_tensors(f"tensor.{_op}"), category="binary"))


def pad_of(value: Any) -> Any:
    """A fillpad pad value as a PadValue: the enum (None: zero), its name, or upstream's sugars 0, inf, -inf."""
    import math

    if value is None:
        return PadValue.zero
    if isinstance(value, PadValue):
        return value
    if isinstance(value, str):
        return PadValue.__members__.get(value)
    if isinstance(value, int | float) and not isinstance(value, bool):
        return {0: PadValue.zero, math.inf: PadValue.max, -math.inf: PadValue.min}.get(value)
    return None


def _fillpad_expand(name: str, kind: type):
    """``fillpad_expand(x, shape, pad_value)``: a ``shape`` tile/tensor whose top-left is ``x``'s valid region
    and every other element the pad value (``zero``, ``max`` or ``min``); each dim must be at least ``x``'s."""
    def infer(args: list[Expr], kw: dict[str, Any], span: Span) -> Type:
        from pypto.ir.expr import as_int
        from pypto.ir.ops.infer import dims

        src = shaped(args[0], name, "tile", span, kind)
        shape = dims(args[1], name, "shape", span)
        if len(shape) != len(src.shape):
            raise UserError(f"{name}: shape {list(shape)} must have the source's rank {len(src.shape)}", span)
        for axis, (d, s) in enumerate(zip(shape, src.shape, strict=True)):
            di, si = as_int(d) if isinstance(d, Expr) else d, as_int(s) if isinstance(s, Expr) else s
            if not isinstance(di, int):
                raise UserError(f"{name}: the destination shape must be static, got {d} on axis {axis}", span)
            if isinstance(si, int) and di < si:
                raise UserError(f"{name}: destination dim {di} on axis {axis} is smaller than the source's {si}",
                                span, hint="every destination dim must be >= the source's (use pl.slice to shrink)")
        if pad_of(kw.get("pad_value")) in (None, PadValue.null):
            raise UserError(f"{name}: pad_value must be pl.PadValue.zero, max or min (or 0, math.inf, -math.inf), "
                            f"got {kw.get('pad_value')!r}", span)
        return like(src, shape)
    return infer


for _ns, _kind in (("tile", TileType), ("tensor", TensorType)):
    register(OpDef(f"{_ns}.fillpad_expand", ("tile", "shape"), _fillpad_expand(f"{_ns}.fillpad_expand", _kind),
                   {"pad_value": PadValue.zero}, category="view", keeps_operands=_ns == "tile",
                   doc="a larger tile: the source's valid region at the top-left, the pad value elsewhere",
                   tile_compute=_ns == "tensor"))


def _reinterpret_view(args: list[Expr], kw: dict[str, Any], span: Span) -> Type:
    """``tile.reinterpret_view(x, dtype, shape=None)``: the same bytes read as ``dtype``; by default the last
    (contiguous) dim is scaled by the element-size ratio, or ``shape`` names a shape of the same byte count."""
    from pypto.ir.expr import MakeTuple, as_int

    name = "tile.reinterpret_view"
    src = shaped(args[0], name, "data", span, TileType)
    dtype = kw.get("dtype")
    if not isinstance(dtype, DataType) or dtype.bits % 8 or src.dtype.bits % 8:
        raise UserError(f"{name}: dtype must be a whole-byte element type such as pl.INT32, got {dtype!r}", span)
    if dtype is src.dtype:
        raise UserError(f"{name}: the tile is already {dtype.value}", span, hint="reinterpret to another dtype")
    sizes = [as_int(d) if isinstance(d, Expr) else d for d in src.shape]
    if not all(isinstance(d, int) for d in sizes):
        raise UserError(f"{name}: the source tile's shape must be static, got {list(src.shape)}", span)
    shape = kw.get("shape")
    if shape is None:
        last = sizes[-1] * src.dtype.bits
        if last % dtype.bits:
            raise UserError(f"{name}: {sizes[-1]} {src.dtype.value} elements are not a whole number of "
                            f"{dtype.value} elements", span, hint="pass shape=[...] with the same byte count")
        new = (*sizes[:-1], last // dtype.bits)
    else:
        items = shape.elements if isinstance(shape, MakeTuple) else tuple(shape)
        new = tuple(as_int(d) if isinstance(d, Expr) else d for d in items)
        if not all(isinstance(d, int) and d > 0 for d in new):
            raise UserError(f"{name}: shape must be a list of positive constants, got {shape!r}", span)
    total = 1
    for d in new:
        total *= d
    nbytes = 1
    for d in sizes:
        nbytes *= d
    if total * dtype.bits != nbytes * src.dtype.bits:
        raise UserError(f"{name}: shape {list(new)} of {dtype.value} is not the source's {nbytes * src.dtype.bits // 8} "
                        "bytes", span, hint="give a shape with the same byte count")
    return like(src, tuple(new), dtype)


register(OpDef("tile.reinterpret_view", ("data",), _reinterpret_view, {"dtype": None, "shape": None},
               category="view", keeps_operands=True, positional_kwargs=("dtype",), signless=True,
               doc="the tile's bytes read as another dtype (a view: pto.treshape)"))


def _fmod(name: str, kind: type, scalar: bool):
    """``fmod(a, b)`` / ``fmods(a, s)``: C fmod, the remainder of a / b truncated (the sign of ``a``)."""
    def infer(args: list[Expr], kw: dict[str, Any], span: Span) -> Type:
        a = shaped(args[0], name, "lhs", span, kind)
        if not a.dtype.is_float:
            raise UserError(f"{name}: needs a floating-point operand, got {a.dtype.value}", span,
                            hint="use pl.rem / pl.rems for integer operands")
        if scalar:
            t = args[1].type
            if not isinstance(t, ScalarType):
                raise UserError(f"{name}: operand 'rhs' must be a scalar, got {t}", span)
        else:
            b = shaped(args[1], name, "rhs", span, kind)
            same_shape(name, a, b, span)
            same_dtype(name, a, b, span)
        return like(a)
    return infer


for _ns, _kind in (("tile", TileType), ("tensor", TensorType)):
    register(OpDef(f"{_ns}.fmod", ("lhs", "rhs"), _fmod(f"{_ns}.fmod", _kind, False), category="binary",
                   in_place=False, doc="C fmod: a - trunc(a / b) * b, with the sign of a"))
    register(OpDef(f"{_ns}.fmods", ("lhs", "rhs"), _fmod(f"{_ns}.fmods", _kind, True), category="scalar",
                   in_place=False, doc="C fmod by a scalar"))
