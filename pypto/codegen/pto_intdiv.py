"""Integer ``tile.div`` (C division, truncated toward zero) with instructions ptoas 0.1.1 lowers.

0.1.1's ``pto.tdiv`` takes f16/f32 tiles only (``'pto.tdiv' op only supports f16/f32 element type``), and
its ``tcvt`` always rounds to nearest (it ignores ``rmode``). The quotient of INT16/INT32 tiles is
computed in INT32 from an f32 estimate and corrected with exact integer arithmetic:

1. ``q = rint(f32(a) / f32(b))``; ``r = a - q * b`` (the true remainder of ``q``; INT32 products wrap,
   and ``r`` fits because ``q`` is within a few hundred of ``a / b``).
2. ``q += rint(f32(r) / f32(b))``, ``r = a - q * b``: now ``|a / b - q| < 1``.
3. ``q`` is one too far from zero exactly when ``r`` is non-zero with the sign opposite to ``a``'s:
   ``q += min(sgn(r) * sgn(a), 0) * sgn(a) * sgn(b)``, with ``sgn`` a clamp to [-1, 1] (``tmax``/``tmin``).

The result equals ``torch.div(a, b, rounding_mode="trunc")`` for every divisor other than 0 (and
``INT32_MIN / -1``, which overflows in C as well). INT16 operands are widened to INT32 and narrowed back.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pypto.codegen.pto_types import TOOLCHAIN
from pypto.codegen.pto_values import Tile
from pypto.errors import UnsupportedFeatureError
from pypto.ir.dtypes import DataType
from pypto.ir.enums import MemorySpace
from pypto.ir.expr import Call, Var
from pypto.ir.types import TileType, default_tile_view

if TYPE_CHECKING:
    from pypto.codegen.pto_mlir import KernelCodegen

INT_DTYPES = (DataType.INT16, DataType.INT32)


class _Ops:
    """Emits the rewrite's instructions into fresh Vec tiles with ``like``'s shape and valid region."""

    def __init__(self, cg: KernelCodegen, like: Tile) -> None:
        self.cg, self.like = cg, like

    def tile(self, dtype: DataType) -> Tile:
        shape = (self.like.buf.rows, self.like.buf.cols)
        t = TileType(shape, dtype, memory_space=MemorySpace.Vec, view=default_tile_view(shape, MemorySpace.Vec))
        return self.cg.def_tile(None, t, valid=tuple(self.like.buf.valid))

    def cvt(self, x: Tile, dtype: DataType, out: Tile | None = None) -> Tile:
        out = out or self.tile(dtype)
        self.cg.emit_op("tcvt", f"%{x.ssa} : {x.ty}", out, " {rmode = #pto<round_mode CAST_RINT>}")
        return out

    def binary(self, pto: str, x: Tile, y: Tile, out: Tile) -> Tile:
        ins = f"%{x.ssa}, %{y.ssa} : {x.ty}, {y.ty}" if pto in ("tadd", "tsub", "tdiv") else \
            f"%{x.ssa} : {x.ty}, %{y.ssa} : {y.ty}"  # tmul/tmax/tmin: the pair form
        self.cg.emit_op(pto, ins, out)
        return out

    def const(self, value: int) -> Tile:
        t = self.tile(DataType.INT32)
        self.cg.emit_op("texpands", f"%{self.cg.const(value, 'i32')} : i32", t)
        return t


def _estimate(ops: _Ops, num: Tile, fb: Tile) -> Tile:
    """``rint(f32(num) / fb)`` as INT32."""
    f = ops.cvt(num, DataType.FP32)
    ops.binary("tdiv", f, fb, f)
    return ops.cvt(f, DataType.INT32)


def _remainder(ops: _Ops, a: Tile, b: Tile, q: Tile, r: Tile) -> Tile:
    ops.binary("tmul", q, b, r)
    return ops.binary("tsub", a, r, r)


def _sign(ops: _Ops, x: Tile, lo: Tile, hi: Tile) -> Tile:
    s = ops.tile(DataType.INT32)
    ops.binary("tmax", x, lo, s)
    return ops.binary("tmin", s, hi, s)


def int_div(cg: KernelCodegen, c: Call, dst: Var | None) -> None:
    """``tile.div`` of two INT16/INT32 tiles, truncated toward zero (see the module docstring)."""
    a0, b0 = cg.tile_of(c.args[0]), cg.tile_of(c.args[1])
    dtype = a0.buf.dtype
    if dtype not in INT_DTYPES or b0.buf.dtype is not dtype:
        raise UnsupportedFeatureError(
            f"tile.div on {dtype.value}/{b0.buf.dtype.value} tiles is not supported with {TOOLCHAIN}: its tdiv "
            "takes f16/f32 only (a newer ptoas divides integers), and pypto's exact rewrite covers INT16 and "
            "INT32 operands of one dtype", cg.span,
            hint="pl.cast both operands to pl.INT32 (or pl.FP32), divide, and cast the result back")
    out = cg.def_tile(dst)
    ops = _Ops(cg, out)
    wide = dtype is DataType.INT32
    a = a0 if wide else ops.cvt(a0, DataType.INT32)
    b = b0 if wide else ops.cvt(b0, DataType.INT32)
    fb = ops.cvt(b, DataType.FP32)
    q = _estimate(ops, a, fb)
    r = _remainder(ops, a, b, q, ops.tile(DataType.INT32))
    ops.binary("tadd", q, _estimate(ops, r, fb), q)
    _remainder(ops, a, b, q, r)
    lo, hi = ops.const(-1), ops.const(1)
    sa, sb = _sign(ops, a, lo, hi), _sign(ops, b, lo, hi)
    fix = _sign(ops, r, lo, hi)
    ops.binary("tmul", fix, sa, fix)
    ops.binary("tmin", fix, ops.const(0), fix)  # -1 where q is one too far from zero, else 0
    ops.binary("tmul", fix, sa, fix)
    ops.binary("tmul", fix, sb, fix)
    if wide:
        ops.binary("tadd", q, fix, out)
    else:
        ops.cvt(ops.binary("tadd", q, fix, q), DataType.INT16, out)


def register(rules: dict) -> None:
    float_div = rules["tile.div"]

    def rule(cg: KernelCodegen, c: Call, dst: Var | None) -> None:
        (float_div if cg.tile_of(c.args[0]).buf.dtype.is_float else int_div)(cg, c, dst)
    rules["tile.div"] = rule
