"""``tile.random`` / ``tensor.random``: upstream's counter-based generator (``pl.tile.random``, ``pl.random``).

``random(key0, key1, counter0, counter1, counter2, counter3, shape, valid_shape=None, dtype=UINT32,
rounds=10)`` fills a 2-D tile with Philox-4x32 words (``rounds`` 7 or 10) of the 64-bit key and the
128-bit counter, in the element order of the A5 ``TRANDOM`` instruction (see
:mod:`pypto.passes._random`, which lowers it into integer tile ops because ptoas 0.1.1 has no
``pto.trandom``). Only the valid region (``valid_shape``, default the whole shape) is defined.
"""

from __future__ import annotations

from typing import Any

from pypto.errors import UserError
from pypto.ir.dtypes import DataType
from pypto.ir.enums import MemorySpace
from pypto.ir.expr import Expr, MakeTuple, as_int
from pypto.ir.ops.infer import dims
from pypto.ir.ops.registry import OpDef, register
from pypto.ir.types import ScalarType, TensorType, TileType, Type
from pypto.span import Span

SEEDS = ("key0", "key1", "counter0", "counter1", "counter2", "counter3")
ROUNDS = (7, 10)
DTYPES = (DataType.INT32, DataType.UINT32)


def static_shape(e: Expr, name: str, what: str, span: Span) -> tuple[int, ...]:
    """A list operand of positive constants (the generator's element order depends on it)."""
    out = tuple(as_int(d) if isinstance(d, Expr) else d for d in dims(e, name, what, span))
    if not all(isinstance(d, int) and d > 0 for d in out):
        raise UserError(f"{name}: '{what}' must be a list of positive constants, got {list(out)}", span)
    return out  # type: ignore[return-value]


def valid_dims(valid: Any) -> tuple[int, ...] | None:
    """The ``valid_shape`` keyword (a list of ints, or a MakeTuple of constants) as ints; None if not static."""
    items = valid.elements if isinstance(valid, MakeTuple) else valid
    if not isinstance(items, list | tuple):
        return None
    out = tuple(as_int(d) if isinstance(d, Expr) else d for d in items)
    return out if all(isinstance(d, int) and not isinstance(d, bool) and d > 0 for d in out) else None


def _infer(name: str, kind: type):
    def infer(args: list[Expr], kw: dict[str, Any], span: Span) -> Type:
        for what, e in zip(SEEDS, args, strict=False):
            if not isinstance(e.type, ScalarType) or e.type.dtype.is_float:
                raise UserError(f"{name}: '{what}' must be an integer scalar, got {e.type}", span)
        shape = static_shape(args[6], name, "shape", span)
        if len(shape) != 2:
            raise UserError(f"{name}: the shape must be 2-D [rows, cols], got {list(shape)}", span)
        dtype = kw.get("dtype")
        if dtype not in DTYPES:
            raise UserError(f"{name}: dtype must be pl.UINT32 or pl.INT32, got {dtype!r}", span)
        if kw.get("rounds") not in ROUNDS:
            raise UserError(f"{name}: rounds must be 7 or 10, got {kw.get('rounds')!r}", span)
        valid = kw.get("valid_shape")
        if valid is not None:
            vs = valid_dims(valid)
            if vs is None:
                raise UserError(f"{name}: valid_shape must be a list of positive constants, got {valid!r}", span)
            if len(vs) != 2 or any(v > n for v, n in zip(vs, shape, strict=False)):
                raise UserError(f"{name}: valid_shape {list(vs)} must be 2-D and within the shape {list(shape)}",
                                span)
        if kind is TileType:
            return TileType(shape, dtype, memory_space=MemorySpace.Vec)
        return TensorType(shape, dtype)
    return infer


for _ns, _kind in (("tile", TileType), ("tensor", TensorType)):
    register(OpDef(f"{_ns}.random", (*SEEDS, "shape"), _infer(f"{_ns}.random", _kind),
                   {"valid_shape": None, "dtype": DataType.UINT32, "rounds": 10}, category="create", signless=True,
                   doc="Philox-4x32 words of (key, counter) in TRANDOM's element order"))
