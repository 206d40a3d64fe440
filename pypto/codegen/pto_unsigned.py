"""Unsigned data in kernels for ptoas 0.1.1: UINT16 (no ``ui16`` tiles) and UINT32 (``ui32`` tiles it
lowers as ``int32_t``, so every instruction reads them signed).

UINT16 is carried as INT16, the same bits. The carrier (:data:`pypto.codegen.pto_types.CARRIERS`) is exact
wherever the result's bits do not depend on whether the operands are read signed: loads, stores, moves,
views, broadcasts, wrapping add/sub/mul (and row/column sums and products), bitwise ops, left shifts, ``ci``
(the ops registered ``signless``), a fillpad with a zero pad. Casts are rewritten so that they mean what
they mean on UINT16:

* UINT16 <-> INT16, and any integer -> UINT16 (truncation), keep or drop the same bits: a plain ``tcvt``
  on the carrier (or a copy between two i16 tiles);
* UINT16 -> INT32 / UINT32 / FP32 zero-extends: ``tcvt`` to i32 sign-extends, ``tand`` with 0xFFFF
  clears the copied sign bits (on an i32 tile: ``tand`` takes one dtype), then a ``tcvt`` to UINT32 or
  FP32 is exact (every value is below 2**24).

Every other op on UINT16 data (ordering comparisons, min/max, division, right shifts, max/min reductions,
float casts into UINT16, ...) would read values of 2**15 and above as negative: a located refusal.

UINT32 keeps its ui32 tiles. The ``signless`` ops are exact as they are; min/max, their reductions and
the casts between UINT32 and FP32 are rewritten exactly (:mod:`pypto.codegen.pto_uint32`, whose rules are
marked ``uint32_exact``); every other op (division, remainder, right shifts, ...) is a located refusal.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from pypto.codegen import pto_uint32
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
    """The unsigned element type (carried UINT16, or UINT32) among the call's operands and result, if any."""
    for e in (*c.args, *((dst,) if dst is not None else ())):
        if isinstance(e, MakeTuple):  # offsets and shapes: a tuple type, no element type to carry
            continue
        dt = getattr(e.type, "dtype", None)
        if dt in CARRIERS or dt is DataType.UINT32:
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
    if dt is DataType.UINT32:
        if getattr(cg.rules.get(c.op), "uint32_exact", False):
            return
        raise _refusal(cg, c.op, dt, f"{c.op} would read values of 2**31 and above as negative",
                       "values below 2**31 are the same INT32 values: pl.cast(x, pl.INT32) keeps the bits, "
                       "compute in INT32 and pl.cast(y, pl.UINT32) back; otherwise compute in pl.FP32 "
                       "(pl.cast(x, pl.FP32) is exact below 2**24)")
    raise _refusal(cg, c.op, dt, f"{c.op} would read values of 2**15 and above as negative",
                   "widen first: pl.cast(x, pl.INT32) is exact on UINT16 data (zero-extended), and "
                   "pl.cast(y, pl.UINT16) truncates the result back")


def _zero_pad(c: Call) -> bool:
    """A fillpad whose pad is 0 (the same bits signed or not; ``max``/``min`` are not)."""
    pad = c.kwargs.get("pad_value")
    return c.op in ("tile.fillpad", "tile.fillpad_inplace") and pad in (None, "zero", PadValue.zero)


def _refusal(cg: KernelCodegen, op: str, dt: DataType, why: str, hint: str) -> UnsupportedFeatureError:
    if dt is DataType.UINT32:
        return UnsupportedFeatureError(
            f"{op} on UINT32 data is not supported with {TOOLCHAIN}: its ui32 tiles are int32_t in the C++ it "
            "generates, so every instruction reads them signed; pypto is exact for loads, stores, moves, views, "
            "broadcasts, wrapping add/sub/mul, bitwise ops, left shifts, ci, min/max and their reductions, and "
            f"the casts between UINT32 and FP32; {why} (this needs a ptoas newer than 0.1.1: upstream pins "
            f"{NEWER_PTOAS})", cg.span, hint=hint)
    carrier = CARRIERS[dt].value
    return UnsupportedFeatureError(
        f"{op} on {dt.value} data is not supported with {TOOLCHAIN}: it has no {dt.mlir} tiles, so pypto "
        f"carries {dt.value} as {carrier} (the same bits), exact only for loads, stores, moves, views, "
        f"broadcasts, wrapping add/sub/mul, bitwise ops, left shifts and ci; {why} ({NEWER_PTOAS}, "
        "upstream's pinned release, has ui16 tiles)", cg.span, hint=hint)


def is_carried_cast(c: Call, dst: Var | None) -> bool:
    return _carried(c, dst) is not None


def cast(cg: KernelCodegen, c: Call, dst: Var | None, tcvt: str) -> None:
    """``tile.cast`` with UINT16 or UINT32 on either side; ``tcvt`` is the round-mode suffix of the plain form."""
    src_t, out_t = c.args[0].type, dst.type if dst is not None else None
    assert isinstance(src_t, TileType) and isinstance(out_t, TileType)
    a, src, to = cg.tile_of(c.args[0]), src_t.dtype, out_t.dtype
    if DataType.UINT32 in (src, to) and DataType.UINT16 not in (src, to):
        _cast32(cg, a, src, to, dst, tcvt)
        return
    if to in CARRIERS:
        if src.is_float:
            raise _refusal(cg, f"tile.cast({src.value} -> {to.value})", to,
                           "a float converted to the carrier saturates at 2**15 - 1",
                           f"convert through INT32: pl.cast(pl.cast(x, pl.INT32), pl.{to.value})")
        _convert(cg, a, cg.def_tile(dst), tcvt)
        return
    if to in _WIDE:
        out = cg.def_tile(dst)
        wide = out if to is DataType.INT32 else cg.scratch(_i32(cg, a), "u16_wide")  # tand takes i32 only
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


def _cast32(cg: KernelCodegen, a: Tile, src: DataType, to: DataType, dst: Var | None, tcvt: str) -> None:
    """UINT32 to or from another type: FP32 both ways by the exact rewrites, FP16 into UINT32 as it is (its
    values are below 2**16), integers keep, sign-extend or truncate the bits (as numpy's ``astype``)."""
    if (src, to) == (DataType.UINT32, DataType.FP32):
        pto_uint32.to_fp32(cg, a, cg.def_tile(dst))
    elif (src, to) == (DataType.FP32, DataType.UINT32):
        pto_uint32.from_fp32(cg, a, cg.def_tile(dst))
    elif src.is_float and src is not DataType.FP16 or to.is_float:
        why = ("would read UINT32 values of 2**31 and above as negative" if src is DataType.UINT32 else
               "would convert values of 2**31 and above as INT32 ones")
        raise _refusal(cg, f"tile.cast({src.value} -> {to.value})", DataType.UINT32,
                       f"a {src.value} -> {to.value} conversion {why}, and pypto's exact rewrite converts between "
                       "UINT32 and FP32 only", f"convert through FP32: pl.cast(pl.cast(x, pl.FP32), pl.{to.value})")
    else:
        _convert(cg, a, cg.def_tile(dst), tcvt)


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
