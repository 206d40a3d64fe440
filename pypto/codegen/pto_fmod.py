"""``tile.fmod`` / ``tile.fmods``: C fmod (sign of the dividend) with instructions ptoas 0.1.1 lowers.

0.1.1 has no ``tfmod``; its ``trem`` is the floor remainder (sign of the divisor). On magnitudes the two
agree, so ``fmod(a, b)`` is ``trem(|a|, |b|)`` with ``a``'s sign bit or-ed in over the tiles' bytes
viewed as ``i32`` (``treshape``), exact for every FP32 input: ``-0.0`` stays ``-0.0``, an infinite or
NaN dividend or a zero divisor gives NaN, an infinite divisor gives ``a``. The scalar form
broadcasts the divisor first (``texpands``). Other dtypes are a located refusal naming the cast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pypto.codegen.pto_types import TOOLCHAIN
from pypto.codegen.pto_values import Tile
from pypto.errors import UnsupportedFeatureError
from pypto.ir.dtypes import DataType
from pypto.ir.enums import MemorySpace
from pypto.ir.expr import Call, Var
from pypto.ir.types import TileType, TileView

if TYPE_CHECKING:
    from pypto.codegen.pto_mlir import KernelCodegen


def _words_type(t: Tile) -> TileType:
    v = t.buf.view
    return TileType((t.buf.rows, t.buf.cols), DataType.INT32, memory_space=MemorySpace.Vec,
                    view=TileView(blayout=v.blayout, slayout=v.slayout, fractal=v.fractal, pad=v.pad))


def _words(cg: KernelCodegen, t: Tile) -> Tile:
    """``t``'s bytes as an INT32 tile of the same shape (a ``treshape`` view)."""
    words = cg.view_tile(t, cg.buf_type(_words_type(t)), None)
    cg.emit_op("treshape", f"%{t.ssa} : {t.ty}", words)
    return words


def _fmod(cg: KernelCodegen, c: Call, dst: Var | None, scalar: bool) -> None:
    a = cg.tile_of(c.args[0])
    if a.buf.dtype is not DataType.FP32:
        raise UnsupportedFeatureError(
            f"{c.op} on {a.buf.dtype.value} tiles is not supported with {TOOLCHAIN}: it has no tfmod (a newer "
            "ptoas has one), and pypto's exact rewrite (trem of the magnitudes, the dividend's sign bit or-ed "
            "in) is implemented for FP32", cg.span, hint="pl.cast the operands to pl.FP32, take the fmod, and "
                                                          "cast the result back")
    out = cg.def_tile(dst)
    div = cg.scratch(out.buf, "fmod_div", shared=True)
    if scalar:
        cg.emit_op("texpands", f"%{cg.scalar_operand(c.args[1], 'f32')} : f32", div)
        cg.emit_op("tabs", f"%{div.ssa} : {div.ty}", div)
    else:
        b = cg.tile_of(c.args[1])
        cg.emit_op("tabs", f"%{b.ssa} : {b.ty}", div)
    cg.emit_op("tabs", f"%{a.ssa} : {a.ty}", out)
    cg.emit_op("trem", f"%{out.ssa} : {out.ty}, %{div.ssa} : {div.ty}", out)
    sign = cg.scratch(cg.buf_type(_words_type(out)), "fmod_sign", shared=True)
    cg.emit_op("texpands", f"%{cg.const(-2 ** 31, 'i32')} : i32", sign)
    bits = _words(cg, a)
    cg.emit_op("tand", f"%{bits.ssa}, %{sign.ssa} : {bits.ty}, {sign.ty}", sign)
    obits = _words(cg, out)
    cg.emit_op("tor", f"%{obits.ssa} : {obits.ty}, %{sign.ssa} : {sign.ty}", obits)
    cg.written.add(out.ssa)


def register(rules: dict) -> None:
    rules["tile.fmod"] = lambda cg, c, dst: _fmod(cg, c, dst, False)
    rules["tile.fmods"] = lambda cg, c, dst: _fmod(cg, c, dst, True)
