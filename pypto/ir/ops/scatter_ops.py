"""Scatters (``tile.*`` and their ``tensor.*`` counterparts): the inverses of the gathers.

``scatter(input, dim=-1, index=i, src=s)`` is ``torch.scatter`` along the last axis of a 2-D input:
``out = input; out[b, i[b, k]] = s[b, k]`` (``i`` and ``s`` share a shape, at most ``input``'s extent on
the other axis). ``scatter(x, mask_pattern=P, dst=d)`` writes row ``r`` of ``x`` into the columns of ``d``
the mask pattern selects (``d`` has ``stride`` times the columns), the inverse of the mask gather.
``scatter_update(input, dim=-2, index=i, src=s)`` overwrites whole rows: ``out[i.flat[k], :] = s[k, :]``.
``mscatter(src, idx, out)`` stores ``src`` into the GM tensor ``out`` at element offsets ``idx``
(``out.flat[idx[r, c]] = src[r, c]``). pypto.codegen.pto_scatter lowers the scatters to one index-form
``pto.tscatter`` at flat positions; pypto.passes._mscatter makes ``mscatter`` a load of the output, a
``scatter(..., flat=True)`` and a store.
"""

from __future__ import annotations

from typing import Any

from pypto.errors import UserError
from pypto.ir.dtypes import DataType
from pypto.ir.expr import Expr, as_int
from pypto.ir.ops.infer import like, require_2d, shaped
from pypto.ir.ops.registry import OpDef, register
from pypto.ir.ops.sort_ops import MASK_STEP
from pypto.ir.types import TensorType, TileType, Type
from pypto.span import Span

_INDEX = (DataType.INT32, DataType.INT16)


def _static(name: str, t: Any, span: Span) -> tuple[int, ...]:
    dims = tuple(as_int(d) for d in t.shape)
    if any(d is None for d in dims):
        raise UserError(f"{name}: needs static shapes, got {t}", span)
    return dims  # type: ignore[return-value]


def _index_dtype(name: str, index: Any, span: Span) -> None:
    if index.dtype not in _INDEX:
        raise UserError(f"{name}: the index must be INT32 or INT16, got {index.dtype.value}", span,
                        hint="cast the positions with pl.cast(pos, pl.INT32)")


def _scatter_index(name: str, args: list[Expr], kw: dict[str, Any], span: Span, kind: type) -> Type:
    if len(args) != 3:
        raise UserError(f"{name}: the index form takes input, dim=, index= and src=", span)
    base, index, src = (shaped(a, name, w, span, kind) for a, w in zip(args, ("input", "index", "src"), strict=True))
    require_2d(name, base, span)
    if kw["dim"] not in (-1, 1) or isinstance(kw["dim"], bool):
        raise UserError(f"{name}: scatters along the last axis (dim=-1) of a 2-D input, got dim={kw['dim']!r}",
                        span, hint="transpose the operands so the scattered axis is the last one")
    _index_dtype(name, index, span)
    b, i, s = _static(name, base, span), _static(name, index, span), _static(name, src, span)
    if i != s or len(i) != 2 or i[0] > b[0]:
        raise UserError(f"{name}: index {list(i)} and src {list(s)} must share one 2-D shape with at most "
                        f"{b[0]} rows (the input is {list(b)})", span)
    if src.dtype is not base.dtype:
        raise UserError(f"{name}: src must have the input's dtype {base.dtype.value}, got {src.dtype.value}", span)
    return like(base)


def _scatter_mask(name: str, args: list[Expr], kw: dict[str, Any], span: Span, kind: type) -> Type:
    stride, _ = MASK_STEP[kw["mask_pattern"]]
    if len(args) != 2:  # the parser puts dst= first: scatter(x, dst=d) is scatter(d, x)
        raise UserError(f"{name}: the mask form takes the values and dst= (the tensor written)", span)
    x = shaped(args[1], name, "input", span, kind)
    d = shaped(args[0], name, "dst", span, kind)
    xs, ds = _static(name, x, span), _static(name, d, span)
    if len(xs) != 2 or len(ds) != 2 or xs[0] != ds[0] or xs[1] * stride != ds[1] or x.dtype is not d.dtype:
        raise UserError(f"{name}: {kw['mask_pattern'].name} writes a [{xs[0]}, {xs[-1]}] input into a dst of "
                        f"{stride} times its columns and the same dtype, got dst {d}", span)
    return like(d)


def _scatter_flat(name: str, args: list[Expr], span: Span, kind: type) -> Type:
    """``scatter(base, index, src, flat=True)``: ``base.flat[index[r, c]] = src[r, c]`` (how pl.mscatter is
    lowered, see pypto.passes._mscatter)."""
    base, index, src = (shaped(a, name, w, span, kind) for a, w in zip(args, ("input", "index", "src"), strict=True))
    _index_dtype(name, index, span)
    if _static(name, index, span) != _static(name, src, span) or src.dtype is not base.dtype:
        raise UserError(f"{name}: flat=True takes an index and src of one shape and src of the input's dtype, "
                        f"got {index}, {src} and {base}", span)
    return like(base)


def _width(name: str, args: list[Expr], span: Span) -> None:
    t = args[0].type
    if isinstance(t, TensorType | TileType) and t.dtype.bits not in (16, 32):
        raise UserError(f"{name}: scatters 16- or 32-bit data with ptoas 0.1.1 (pto.tscatter takes positions as "
                        f"wide as the data), got {t.dtype.value}", span, hint="cast the data to a 16-bit type first")


def _scatter(name: str, kind: type):
    def infer(args: list[Expr], kw: dict[str, Any], span: Span) -> Type:
        _width(name, args, span)
        if kw.get("flat"):
            return _scatter_flat(name, args, span, kind)
        if kw.get("mask_pattern") is not None:
            return _scatter_mask(name, args, kw, span, kind)
        if kw.get("dim") is None:
            raise UserError(f"{name}: give dim= with index= and src=, or mask_pattern= with dst=", span)
        return _scatter_index(name, args, kw, span, kind)
    return infer


def _scatter_update(name: str, kind: type):
    def infer(args: list[Expr], kw: dict[str, Any], span: Span) -> Type:
        _width(name, args, span)
        base, index, src = (shaped(a, name, w, span, kind) for a, w in zip(args[::2] + args[3:], ("input", "index", "src"),
                                                                            strict=True))
        require_2d(name, base, span)
        if as_int(args[1]) not in (-2, 0):
            raise UserError(f"{name}: updates whole rows (dim=-2) of a 2-D input, got dim={args[1]}", span,
                            hint="transpose the operands so the updated axis is the rows")
        _index_dtype(name, index, span)
        b, i, s = _static(name, base, span), _static(name, index, span), _static(name, src, span)
        count = 1
        for n in i:
            count *= n
        if len(s) != 2 or s[0] != count or s[1] != b[1] or src.dtype is not base.dtype:
            raise UserError(f"{name}: src must hold one {b[1]}-column {base.dtype.value} row per index "
                            f"({count}), got {src}", span)
        return like(base)
    return infer


def _mscatter(name: str):
    def infer(args: list[Expr], kw: dict[str, Any], span: Span) -> Type:
        src = shaped(args[0], name, "src", span, TileType)
        idx = shaped(args[1], name, "idx", span, TileType)
        out = shaped(args[2], name, "output_tensor", span, TensorType)
        _index_dtype(name, idx, span)
        if _static(name, src, span) != _static(name, idx, span) or src.dtype is not out.dtype:
            raise UserError(f"{name}: src and idx share a shape and src has the output's dtype, got {src}, "
                            f"{idx} and {out}", span)
        return like(out)
    return infer


for _ns, _kind in (("tile", TileType), ("tensor", TensorType)):
    register(OpDef(f"{_ns}.scatter", ("input", "index?", "src?"), _scatter(f"{_ns}.scatter", _kind),
                   {"dim": None, "mask_pattern": None, "flat": False}, category="sort", in_place=False,
                   signless=True))
    register(OpDef(f"{_ns}.scatter_update", ("input", "dim", "index", "src"),
                   _scatter_update(f"{_ns}.scatter_update", _kind), category="sort", in_place=False,
                   signless=True))
register(OpDef("tile.mscatter", ("src", "idx", "output_tensor"), _mscatter("tile.mscatter"), category="sort",
               writes="output_tensor", effect=True))
