"""``tile.write``: one scalar into one element of a Vec tile, with instructions ptoas 0.1.1 lowers.

0.1.1 parses ``pto.tsetval`` but its PlanMemory refuses it, and its ``tcmp``/``tsel`` lose operands, so
the element is blended in bit-exactly instead. Over the tile's bytes viewed as ``i32`` (``treshape``
binds a handle to the same bytes):

* ``tci`` with start ``-p`` over a ``[1, rows * cols]`` tile, viewed ``[rows, cols]``, is ``k - p`` at
  storage position ``k``; ``min(|k - p|, 1) - 1`` is all ones at ``p`` and 0 elsewhere (``mask``);
* the scalar is broadcast (``texpands``) and viewed as ``i32`` bits too;
* ``t ^ ((t ^ v) & mask)`` keeps every other element's bits and puts the scalar's bits at ``p``.

FP32 and INT32 tiles are exact, NaN, infinities and signed zeros included.

ptoas 0.1.1 gives every ``alloc_tile`` bytes of its own (a ``treshape`` destination included), so the
scratch is kept small: one row-sized ``i32`` tile for the mask, one for the ``1`` operand of ``tmin`` and then
the all-zero ``tgather`` index (their uses do not overlap), and one for the value's bits, shared by every
write of the kernel. A one-row row-major tile needs no view of the ramp; an element read from a tile is
broadcast as its ``i32`` bits (a one-element view), so an FP32 write takes no ``f32`` value row and no view
of it. Only an FP32 write of a scalar broadcasts an ``f32`` row (``texpands`` takes the tile's dtype).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pypto.codegen.pto_types import TOOLCHAIN
from pypto.codegen.pto_values import Tile
from pypto.errors import UnsupportedFeatureError
from pypto.ir.dtypes import DataType
from pypto.ir.enums import MemorySpace, TileLayout
from pypto.ir.expr import Call, Expr, MakeTuple, Var, as_int
from pypto.ir.types import TileType, TileView

if TYPE_CHECKING:
    from pypto.codegen.pto_mlir import KernelCodegen

WORD_TYPES = (DataType.FP32, DataType.INT32)


def _vec(shape: tuple[int, int], view: TileView, dtype: DataType = DataType.INT32) -> TileType:
    """A Vec tile type with ``view``'s layout and the full valid region."""
    return TileType(shape, dtype, memory_space=MemorySpace.Vec,
                    view=TileView(blayout=view.blayout, slayout=view.slayout, fractal=view.fractal, pad=view.pad))


def _refuse(cg: KernelCodegen, t: Tile) -> None:
    if t.buf.loc != "ub":
        raise cg.error(f"tile.write into a {t.buf.loc} tile cannot be lowered by {TOOLCHAIN}",
                       hint="write into a Vec tile (pl.Mem.Vec) and move it afterwards")
    if t.buf.dtype not in WORD_TYPES:
        raise UnsupportedFeatureError(
            f"tile.write into a {t.buf.dtype.value} tile is not supported with {TOOLCHAIN}: it has no usable "
            "pto.tsetval (its PlanMemory refuses it; a newer ptoas lowers it), and pypto's bit-exact rewrite "
            "needs FP32 or INT32 elements (16- and 8-bit ones are not implemented)",
            cg.span, hint="write into an FP32/INT32 tile and pl.cast it afterwards, or write the value into "
                          "the GM tensor from the orchestration")


def _position(cg: KernelCodegen, t: Tile, offsets: Expr) -> str:
    """An ``i32`` SSA value: minus the storage position of ``offsets`` in ``t`` (row- or column-major)."""
    idx = list(offsets.elements) if isinstance(offsets, MakeTuple) else [offsets]
    if len(idx) == 1:
        idx = [0, idx[0]] if t.buf.rows == 1 else [idx[0], 0]
    if len(idx) != 2:
        raise cg.error(f"tile.write: {len(idx)} offsets for a 2-D tile; {TOOLCHAIN} kernels write 1-D or 2-D "
                       "tiles", hint="reshape the tile to 2-D (pl.reshape) before writing it")
    r, c = idx
    col_major = t.buf.view.blayout is TileLayout.col_major
    major, minor, stride = (c, r, t.buf.rows) if col_major else (r, c, t.buf.cols)
    for d, n, axis in ((as_int(r), t.buf.valid[0], "row"), (as_int(c), t.buf.valid[1], "column")):
        if d is not None and isinstance(n, int) and not 0 <= d < n:
            raise cg.error(f"tile.write at {axis} {d} of a tile with {n} valid {axis}s",
                           hint="write inside the tile's valid region")
    ri, ci = as_int(major), as_int(minor)
    if ri is not None and ci is not None:
        return cg.const(-(ri * stride + ci), "i32")
    scaled = cg.names.unique("wpos")
    cg.op(f"%{scaled} = arith.muli %{cg.index(major)}, %{cg.const(stride, 'index')} : index")
    pos = cg.names.unique("wpos")
    cg.op(f"%{pos} = arith.addi %{scaled}, %{cg.index(minor)} : index")
    as32 = cg.names.unique("wpos")
    cg.op(f"%{as32} = arith.index_cast %{pos} : index to i32")
    neg = cg.names.unique("wpos")
    cg.op(f"%{neg} = arith.muli %{as32}, %{cg.const(-1, 'i32')} : i32")
    return neg


def _buffer(cg: KernelCodegen, t: TileType, hint: str) -> Tile:
    """One scratch buffer per type and role, shared by every write of the kernel."""
    buf = cg.buf_type(t)
    key = (hint, buf.text)
    return cg.bufs.get(key) or cg.scratch(buf, hint, key)


def _mask(cg: KernelCodegen, t: Tile, start: str) -> Tile:
    """An i32 tile shaped like ``t``: all ones at the written position, 0 elsewhere."""
    rows, cols = t.buf.rows, t.buf.cols
    ramp = _buffer(cg, _vec((1, rows * cols), TileView()), "write_ramp")
    cg.emit_op("tci", f"%{start} : i32", ramp)
    words = cg.buf_type(_vec((rows, cols), t.buf.view))
    mask = ramp
    if words.text != ramp.buf.text:  # [1, n] viewed [rows, cols] (a one-row row-major tile needs no view)
        mask = cg.view_tile(ramp, words, None)
        cg.emit_op("treshape", f"%{ramp.ssa} : {ramp.ty}", mask)
    cg.emit_op("tabs", f"%{mask.ssa} : {mask.ty}", mask)
    one = _buffer(cg, _vec((rows, cols), t.buf.view), "write_aux")
    cg.emit_op("texpands", f"%{cg.const(1, 'i32')} : i32", one)
    cg.emit_op("tmin", f"%{mask.ssa} : {mask.ty}, %{one.ssa} : {one.ty}", mask)
    cg.emit_op("tadds", f"%{mask.ssa}, %{cg.const(-1, 'i32')} : {mask.ty}, i32", mask)
    return mask


def _as_words(cg: KernelCodegen, t: Tile) -> Tile:
    if t.buf.dtype is DataType.INT32:
        return t
    words = cg.view_tile(t, cg.buf_type(_vec((t.buf.rows, t.buf.cols), t.buf.view)), None)
    cg.emit_op("treshape", f"%{t.ssa} : {t.ty}", words)
    return words


def _value_bits(cg: KernelCodegen, e: Expr, out: Tile) -> Tile:
    """An ``i32`` tile shaped like ``out`` holding the bits of the written value in every element: the
    scalar ``e`` broadcast (``texpands``), or element 0 of the one-element tile ``e`` (a read the kernel
    loaded, see :mod:`pypto.passes._kernel_writes`), viewed as ``i32``, through an all-zero index
    ``tgather`` (whose index shares the ``1`` tile of :func:`_mask`)."""
    shape, view = (out.buf.rows, out.buf.cols), out.buf.view
    src = cg.env.get(e) if isinstance(e, Var) else None
    if not isinstance(src, Tile):
        value = _buffer(cg, _vec(shape, view, out.buf.dtype), "write_value")
        ty = value.buf.dtype.mlir
        cg.emit_op("texpands", f"%{cg.scalar_operand(e, ty)} : {ty}", value)
        return _as_words(cg, value)
    if view.blayout is not TileLayout.row_major or src.buf.dtype is not out.buf.dtype:
        raise cg.error(f"tile.write of a tensor element into a {out.buf.dtype.value} "
                       f"{view.blayout.value} tile: the element is broadcast with pto.tgather, which "
                       "takes row-major tiles of one dtype", hint="read the element in the orchestration and "
                                                                  "pass it as a pl.Scalar argument")
    words, bits = _as_words(cg, src), _buffer(cg, _vec(shape, view), "write_value")
    zero = _buffer(cg, _vec(shape, view), "write_aux")
    cg.emit_op("texpands", f"%{cg.const(0, 'i32')} : i32", zero)
    cg.op(f"pto.tgather ins(%{words.ssa} : {words.ty}, %{zero.ssa} : {zero.ty}) outs(%{bits.ssa} : {bits.ty})")
    cg.written.add(bits.ssa)
    return bits


def tile_write(cg: KernelCodegen, c: Call, dst: Var | None) -> None:
    """``pl.write(tile, [r, c], v)``: the tile with element ``(r, c)`` set to ``v``, in its own buffer."""
    src = cg.tile_of(c.args[0])
    _refuse(cg, src)
    out = cg.def_tile(dst) if dst is not None else src
    cg.copy(src, out)
    mask = _mask(cg, out, _position(cg, out, c.args[1]))
    vbits = _value_bits(cg, c.args[2], out)
    bits = _as_words(cg, out)
    cg.emit_op("txor", f"%{bits.ssa}, %{vbits.ssa} : {bits.ty}, {vbits.ty}", vbits)
    cg.emit_op("tand", f"%{vbits.ssa}, %{mask.ssa} : {vbits.ty}, {mask.ty}", vbits)
    cg.emit_op("txor", f"%{bits.ssa}, %{vbits.ssa} : {bits.ty}, {vbits.ty}", bits)
    cg.written.add(out.ssa)


def register(rules: dict) -> None:
    rules["tile.write"] = tile_write
