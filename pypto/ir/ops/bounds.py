"""Static window checks for the ops that address part of a tensor or tile (load, store, slice, assemble).

Where the extents and offsets of a window are compile-time constants, a window that leaves its
operand is a located :class:`UserError` here, at the call the user wrote. Windows with dynamic
parts are left to the simulator's run-time GM bounds check.
"""

from __future__ import annotations

from collections.abc import Sequence

from pypto.errors import UserError
from pypto.ir.expr import ConstFloat, Expr, as_int
from pypto.ir.types import Dim, ScalarType
from pypto.span import Span

INT64_MIN = -(2 ** 63)
INT64_MAX = 2 ** 63 - 1


def check_index_element(el: Expr, op: str, what: str, span: Span) -> None:
    """One element of an offsets/shape list must be an integer that fits int64."""
    where = el.span if el.span.is_known() else span
    if isinstance(el, ConstFloat) or (isinstance(el.type, ScalarType) and el.type.dtype.is_float):
        shown = el.value if isinstance(el, ConstFloat) else "a float expression"
        raise UserError(f"{op}: '{what}' element {shown} is not an integer", where,
                        hint="offsets and shapes are element indices: use int values (e.g. 0, 64, i * 64)")
    v = as_int(el)
    if v is not None and not INT64_MIN <= v <= INT64_MAX:
        raise UserError(f"{op}: '{what}' element {v} does not fit in int64", where,
                        hint="offsets and shapes must lie in [-2**63, 2**63 - 1]; they index a tensor's elements")


def _fmt(dims: Sequence[Dim]) -> str:
    return "[" + ", ".join(str(d) if isinstance(d, int) else getattr(d, "name", "?") for d in dims) + "]"


def check_window(op: str, extent: Sequence[Dim], offsets: Sequence[Dim], sizes: Sequence[Dim], span: Span,
                 what: str = "tensor") -> None:
    """UserError when a statically known window ``offsets + sizes`` leaves ``extent`` on some axis.

    A window with any dynamic offset (typically a loop index, maybe of a loop that never runs) and
    axes with a dynamic size or extent are left to the simulator's run-time check.
    """
    static = all(as_int(o) is not None for o in offsets)
    for axis, (n, o, s) in enumerate(zip(extent, offsets, sizes, strict=False)):
        n_, o_, s_ = as_int(n), as_int(o), as_int(s)
        if o_ is not None and o_ < 0:
            raise UserError(f"{op}: offset {o_} on axis {axis} is negative", span,
                            hint=f"offsets index the {what} from 0")
        if s_ is not None and s_ <= 0:
            raise UserError(f"{op}: window extent {s_} on axis {axis} must be positive", span)
        if n_ is None or s_ is None or o_ is None or not static:
            continue  # a dynamic part (often a loop index, maybe in a loop that never runs): checked at run time
        end = o_ + s_
        if end > n_:
            window = ", ".join(f"{as_int(a)}:{as_int(a) + as_int(b)}" if as_int(a) is not None and as_int(b)
                               is not None else "?" for a, b in zip(offsets, sizes, strict=False))
            raise UserError(
                f"{op}: window [{window}] is out of bounds of the {what} of shape {_fmt(extent)} "
                f"(axis {axis}: offset {o_} + extent {s_} = {end} > {n_})", span,
                hint=f"keep offset + tile extent <= the {what}'s extent on every axis; check the tile "
                     "shape, the offsets and the tensor shapes the kernel is specialized for")


def positive_dims(shape: Sequence[Dim], op: str, what: str, span: Span) -> tuple[Dim, ...]:
    """``shape`` itself; a UserError when a static extent is zero or negative."""
    for axis, d in enumerate(shape):
        v = as_int(d)
        if v is not None and v <= 0:
            raise UserError(f"{op}: '{what}' extent {v} on axis {axis} must be positive", span,
                            hint="tile and tensor extents count elements: use a positive int")
    return tuple(shape)
