"""Row gathers into an on-chip operand: ``tensor.gather_row`` and ``tensor.paged_gather``.

``gather_row(acc, src, dst_offset, src_offset, shapes, valid_shape=v)`` copies the ``v`` window of the
2-D GM tensor ``src`` at ``src_offset`` into ``acc`` at ``dst_offset`` (``v`` defaults to ``shapes``,
which are static; ``v`` may hold runtime rows) and is ``acc``'s new value.
``paged_gather(src, indices, block_table, block_size=, size=, max_indices=)`` is the
``[max_indices, size]`` tensor whose row ``i`` is ``src[phys_i, col_off : col_off + size]`` with
``phys_i = block_table[l // block_size] * block_size + l % block_size``, ``l = indices[i]``.

ptoas 0.1.1 has no sub-tile view to load a GM row into a slot of an L1 tile; the pass
:mod:`pypto.passes.hoist_scope_gathers` rewrites both into copies through a GM tensor.
"""

from __future__ import annotations

from typing import Any

from pypto.errors import UserError
from pypto.ir.dtypes import DataType
from pypto.ir.enums import MemorySpace
from pypto.ir.expr import Expr, MakeTuple, as_int
from pypto.ir.ops.infer import like, require_2d, shaped
from pypto.ir.ops.registry import OpDef, register
from pypto.ir.types import TensorType, Type
from pypto.span import Span

_INDEX_DTYPES = (DataType.INT32, DataType.INT64)


def _pair(name: str, what: str, e: Any, span: Span, static: bool = False) -> None:
    if not isinstance(e, MakeTuple) or len(e.elements) != 2:
        raise UserError(f"{name}: {what} must be a [row, col] pair", span)
    if static and any(as_int(x) is None or as_int(x) <= 0 for x in e.elements):
        raise UserError(f"{name}: {what} must be positive compile-time constants", span,
                        hint="pass the runtime extent as valid_shape=[rows, cols]")


def _gather_row(args: list[Expr], kw: dict[str, Any], span: Span) -> Type:
    name = "tensor.gather_row"
    acc = shaped(args[0], name, "acc", span, TensorType)
    src = shaped(args[1], name, "src", span, TensorType)
    require_2d(name, acc, span)
    require_2d(name, src, span)
    if src.dtype is not acc.dtype:
        raise UserError(f"{name}: src ({src.dtype.value}) and acc ({acc.dtype.value}) must share a dtype", span)
    _pair(name, "dst_offset", args[2], span)
    _pair(name, "src_offset", args[3], span)
    _pair(name, "shapes", args[4], span, static=True)
    if len(args) > 5 and args[5] is not None:
        _pair(name, "valid_shape", args[5], span)
    return like(acc)


def _paged_gather(args: list[Expr], kw: dict[str, Any], span: Span) -> Type:
    name = "tensor.paged_gather"
    src = shaped(args[0], name, "src", span, TensorType)
    require_2d(name, src, span)
    for e, what in ((args[1], "indices"), (args[2], "block_table")):
        t = shaped(e, name, what, span, TensorType)
        if t.dtype not in _INDEX_DTYPES:
            raise UserError(f"{name}: {what} must hold INT32 or INT64, got {t.dtype.value}", span)
    for key in ("block_size", "size", "max_indices"):
        v = kw.get(key)
        if not isinstance(v, int) or isinstance(v, bool) or v <= 0:
            raise UserError(f"{name}: {key} must be a positive int, got {v!r}", span)
    col_off = kw.get("col_off", 0)
    cols = as_int(src.shape[1])
    if cols is not None and (col_off < 0 or col_off + kw["size"] > cols):
        raise UserError(f"{name}: columns [{col_off}, {col_off + kw['size']}) exceed src's {cols}", span)
    if kw.get("space") not in (MemorySpace.Mat, MemorySpace.Vec):
        raise UserError(f"{name}: space must be pl.Mem.Mat or pl.Mem.Vec, got {kw.get('space')}", span)
    return TensorType((kw["max_indices"], kw["size"]), src.dtype)


register(OpDef("tensor.gather_row", ("acc", "src", "dst_offset", "src_offset", "shapes", "valid_shape?"),
               _gather_row, {"transpose": False}, category="memory", positional_kwargs=("transpose",),
               writes="acc", effect=True, row_gather=True))
register(OpDef("tensor.paged_gather", ("src", "indices", "block_table"), _paged_gather,
               {"block_size": None, "size": None, "max_indices": None, "space": MemorySpace.Mat, "col_off": 0,
                "is_trans": False, "is_b_matrix": False}, category="memory",
               positional_kwargs=("block_size", "size", "max_indices"), row_gather=True))
