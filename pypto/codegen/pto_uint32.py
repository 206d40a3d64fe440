"""UINT32 data for ptoas 0.1.1, which has ``ui32`` tiles but lowers them in C++ as ``int32_t``.

Every instruction on a ui32 tile therefore reads it signed. Where the result's bits do not depend on the
sign (the ops registered ``signless``) that is exact; the ops below are rewritten so that they mean what
they mean on UINT32, and :func:`pypto.codegen.pto_unsigned.check` refuses the rest.

* Ordering (``maximum``/``minimum``, their scalar forms, ``row/col_expand_max/min``, ``row/col_max/min``):
  flipping the top bit (``txors`` with -2**31 on an i32 copy) maps unsigned order onto signed order, so
  the operands are flipped, combined or reduced signed, and the result flipped back.
* UINT32 -> FP32: the low 16 bits ``lo = x & 0xFFFF`` and the rest ``hi = x - lo`` (a multiple of 2**16)
  convert exactly; ``hi`` with its top bit flipped converts exactly too, and adding 2**31 back is exact
  (16 significant bits). ``f32(hi) + f32(lo)`` then rounds once, as numpy's conversion does.
* A scalar for a ui32 tile (``full``, ``expands``, ``adds``, ``xors``, ...) is an i32 (0.1.1's
  ``arith.constant`` takes no ``ui32``), broadcast into an i32 tile whose bits ``tcvt`` copies.
* FP32 -> UINT32: ``h = max(x, 2**31) - 2**31`` and ``l = x - h`` split ``x`` exactly into parts below
  2**31; ``l`` is 2**31 itself for ``x >= 2**31``, so it converts as ``min(l, 2**31 - 128)`` plus the
  difference (0 or 128). The three INT32 conversions add up (wrapping) to the UINT32 bits.

The i32 copies are ``tcvt`` between ui32 and i32 tiles (the same bits: both are ``int32_t``).
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from pypto.codegen.pto_reduce import fold_lines
from pypto.codegen.pto_values import Tile
from pypto.ir.dtypes import DataType
from pypto.ir.enums import MemorySpace
from pypto.ir.expr import Call, ConstInt, Var
from pypto.ir.types import TileType

if TYPE_CHECKING:
    from pypto.codegen.pto_mlir import KernelCodegen
    from pypto.codegen.pto_rules import Rule

TOP = -(2**31)  # the top bit as an INT32 scalar
_CVT = " {rmode = #pto<round_mode CAST_RINT>}"


def _temp(cg: KernelCodegen, like: Tile, slot: int, dtype: DataType = DataType.INT32) -> Tile:
    """A Vec tile of ``dtype`` with ``like``'s shape, layout and valid region; ``slot`` tells apart the
    temporaries of one rewrite (each slot is shared between rewrites, as op scratch is)."""
    t = TileType((like.buf.rows, like.buf.cols), dtype, memory_space=MemorySpace.Vec,
                 view=dataclasses.replace(like.buf.view, valid_shape=None))
    buf = cg.buf_type(t, tuple(like.buf.valid))
    if buf.dynamic:
        return cg.scratch(buf, "u32_tmp")  # allocated where it is needed, with its valid extents
    key = ("u32", slot, buf.text)
    return cg.bufs.get(key) or cg.scratch(buf, "u32_tmp", key)


def _cvt(cg: KernelCodegen, x: Tile, out: Tile) -> Tile:
    cg.emit_op("tcvt", f"%{x.ssa} : {x.ty}", out, _CVT)
    return out


def _flip(cg: KernelCodegen, t: Tile) -> Tile:
    """``t`` (an i32 tile) with its top bit flipped, in place."""
    cg.emit_op("txors", f"%{t.ssa}, %{cg.const(TOP, 'i32')} : {t.ty}, i32", t)
    return t


def signed(cg: KernelCodegen, x: Tile, slot: int) -> Tile:
    """An i32 copy of UINT32 ``x`` whose signed order is ``x``'s unsigned order."""
    return _flip(cg, _cvt(cg, x, _temp(cg, x, slot)))


def unsigned_into(cg: KernelCodegen, s: Tile, out: Tile) -> None:
    """Undo :func:`signed`: ``s`` flipped back, into the UINT32 tile ``out``."""
    _cvt(cg, _flip(cg, s), out)


def _pair(a: Tile, b: Tile) -> str:
    return f"%{a.ssa} : {a.ty}, %{b.ssa} : {b.ty}"


def _combine(cg: KernelCodegen, pto: str, a: Tile, b: Tile, out: Tile) -> None:
    """``out = tmax/tmin(a, b)`` read unsigned."""
    sa, sb = signed(cg, a, 0), signed(cg, b, 1)
    cg.emit_op(pto, _pair(sa, sb), sa)
    unsigned_into(cg, sa, out)


def _is_u32(cg: KernelCodegen, c: Call) -> bool:
    return cg.tile_of(c.args[0]).buf.dtype is DataType.UINT32


def _exact(rule: Rule, u32_rule: Rule) -> Rule:
    """``rule``, or ``u32_rule`` on UINT32 operands; marked so that the sign check lets the op through."""
    def wrapped(cg: KernelCodegen, c: Call, dst: Var | None) -> None:
        (u32_rule if _is_u32(cg, c) else rule)(cg, c, dst)
    wrapped.uint32_exact = True  # type: ignore[attr-defined]
    return wrapped


def _binary(pto: str) -> Rule:
    def rule(cg: KernelCodegen, c: Call, dst: Var | None) -> None:
        _combine(cg, pto, cg.tile_of(c.args[0]), cg.tile_of(c.args[1]), cg.def_tile(dst))
    return rule


def _with_scalar(pto: str) -> Rule:
    def rule(cg: KernelCodegen, c: Call, dst: Var | None) -> None:
        a = cg.tile_of(c.args[0])
        out = cg.def_tile(dst)
        sa, sb = signed(cg, a, 0), _temp(cg, a, 1)
        k = c.args[1]
        if isinstance(k, ConstInt):  # flipped here: its bits as an INT32 with the top bit inverted
            bits = (int(k.value) ^ 0x80000000) & 0xFFFFFFFF
            cg.emit_op("texpands", f"%{cg.const(bits - 2**32 if bits >= 2**31 else bits, 'i32')} : i32", sb)
        else:
            cg.emit_op("texpands", f"%{cg.scalar_operand(k, 'i32')} : i32", sb)
            _flip(cg, sb)
        cg.emit_op(pto, _pair(sa, sb), sa)
        unsigned_into(cg, sa, out)
    return rule


def _expand(expand: str, pto: str) -> Rule:
    """``row/col_expand_max/min``: broadcast ``rhs`` (a copy of its bits), then the unsigned combine."""
    def rule(cg: KernelCodegen, c: Call, dst: Var | None) -> None:
        lhs, rhs = cg.tile_of(c.args[0]), cg.tile_of(c.args[1])
        wide = cg.scratch(lhs.buf, "expand_tmp", shared=True)
        cg.emit_op(expand, f"%{rhs.ssa} : {rhs.ty}", wide)
        _combine(cg, pto, lhs, wide, cg.def_tile(dst))
    return rule


def _reduce(kind: str, axis: int) -> Rule:
    def rule(cg: KernelCodegen, c: Call, dst: Var | None) -> None:
        x = cg.tile_of(c.args[0])
        out = cg.def_tile(dst)
        r = _temp(cg, out, 2)
        fold_lines(cg, signed(cg, x, 0), kind, axis, r)
        unsigned_into(cg, r, out)
    return rule


def to_fp32(cg: KernelCodegen, x: Tile, out: Tile) -> None:
    """UINT32 ``x`` converted to the FP32 tile ``out``, rounded once (see the module docstring)."""
    a = _cvt(cg, x, _temp(cg, x, 0))
    lo = _temp(cg, x, 1)
    cg.emit_op("texpands", f"%{cg.const(0xFFFF, 'i32')} : i32", lo)
    cg.emit_op("tand", f"%{a.ssa}, %{lo.ssa} : {a.ty}, {lo.ty}", lo)
    cg.emit_op("tsub", f"%{a.ssa}, %{lo.ssa} : {a.ty}, {lo.ty}", a)
    _cvt(cg, _flip(cg, a), out)
    cg.emit_op("tadds", f"%{out.ssa}, %{cg.const(2.0**31, 'f32')} : {out.ty}, f32", out)
    flo = _cvt(cg, lo, _temp(cg, x, 2, DataType.FP32))
    cg.emit_op("tadd", f"%{out.ssa}, %{flo.ssa} : {out.ty}, {flo.ty}", out)


def from_fp32(cg: KernelCodegen, x: Tile, out: Tile) -> None:
    """FP32 ``x`` (in [0, 2**32)) converted to the UINT32 tile ``out`` (see the module docstring)."""
    h, lo, k = (_temp(cg, x, s, DataType.FP32) for s in (0, 1, 2))
    cg.emit_op("texpands", f"%{cg.const(2.0**31, 'f32')} : f32", k)
    cg.emit_op("tmax", _pair(x, k), h)
    cg.emit_op("tadds", f"%{h.ssa}, %{cg.const(-(2.0**31), 'f32')} : {h.ty}, f32", h)  # x - 2**31, or 0
    cg.emit_op("tsub", f"%{x.ssa}, %{h.ssa} : {x.ty}, {h.ty}", lo)  # x, or 2**31
    cg.emit_op("texpands", f"%{cg.const(2.0**31 - 128, 'f32')} : f32", k)
    cg.emit_op("tmin", _pair(lo, k), k)  # l below 2**31: the largest f32 below it is 2**31 - 128
    cg.emit_op("tsub", f"%{lo.ssa}, %{k.ssa} : {lo.ty}, {k.ty}", lo)  # 0, or 128
    total, part = _temp(cg, x, 3), _temp(cg, x, 4)
    _cvt(cg, k, total)
    for f in (h, lo):
        cg.emit_op("tadd", f"%{total.ssa}, %{_cvt(cg, f, part).ssa} : {total.ty}, {part.ty}", total)
    _cvt(cg, total, out)


def scalar_type(dtype: DataType) -> str:
    """The MLIR type of a scalar for a tile of ``dtype`` (``arith.constant`` takes no ``ui32``: an i32)."""
    return "i32" if dtype is DataType.UINT32 else dtype.mlir


def broadcast(cg: KernelCodegen, s: str, ty: str, t: Tile) -> None:
    """``texpands`` of the scalar ``s`` (of type ``ty``) into ``t``. 0.1.1 wants a scalar of the tile's element
    type, and no ``arith.constant`` is ``ui32``: a ui32 tile gets the bits of an i32 tile (``tcvt``)."""
    if t.buf.dtype is not DataType.UINT32:
        cg.emit_op("texpands", f"%{s} : {ty}", t)
        return
    bits = _temp(cg, t, 5)
    cg.emit_op("texpands", f"%{s} : i32", bits)
    _cvt(cg, bits, t)


def register(rules: dict) -> None:
    """Wrap the ordering rules so that UINT32 operands take the exact rewrites."""
    for op, pto in (("maximum", "tmax"), ("minimum", "tmin")):
        rules[f"tile.{op}"] = _exact(rules[f"tile.{op}"], _binary(pto))
        rules[f"tile.{op}s"] = _exact(rules[f"tile.{op}s"], _with_scalar(pto))
    for kind, pto in (("max", "tmax"), ("min", "tmin")):
        rules[f"tile.row_expand_{kind}"] = _exact(rules[f"tile.row_expand_{kind}"], _expand("trowexpand", pto))
        rules[f"tile.col_expand_{kind}"] = _exact(rules[f"tile.col_expand_{kind}"], _expand("tcolexpand", pto))
        rules[f"tile.row_{kind}"] = _exact(rules[f"tile.row_{kind}"], _reduce(kind, 1))
        rules[f"tile.col_{kind}"] = _exact(rules[f"tile.col_{kind}"], _reduce(kind, 0))
