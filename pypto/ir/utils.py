"""Upstream's ``pypto.ir.utils``: helpers that turn Python values into IR operands, and cast modes.

The underscore names are upstream's (its op builders import them); they are part of its ``__all__``.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar

from pypto.errors import UserError
from pypto.ir.dtypes import DataType
from pypto.ir.expr import ConstBool, ConstFloat, ConstInt, Expr, MakeTuple, UnaryExpr, UnOp
from pypto.ir.types import ScalarType
from pypto.span import Span

_PARSER_SPAN: ContextVar[Span | None] = ContextVar("_PARSER_SPAN", default=None)

# rounding modes of a cast, by name (the int is the mode's number)
CAST_MODE_NAMES: dict[str, int] = {"none": 0, "rint": 1, "round": 2, "floor": 3, "ceil": 4, "trunc": 5, "odd": 6}


@contextmanager
def use_parser_span(span: Span) -> Iterator[None]:
    """Within the block, ``_get_span_or_capture()`` without an explicit span returns ``span``."""
    token = _PARSER_SPAN.set(span)
    try:
        yield
    finally:
        _PARSER_SPAN.reset(token)


def _get_span_or_capture(span: Span | None = None, frame_offset: int = 1) -> Span:
    """``span``; else the span pinned by ``use_parser_span``; else the caller's file and line
    (``frame_offset`` frames above the caller of this function)."""
    if span is not None:
        return span
    pinned = _PARSER_SPAN.get()
    if pinned is not None:
        return pinned
    frame = inspect.currentframe()
    for _ in range(frame_offset + 1):
        frame = frame.f_back if frame is not None else None
    if frame is None:
        return Span.unknown()
    return Span(frame.f_code.co_filename, frame.f_lineno, 0)


def _normalize_expr(value: int | float | Expr, span: Span | None = None, int_dtype: DataType = DataType.INDEX,
                    float_dtype: DataType = DataType.FP32) -> Expr:
    """An Expr unchanged; a bool -> ConstBool; an int -> ConstInt(int_dtype); a float -> ConstFloat(float_dtype);
    anything else is a TypeError."""
    if isinstance(value, Expr):
        return value
    sp = span or Span.unknown()
    if isinstance(value, bool):
        return ConstBool(value, span=sp)
    if isinstance(value, int) and not isinstance(value, bool):
        return ConstInt(value, int_dtype, span=sp)
    if isinstance(value, float):
        return ConstFloat(value, float_dtype, span=sp)
    raise TypeError(f"Cannot convert {type(value)} to IR expression")


def _normalize_shape(shape: Sequence[int | Expr], span: Span | None = None) -> list[Expr]:
    """Each dimension as an INDEX expression."""
    return [_normalize_expr(d, span) for d in shape]


def _to_make_tuple(value: MakeTuple | Sequence[int | float | Expr], span: Span | None = None) -> MakeTuple:
    """A MakeTuple unchanged; a sequence as a MakeTuple of its normalized elements."""
    if isinstance(value, MakeTuple):
        return value
    sp = span or Span.unknown()
    return MakeTuple(tuple(_normalize_expr(v, sp) for v in value), span=sp)


def _to_int32_scalar(value: int | Expr, span: Span) -> Expr:
    """An int as an INT32 constant; an INDEX expression cast to INT32; another Expr unchanged."""
    if isinstance(value, int):
        return ConstInt(value, DataType.INT32, span=span)
    t = value.type
    if isinstance(t, ScalarType) and t.dtype is DataType.INDEX:
        return UnaryExpr(UnOp.Cast, value, DataType.INT32, span=span)
    return value


def _normalize_const_to_dtype(value: int | float | Expr, dtype: DataType, span: Span | None = None) -> Expr:
    """A Python number as a constant of ``dtype`` (float dtypes get ConstFloat); an Expr unchanged."""
    if isinstance(value, Expr):
        return value
    sp = span or Span.unknown()
    if dtype.name.startswith(("FP", "BF", "HF")):
        return ConstFloat(float(value), dtype, span=sp)
    if isinstance(value, float) and not value.is_integer():
        raise UserError(f"{value} is not an integer and cannot be a {dtype.name} constant", span)
    return ConstInt(int(value), dtype, span=sp)


def _normalize_scalar_operand(scalar: int | float | Expr, operand: Expr, span: Span | None = None) -> Expr:
    """The scalar operand of a tile/tensor-scalar op, as a constant of ``operand``'s element dtype.

    An INDEX scalar expression cannot feed a float op directly: it is a UserError naming the cast."""
    dtype = getattr(operand.type, "dtype", None)
    if isinstance(scalar, Expr):
        t = scalar.type
        if dtype is not None and isinstance(t, ScalarType) and t.dtype is DataType.INDEX \
                and dtype.name.startswith(("FP", "BF", "HF")):
            raise UserError(f"an INDEX scalar cannot be the operand of a {dtype.name} op", span,
                            hint=f"cast it first: pl.cast(x, pl.{dtype.name})")
        return scalar
    return _normalize_const_to_dtype(scalar, dtype or (DataType.FP32 if isinstance(scalar, float)
                                                       else DataType.INT32), span)


def resolve_cast_mode(mode: str | int) -> int:
    """A rounding mode's number from its name (``CAST_MODE_NAMES``) or number 0-6; ValueError otherwise."""
    if isinstance(mode, bool):
        raise ValueError(f"Invalid rounding mode {mode!r}. Expected str name or int in range [0, 6].")
    if isinstance(mode, int):
        if not 0 <= mode <= max(CAST_MODE_NAMES.values()):
            raise ValueError(f"Invalid rounding mode {mode}. Expected int in range [0, 6].")
        return mode
    if mode not in CAST_MODE_NAMES:
        raise ValueError(f"Invalid rounding mode '{mode}'. Expected one of {list(CAST_MODE_NAMES)}.")
    return CAST_MODE_NAMES[mode]


def has_partial_valid_region(expr: Expr) -> bool:
    """Whether a tensor/tile value's view declares a valid shape smaller than its physical shape."""
    t = expr.type
    view = getattr(t, "view", None)
    valid = getattr(view, "valid_shape", None)
    return bool(valid) and tuple(valid) != tuple(getattr(t, "shape", ()))


__all__ = [
    "CAST_MODE_NAMES", "_get_span_or_capture", "_normalize_const_to_dtype", "_normalize_expr",
    "_normalize_scalar_operand", "_normalize_shape", "_to_int32_scalar", "_to_make_tuple", "has_partial_valid_region",
    "resolve_cast_mode", "use_parser_span",
]
