"""``tile.*`` ops: on-chip tile operations inside InCore kernels."""

from __future__ import annotations

from typing import Any

from pypto.errors import UserError
from pypto.ir.dtypes import DataType
from pypto.ir.enums import MemorySpace
from pypto.ir.expr import Expr, MakeTuple
from pypto.ir.ops.bounds import check_window, positive_dims
from pypto.ir.ops.common import register_common
from pypto.ir.ops.infer import dims, like, require_2d, shaped, tile_shape, with_space
from pypto.ir.ops.registry import OpDef, register
from pypto.ir.types import PtrType, TensorType, TileType, TileView, Type
from pypto.span import Span

LOAD_SPACES = (MemorySpace.Vec, MemorySpace.Mat)


def _space(kw: dict[str, Any], key: str, op: str, span: Span) -> MemorySpace:
    v = kw.get(key)
    if not isinstance(v, MemorySpace):
        raise UserError(f"{op}: '{key}' must be a memory space such as pl.Mem.Vec, got {v!r}", span)
    return v


def _dtype(kw: dict[str, Any], op: str, span: Span) -> DataType:
    dt = kw.get("dtype")
    if not isinstance(dt, DataType):
        raise UserError(f"{op}: 'dtype' must be a dtype constant such as pl.FP32", span)
    return dt


def _load(args: list[Expr], kw: dict[str, Any], span: Span) -> Type:
    t = shaped(args[0], "tile.load", "tensor", span, TensorType)
    space = _space(kw, "target_memory", "tile.load", span)
    if space not in LOAD_SPACES:
        raise UserError(f"target_memory for tile.load must be MemorySpace.Vec or MemorySpace.Mat, got "
                        f"MemorySpace.{space.value}", span,
                        hint="load into Mat, then pl.move(tile, pl.Mem.Left/Right)")
    shape = positive_dims(dims(args[2], "tile.load", "shapes", span), "tile.load", "shapes", span)
    if len(shape) != t.rank:
        raise UserError(f"tile.load: shapes rank {len(shape)} != tensor rank {t.rank}", span)
    offsets = dims(args[1], "tile.load", "offsets", span)
    if len(offsets) != t.rank:
        raise UserError(f"tile.load: offsets rank {len(offsets)} != tensor rank {t.rank}", span)
    valid = args[3] if len(args) > 3 and isinstance(args[3], MakeTuple) else None
    window = dims(valid, "tile.load", "valid_shapes", span) if valid is not None else shape
    check_window("tile.load", t.shape, offsets, window if len(window) == t.rank else shape, span)
    return TileType(tile_shape(shape), t.dtype, memory_space=space)


def _store(args: list[Expr], kw: dict[str, Any], span: Span) -> Type:
    shaped(args[0], "tile.store", "tile", span, TileType)
    out = shaped(args[2], "tile.store", "output_tensor", span, TensorType)
    offsets = dims(args[1], "tile.store", "offsets", span)
    if len(offsets) != out.rank:
        raise UserError(f"tile.store: offsets rank {len(offsets)} != output tensor rank {out.rank}", span)
    # The tile's valid region (which may be smaller than its shape) is known only after the passes;
    # codegen checks the full window. Here: the window's first element must lie inside the tensor.
    check_window("tile.store", out.shape, offsets, (1,) * out.rank, span, what="output tensor")
    return like(out)


def _move(args: list[Expr], kw: dict[str, Any], span: Span) -> Type:
    t = shaped(args[0], "tile.move", "tile", span, TileType)
    assert isinstance(t, TileType)
    return with_space(t, _space(kw, "target_memory", "tile.move", span))


def _create(args: list[Expr], kw: dict[str, Any], span: Span) -> Type:
    space = kw.get("target_memory") or MemorySpace.Vec
    return TileType(tile_shape(positive_dims(dims(args[0], "tile.create", "shape", span), "tile.create", "shape",
                                             span)),
                    _dtype(kw, "tile.create", span),
                    memory_space=space)


def _full(args: list[Expr], kw: dict[str, Any], span: Span) -> Type:
    return TileType(tile_shape(positive_dims(dims(args[0], "tile.full", "shape", span), "tile.full", "shape", span)),
                    _dtype(kw, "tile.full", span),
                    memory_space=MemorySpace.Vec)


def _transpose_view(args: list[Expr], kw: dict[str, Any], span: Span) -> Type:
    """The [..., N, M] view of an [..., M, N] tile (valid region swapped too), in the same memory space."""
    t = shaped(args[0], "tile.transpose_view", "tile", span, TileType)
    assert isinstance(t, TileType)
    if t.rank < 2:
        raise UserError(f"tile.transpose_view needs a tile of rank >= 2, got rank {t.rank}", span)
    shape = (*t.shape[:-2], t.shape[-1], t.shape[-2])
    valid = t.view.valid_shape if t.view is not None else None
    view = TileView(valid_shape=(*valid[:-2], valid[-1], valid[-2])) if valid else None
    return TileType(shape, t.dtype, view=view, memory_space=t.memory_space)


def _alloc(args: list[Expr], kw: dict[str, Any], span: Span) -> Type:
    _space(kw, "memory_space", "tile.alloc", span)
    return PtrType()


def _write(args: list[Expr], kw: dict[str, Any], span: Span) -> Type:
    return like(shaped(args[0], "tile.write", "dst", span, TileType))


def _matmul_bias(args: list[Expr], kw: dict[str, Any], span: Span) -> Type:
    a = shaped(args[0], "tile.matmul_bias", "lhs", span, TileType)
    b = shaped(args[1], "tile.matmul_bias", "rhs", span, TileType)
    m, _ = require_2d("tile.matmul_bias", a, span)
    _, n = require_2d("tile.matmul_bias", b, span)
    acc = DataType.FP32 if a.dtype in (DataType.FP16, DataType.BF16, DataType.FP32) else DataType.INT32
    bias = shaped(args[2], "tile.matmul_bias", "bias", span, TileType)
    if bias.dtype is not acc:  # the cube adds the bias table to the accumulator as is
        raise UserError(f"tile.matmul_bias: bias dtype {bias.dtype.value} must be the accumulator's {acc.value}",
                        span, hint=f"load the bias as pl.{acc.value}")
    return TileType((m, n), acc, memory_space=MemorySpace.Acc)


register_common("tile")
register(OpDef("tile.load", ("tensor", "offsets", "shapes", "valid_shapes?"), _load,
               {"target_memory": MemorySpace.Vec, "clamp": False}, category="memory", signless=True))
register(OpDef("tile.store", ("tile", "offsets", "output_tensor"), _store,
               {"shapes": None, "atomic": None}, category="memory", writes="output_tensor", signless=True))
register(OpDef("tile.move", ("tile",), _move,
               {"target_memory": None, "blayout": None, "slayout": None}, category="memory", in_place=False,
               positional_kwargs=("target_memory",), signless=True))
register(OpDef("tile.transpose_view", ("tile",), _transpose_view, category="memory",
               doc="the transposed view of a tile (zero-copy upstream; a transposed load here)", signless=True))
register(OpDef("tile.create", ("shape",), _create, {"dtype": None, "target_memory": MemorySpace.Vec},
               category="create", signless=True))
register(OpDef("tile.full", ("shape", "value"), _full, {"dtype": None}, category="create", signless=True))
register(OpDef("tile.alloc", (), _alloc, {"memory_space": None, "size": 0, "pinned": False},
               category="memory", positional_kwargs=("memory_space", "size")))
register(OpDef("tile.write", ("dst", "offset", "value"), _write, category="access", writes="dst"))
register(OpDef("tile.matmul_bias", ("lhs", "rhs", "bias"), _matmul_bias, category="matmul", core="cube",
               result_space=MemorySpace.Acc, in_place=False))


def _stacked(t: TileType, count: object, trans: object, op: str, what: str, span: Span) -> tuple[object, object]:
    """The ``(rows, cols)`` of one of the ``count`` matrices stacked by rows in 2-D tile ``t``, transposed
    when ``trans``."""
    r, c = require_2d(op, t, span)
    if not isinstance(count, int) or isinstance(count, bool) or count < 1:
        raise UserError(f"{op}: '{what}_batch' must be a positive int, got {count!r}", span)
    if not isinstance(r, int) or r % count:
        raise UserError(f"{op}: {what} has {r} rows, not {count} stacked matrices", span)
    return (c, r // count) if trans else (r // count, c)


def _batch_matmul(args: list[Expr], kw: dict[str, Any], span: Span) -> Type:
    """``lhs_batch`` matrices (stacked by rows, as an N-D load flattens them) times ``rhs_batch`` ones, each
    transposed per ``a_trans``/``b_trans``; a batch of 1 broadcasts. The result stacks ``[M, N]`` blocks."""
    op = "tile.batch_matmul"
    a, b = shaped(args[0], op, "lhs", span, TileType), shaped(args[1], op, "rhs", span, TileType)
    assert isinstance(a, TileType) and isinstance(b, TileType)
    na, nb = kw.get("lhs_batch", 1), kw.get("rhs_batch", 1)
    m, k1 = _stacked(a, na, kw.get("a_trans"), op, "lhs", span)
    k2, n = _stacked(b, nb, kw.get("b_trans"), op, "rhs", span)
    if k1 != k2 or (na != nb and 1 not in (na, nb)):
        raise UserError(f"{op}: {na} x [{m}, {k1}] by {nb} x [{k2}, {n}] do not match", span,
                        hint="the inner dims must agree and the batch counts be equal or 1")
    if a.dtype is not b.dtype:
        raise UserError(f"{op}: dtype mismatch {a.dtype.value} vs {b.dtype.value}", span)
    out = kw.get("out_dtype") or (DataType.FP32 if a.dtype.is_float else DataType.INT32)
    return TileType((max(na, nb) * m, n), out, memory_space=MemorySpace.Acc)  # type: ignore[operator]


register(OpDef("tile.batch_matmul", ("lhs", "rhs"), _batch_matmul,
               {"lhs_batch": 1, "rhs_batch": 1, "a_trans": False, "b_trans": False, "out_dtype": None},
               category="matmul", core="cube", result_space=MemorySpace.Acc,
               doc="a batch of matmuls; FlattenTileNdTo2D issues one tile.matmul per matrix"))
