"""UINT16 data in kernels for ptoas 0.1.1, which has no ``ui16`` tiles: carried as INT16, the same bits.

The carrier (:data:`pypto.codegen.pto_types.CARRIERS`) is exact wherever the result's bits do not depend
on whether the operands are read signed: loads, stores, moves, views, broadcasts, wrapping add/sub/mul,
bitwise ops, left shifts, ``ci`` (the ops registered ``signless``), a fillpad with a zero pad. Casts are rewritten so that they mean
what they mean on UINT16:

* UINT16 <-> INT16, and any integer -> UINT16 (truncation), keep or drop the same bits: a plain ``tcvt``
  on the carrier (or a copy between two i16 tiles);
* UINT16 -> INT32 / UINT32 / FP32 zero-extends: ``tcvt`` to i32 sign-extends, ``tand`` with 0xFFFF
  clears the copied sign bits, then a ``tcvt`` to FP32 is exact (every value is below 2**24).

Every other op on UINT16 data (ordering comparisons, min/max, division, right shifts, reductions,
float casts into UINT16, ...) would read values of 2**15 and above as negative: a located refusal.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from pypto.codegen.pto_types import CARRIERS, TOOLCHAIN, TileBuf
from pypto.codegen.pto_values import Tile
from pypto.errors import UnsupportedFeatureError
from pypto.ir.dtypes import DataType
from pypto.ir.enums import MemorySpace, PadValue
from pypto.ir.expr import Call, MakeTuple, Var
from pypto.ir.ops.registry import lookup
from pypto.ir.types import TileType

if TYPE_CHECKING:
    from pypto.codegen.pto_mlir import KernelCodegen

# the ptoas release upstream PyPTO pins, whose dialect has ui16 tiles
NEWER_PTOAS = "ptoas v0.57"
_WIDE = (DataType.INT32, DataType.UINT32, DataType.FP32)


def _carried(c: Call, dst: Var | None) -> DataType | None:
    """The carried (tile-less) element type among the call's operands and result, if any."""
    for e in (*c.args, *((dst,) if dst is not None else ())):
        if isinstance(e, MakeTuple):  # offsets and shapes: a tuple type, no element type to carry
            continue
        dt = getattr(e.type, "dtype", None)
        if dt in CARRIERS:
            return dt
    return None


def check(cg: KernelCodegen, c: Call, dst: Var | None) -> None:
    """Refuse an op on carried data whose result would depend on reading it signed."""
    dt = _carried(c, dst)
    if dt is None or c.op == "tile.cast" or _zero_pad(c):
        return
    op = lookup(c.op)
    if op is not None and op.signless:
        return
    raise _refusal(cg, c.op, dt, f"{c.op} would read values of 2**15 and above as negative",
                   "widen first: pl.cast(x, pl.INT32) is exact on UINT16 data (zero-extended), and "
                   "pl.cast(y, pl.UINT16) truncates the result back")


def _zero_pad(c: Call) -> bool:
    """A fillpad whose pad is 0 (the same bits signed or not; ``max``/``min`` are not)."""
    pad = c.kwargs.get("pad_value")
    return c.op in ("tile.fillpad", "tile.fillpad_inplace") and pad in (None, "zero", PadValue.zero)


def _refusal(cg: KernelCodegen, op: str, dt: DataType, why: str, hint: str) -> UnsupportedFeatureError:
    carrier = CARRIERS[dt].value
    return UnsupportedFeatureError(
        f"{op} on {dt.value} data is not supported with {TOOLCHAIN}: it has no {dt.mlir} tiles, so pypto "
        f"carries {dt.value} as {carrier} (the same bits), exact only for loads, stores, moves, views, "
        f"broadcasts, wrapping add/sub/mul, bitwise ops, left shifts and ci; {why} ({NEWER_PTOAS}, "
        "upstream's pinned release, has ui16 tiles)", cg.span, hint=hint)


def is_carried_cast(c: Call, dst: Var | None) -> bool:
    return _carried(c, dst) is not None


def cast(cg: KernelCodegen, c: Call, dst: Var | None, tcvt: str) -> None:
    """``tile.cast`` with UINT16 on either side; ``tcvt`` is the round-mode suffix of the plain form."""
    src_t, out_t = c.args[0].type, dst.type if dst is not None else None
    assert isinstance(src_t, TileType) and isinstance(out_t, TileType)
    a, src, to = cg.tile_of(c.args[0]), src_t.dtype, out_t.dtype
    if to in CARRIERS:
        if src.is_float:
            raise _refusal(cg, f"tile.cast({src.value} -> {to.value})", to,
                           "a float converted to the carrier saturates at 2**15 - 1",
                           f"convert through INT32: pl.cast(pl.cast(x, pl.INT32), pl.{to.value})")
        _convert(cg, a, cg.def_tile(dst), tcvt)
        return
    if to in _WIDE:
        out = cg.def_tile(dst)
        wide = out if to is not DataType.FP32 else cg.scratch(_i32(cg, a), "u16_wide")
        cg.emit_op("tcvt", f"%{a.ssa} : {a.ty}", wide, tcvt)
        mask = cg.scratch(_i32(cg, a), "u16_mask", shared=True)
        cg.emit_op("texpands", f"%{cg.const(0xFFFF, 'i32')} : i32", mask)
        cg.emit_op("tand", f"%{wide.ssa}, %{mask.ssa} : {wide.ty}, {mask.ty}", wide)
        if wide is not out:
            cg.emit_op("tcvt", f"%{wide.ssa} : {wide.ty}", out, tcvt)
        return
    if to in (DataType.INT16, DataType.INT8):
        _convert(cg, a, cg.def_tile(dst), tcvt)
        return
    raise _refusal(cg, f"tile.cast({src.value} -> {to.value})", src,
                   f"a {src.value} value of 2**15 and above would convert as a negative number",
                   f"widen first: pl.cast(pl.cast(x, pl.FP32), pl.{to.value})")


def _convert(cg: KernelCodegen, a: Tile, out: Tile, tcvt: str) -> None:
    if a.buf.dtype is out.buf.dtype:
        cg.copy(a, out)
    else:
        cg.emit_op("tcvt", f"%{a.ssa} : {a.ty}", out, tcvt)


def _i32(cg: KernelCodegen, a: Tile) -> TileBuf:
    """The buffer type of an INT32 Vec tile with ``a``'s shape, layout and valid region."""
    t = TileType((a.buf.rows, a.buf.cols), DataType.INT32, memory_space=MemorySpace.Vec,
                 view=dataclasses.replace(a.buf.view, valid_shape=None))
    return cg.buf_type(t, tuple(a.buf.valid))
