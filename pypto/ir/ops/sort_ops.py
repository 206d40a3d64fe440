"""Sorting, mask-pattern gathers and valid-shape changes (``tile.*`` and their ``tensor.*`` counterparts).

``sort32(src, idx)`` sorts each 32-element block of a row in descending order and writes
``(value, index)`` pairs: the result has twice the columns, the value in the even slot and the index
(from ``idx``, as raw 32-bit bits) in the odd slot. ``mrgsort(src, block_len=L)`` merges every four
consecutive sorted runs of ``L`` slots (``L`` counts values and indices, so 64 is 32 pairs) into one
run of ``4 * L``. ``gather(src, mask_pattern=P)`` keeps the columns a mask pattern selects
(``P0101``: the even slots, i.e. the values of a pair row; ``P1010``: the odd slots, the indices),
optionally re-typed to another dtype of the same width. ``set_validshape(x, rows, cols)`` narrows
the valid region of ``x`` without moving data.
"""

from __future__ import annotations

from typing import Any

from pypto.errors import UserError
from pypto.ir.dtypes import DataType
from pypto.ir.enums import MaskPattern
from pypto.ir.expr import Expr, as_int
from pypto.ir.ops.infer import like, require_2d, shaped
from pypto.ir.ops.registry import OpDef, register
from pypto.ir.types import ScalarType, TensorType, TensorView, TileType, TupleType, Type
from pypto.span import Span

SORT_BLOCK = 32
# mask pattern -> (stride, phase): column c of the source is kept when c % stride == phase
MASK_STEP = {MaskPattern.P0101: (2, 0), MaskPattern.P1010: (2, 1), MaskPattern.P0001: (4, 0),
             MaskPattern.P0010: (4, 1), MaskPattern.P0100: (4, 2), MaskPattern.P1000: (4, 3),
             MaskPattern.P1111: (1, 0)}
_INDEX_DTYPES = (DataType.UINT32, DataType.INT32)
# ptoas 0.1.1 cannot put tiles side by side on chip (no tinsert or tconcat), so separate lists meet in GM:
# pypto.passes._merge_lists rewrites a tensor-level merge at the top of a kernel; anything else is refused
MULTI_LIST = ("{name}: merging {k} separate sorted lists (the multi-list, 'format2' tmrgsort) {where}; "
              "ptoas 0.1.1's pto.tmrgsort takes one row of sorted runs and cannot place tiles side by side on "
              "chip (the ptoas upstream pypto pins, v0.57, merges 2 to 4 lists)")
MULTI_LIST_HINT = ("lay the lists side by side in GM and merge that row in a second scope: create "
                   "row = pl.create_tensor([1, 4 * L], dtype=pl.FP32) before the pl.at, in it write "
                   "row[:, i * L:(i + 1) * L] = list_i and fill the unused runs with a value below every "
                   "score (pl.full(..., value=-3.402823e38)); in a following pl.at, pl.mrgsort(row, "
                   "block_len=L)[:, 0:k * L] is the merge (each list L slots, a multiple of 64)")


def _lists(name: str, args: list[Expr], kw: dict[str, Any], span: Span, kind: type) -> Type:
    """``mrgsort(a, b[, c[, d]])``: each list one row of ``L`` (value, index) slots, the same ``L`` for all,
    a multiple of 64; the result is the ``[1, k * L]`` merge (pypto.passes._merge_lists lowers it)."""
    def refuse(why: str) -> UserError:
        return UserError(MULTI_LIST.format(name=name, k=len(args), where=why), span, hint=MULTI_LIST_HINT)
    if kind is not TensorType:
        raise refuse("is not supported on tiles with ptoas 0.1.1")
    if kw.get("exhausted") or kw.get("block_len") is not None:
        raise refuse("with exhausted=True or a block_len is not supported with ptoas 0.1.1")
    lists = [shaped(a, name, f"src{i}", span, kind) for i, a in enumerate(args)]
    shapes = {tuple(as_int(d) for d in t.shape) for t in lists}
    (shape,) = shapes if len(shapes) == 1 else (None,)
    if shape is None or len(shape) != 2 or shape[0] != 1 or not isinstance(shape[1], int) or shape[1] % 64 \
            or any(t.dtype is not DataType.FP32 for t in lists):
        raise refuse("of other than equal [1, L] FP32 rows (L a multiple of 64) is not supported with ptoas 0.1.1")
    return like(lists[0], (1, len(args) * shape[1]))

def _const_cols(name: str, t: Any, span: Span) -> int:
    _, cols = require_2d(name, t, span)
    n = as_int(cols)
    if n is None:
        raise UserError(f"{name}: needs a static column count, got a dynamic one", span)
    return n


def _sort32(name: str, kind: type):
    def infer(args: list[Expr], kw: dict[str, Any], span: Span) -> Type:
        src = shaped(args[0], name, "src", span, kind)
        idx = shaped(args[1], name, "idx", span, kind)
        cols = _const_cols(name, src, span)
        if src.dtype is not DataType.FP32:
            raise UserError(f"{name}: sorts FP32 values, got {src.dtype.value}", span,
                            hint="cast the scores with pl.cast(x, pl.FP32) first")
        if idx.dtype not in _INDEX_DTYPES:
            raise UserError(f"{name}: the index operand must be UINT32 or INT32, got {idx.dtype.value}", span,
                            hint="build it with pl.arange(0, [1, N], dtype=pl.UINT32)")
        if cols % SORT_BLOCK:
            raise UserError(f"{name}: sorts blocks of {SORT_BLOCK} columns, so the column count must be a "
                            f"multiple of {SORT_BLOCK}, got {cols}", span)
        if _const_cols(name, idx, span) != cols:
            raise UserError(f"{name}: the index operand has {_const_cols(name, idx, span)} columns, the values "
                            f"{cols}", span)
        return like(src, (src.shape[0], 2 * cols))
    return infer


def _mrgsort(name: str, kind: type):
    def infer(args: list[Expr], kw: dict[str, Any], span: Span) -> Type:
        src = shaped(args[0], name, "src", span, kind)
        if len(args) > 1:
            return _lists(name, args, kw, span, kind)
        cols = _const_cols(name, src, span)
        rows = as_int(src.shape[0])
        if rows != 1:
            raise UserError(f"{name}: merges one row, got {rows} rows", span, hint="loop over the rows")
        if src.dtype is not DataType.FP32:
            raise UserError(f"{name}: merges FP32 (value, index) pairs, got {src.dtype.value}", span)
        bl = kw.get("block_len")
        if isinstance(bl, Expr) and as_int(bl) is None:  # a run-time length (a loop's): checked when lowered
            if not isinstance(bl.type, ScalarType) or bl.type.dtype.is_float:
                raise UserError(f"{name}: block_len must be an integer, got {bl.type}", span)
            return like(src)
        bl = as_int(bl) if isinstance(bl, Expr) else bl
        if not isinstance(bl, int) or isinstance(bl, bool) or bl <= 0 or bl % 64:
            raise UserError(f"{name}: block_len must be a positive multiple of 64 (it counts values and "
                            f"indices), got {bl!r}", span)
        if cols % (4 * bl) or not 1 <= cols // (4 * bl) <= 255:
            raise UserError(f"{name}: merges 4 runs of block_len={bl} at a time, so the row length must be a "
                            f"multiple of {4 * bl} (at most 255 of them), got {cols}", span)
        return like(src)
    return infer


def _gather_index(name: str, src: Any, index: Any, kw: dict[str, Any], span: Span) -> Type:
    """``gather(src, index[, tmp])``: ``out[i, j] = src.flat[index[i, j]]`` (row-major positions in ``src``,
    ``pto.tgather``'s index form) of 32-bit data; the result has the index's shape. ``tmp`` (upstream's
    workspace operand) is accepted and unused."""
    require_2d(name, src, span)
    if src.dtype.bits != 32:
        raise UserError(f"{name}: gathers by flat index from 32-bit elements with ptoas 0.1.1, got {src}", span,
                        hint="gather along an axis with pl.tensor.gather(src, dim=-1, index=...)")
    _const_cols(name, index, span)
    if index.dtype is not DataType.INT32:
        raise UserError(f"{name}: the index operand must be INT32, got {index}", span,
                        hint="cast the positions with pl.cast(pos, pl.INT32)")
    if kw.get("output_dtype") is not None or kw.get("src_cols") is not None:
        raise UserError(f"{name}: output_dtype and src_cols belong to the mask-pattern form", span)
    return like(src, tuple(index.shape))


def _gather_dim(name: str, src: Any, index: Any, kw: dict[str, Any], span: Span) -> Type:
    """``gather(src, dim=d, index=i)`` as ``torch.gather``: ``out[p] = src[p with p[d] = i[p]]``; the result
    has the index's shape and the source's dtype; along the other axes the index may be shorter."""
    d = kw["dim"]
    if kw.get("src_shape") is not None and len(kw["src_shape"]) != src.rank:  # the 2-D tiles FlattenTileNdTo2D
        return like(src, tuple(index.shape))  # made of checked N-D ones (the kwargs keep their shapes)
    if not isinstance(d, int) or isinstance(d, bool) or not -src.rank <= d < src.rank:
        raise UserError(f"{name}: dim must be an integer axis of the rank-{src.rank} source, got {d!r}", span)
    if index.rank != src.rank:
        raise UserError(f"{name}: the index must have the source's rank {src.rank}, got rank {index.rank}", span,
                        hint="reshape the index to the source's rank")
    wide = index.dtype is DataType.INT32 or (index.dtype is DataType.INT16 and src.dtype.bits == 16)
    if not wide:
        raise UserError(f"{name}: the index must be INT32 (INT16 only with a 16-bit source), got "
                        f"{index.dtype.value} for a {src.dtype.value} source", span,
                        hint="cast the positions with pl.cast(pos, pl.INT32)")
    d %= src.rank
    for k, (i, s) in enumerate(zip(index.shape, src.shape, strict=True)):
        ni, ns = as_int(i), as_int(s)
        if ni is None or ns is None:
            raise UserError(f"{name}: needs static shapes, got {index} and {src}", span)
        if k != d and ni > ns:
            raise UserError(f"{name}: index extent {ni} on axis {k} exceeds the source's {ns}", span)
    if kw.get("mask_pattern") is not None or kw.get("output_dtype") is not None:
        raise UserError(f"{name}: dim= (the index form) takes no mask_pattern or output_dtype", span)
    return like(src, tuple(index.shape))


COMPARE_KW = ("kvalue", "cmp_mode", "out_cols", "count_dtype")


def _gather_compare(name: str, src: Any, kw: dict[str, Any], span: Span) -> Type:
    """``gather(src, kvalue=k, cmp_mode=m, out_cols=n)``: per row, the columns where ``src[r, c] m k`` holds
    (the first ``n``) and their count: ``([rows, n] INT32, [1, rows] count_dtype)``. Typed here so programs
    that define it parse; ConvertTensorToTileOps refuses it (no compare form in ptoas 0.1.1)."""
    rows, _ = require_2d(name, src, span)
    n, count = kw.get("out_cols"), kw.get("count_dtype") or DataType.INT32
    if kw.get("kvalue") is None or kw.get("cmp_mode") is None or not isinstance(n, int) or n <= 0:
        raise UserError(f"{name}: the compare form needs kvalue, cmp_mode and a positive out_cols", span)
    if count not in _INDEX_DTYPES:
        raise UserError(f"{name}: count_dtype must be INT32 or UINT32, got {count!r}", span)
    return TupleType((like(src, (rows, n), dtype=DataType.INT32), like(src, (1, rows), dtype=count)))


def _gather(name: str, kind: type):
    def infer(args: list[Expr], kw: dict[str, Any], span: Span) -> Type:
        src = shaped(args[0], name, "src", span, kind)
        pattern = kw.get("mask_pattern")
        if any(kw.get(k) is not None for k in COMPARE_KW):
            return _gather_compare(name, src, kw, span)
        if kw.get("dim") is not None:
            if len(args) < 2:
                raise UserError(f"{name}: dim= needs an index operand (index=...)", span)
            return _gather_dim(name, src, shaped(args[1], name, "index", span, kind), kw, span)
        if len(args) > 1 and pattern is None:
            return _gather_index(name, src, shaped(args[1], name, "index", span, kind), kw, span)
        if len(args) > 1 or pattern is None:
            raise UserError(f"{name}: only the mask-pattern form (mask_pattern=pl.tile.MaskPattern.P0101) is "
                            "supported with ptoas 0.1.1", span,
                            hint="gather by index on the host or in the orchestration")
        if not isinstance(pattern, MaskPattern):
            raise UserError(f"{name}: mask_pattern must be a pl.tile.MaskPattern, got {pattern!r}", span)
        stride, _ = MASK_STEP[pattern]
        cols = _const_cols(name, src, span)
        prefix = kw.get("src_cols")  # gather from the leading src_cols columns only (a window [:, 0:n])
        if prefix is not None:
            if not isinstance(prefix, int) or not 0 < prefix <= cols:
                raise UserError(f"{name}: src_cols must be in (0, {cols}], got {prefix!r}", span)
            cols = prefix
        if cols % stride:
            raise UserError(f"{name}: {pattern.name} keeps one column in {stride}, so the column count must be "
                            f"a multiple of {stride}, got {cols}", span)
        out = kw.get("output_dtype") or src.dtype
        if not isinstance(out, DataType) or out.bits != src.dtype.bits:
            raise UserError(f"{name}: output_dtype must be a dtype as wide as {src.dtype.value} (the bits are "
                            f"kept), got {out!r}", span)
        return like(src, (src.shape[0], cols // stride), dtype=out)
    return infer


def _set_validshape(name: str, kind: type):
    def infer(args: list[Expr], kw: dict[str, Any], span: Span) -> Type:
        src = shaped(args[0], name, "x", span, kind)
        require_2d(name, src, span)
        for what, e, full in (("valid_rows", args[1], src.shape[0]), ("valid_cols", args[2], src.shape[1])):
            if not isinstance(e.type, ScalarType) or e.type.dtype.is_float:
                raise UserError(f"{name}: '{what}' must be an integer scalar, got {e.type}", span)
            v, n = as_int(e), as_int(full)
            if v is not None and (v < 0 or (n is not None and v > n)):
                raise UserError(f"{name}: {what}={v} is outside the operand's extent {n}", span)
        out = like(src)
        rows, cols = as_int(args[1]), as_int(args[2])
        if isinstance(out, TensorType) and rows is not None and cols is not None and (rows, cols) != tuple(src.shape):
            # a narrowed tensor: an assemble writes only this region (a run-time one is checked at run time)
            return TensorType(out.shape, out.dtype, view=TensorView(valid_shape=(rows, cols)))
        return out
    return infer


for _ns, _kind in (("tile", TileType), ("tensor", TensorType)):
    # signless: the keys sorted are FP32 (an integer index is carried along), and a gather copies bits
    register(OpDef(f"{_ns}.sort32", ("src", "idx"), _sort32(f"{_ns}.sort32", _kind), category="sort", signless=True))
    register(OpDef(f"{_ns}.mrgsort", ("src", "src1?", "src2?", "src3?"), _mrgsort(f"{_ns}.mrgsort", _kind),
                   {"block_len": None, "exhausted": False}, category="sort", in_place=False, signless=True))
    register(OpDef(f"{_ns}.gather", ("src", "index?", "tmp?"), _gather(f"{_ns}.gather", _kind),
                   {"mask_pattern": None, "output_dtype": None, "src_cols": None, "dim": None,
                    "src_shape": None, "index_shape": None, "src_col0": None,
                    **dict.fromkeys(COMPARE_KW), "offset": 0}, category="sort", in_place=False, signless=True))
    register(OpDef(f"{_ns}.set_validshape", ("x", "valid_rows", "valid_cols"),
                   _set_validshape(f"{_ns}.set_validshape", _kind), category="view",
                   view_of=None if _ns == "tile" else "x", keeps_operands=_ns == "tile", signless=True,
                   tile_compute=_ns == "tensor"))
