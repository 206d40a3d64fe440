"""``tile.gather(src, index, dim=d)`` (``torch.gather`` semantics) in the ptoas 0.1.1 dialect.

0.1.1's index-form ``pto.tgather`` reads ``src`` at *flat* positions of its buffer, so the gather along an
axis becomes one tgather at the flat position of every result element: for an element at ``q`` in the
index's shape, ``sum(q[k] * stride[k] for k != d) + index[q] * stride[d]`` (the strides of the source's
buffer, whose row pitch may exceed the gathered extent; ``src_col0`` adds a column offset for a window
``t[:, a:b]`` of a computed tile). The positions are computed on chip in f32 (exact below ``2**24``): a
``tci`` ramp over the index's elements, reshaped to the index's tile, split into its coordinates with
``trems``/``tsub``/``tdivs``, scaled with ``tmuls`` and summed with ``tadd``, then ``tcvt`` back to i32.
"""

from __future__ import annotations

from math import prod
from typing import TYPE_CHECKING

from pypto.codegen.pto_values import Tile
from pypto.ir.dtypes import DataType
from pypto.ir.enums import MemorySpace
from pypto.ir.expr import Call, Var
from pypto.ir.types import TileType, default_tile_view

if TYPE_CHECKING:
    from pypto.codegen.pto_mlir import KernelCodegen

_RINT = " {rmode = #pto<round_mode CAST_RINT>}"


def _vec(cg: KernelCodegen, shape: tuple[int, int], dtype: DataType, hint: str) -> Tile:
    t = TileType(shape, dtype, memory_space=MemorySpace.Vec, view=default_tile_view(shape, MemorySpace.Vec))
    return cg.scratch(cg.buf_type(t), hint)


def _strides(shape: tuple[int, ...], pitch: int) -> list[int]:
    """Element strides of a row-major buffer of ``shape`` whose rows (the last axis) are ``pitch`` apart."""
    strides, acc = [1] * len(shape), pitch
    for k in range(len(shape) - 2, -1, -1):
        strides[k] = acc
        acc *= shape[k]
    return strides


def _scaled(cg: KernelCodegen, t: Tile, by: float, op: str = "tmuls") -> None:
    if by != 1:
        cg.emit_op(op, f"%{t.ssa}, %{cg.const(by, 'f32')} : {t.ty}, f32", t)


def _coordinate(cg: KernelCodegen, pos: Tile, flat: Tile, inner: int, extent: int, stride: int,
                outer: bool) -> None:
    """``flat += ((pos // inner) % extent) * stride`` for one axis of the index (``outer``: no modulo)."""
    part = _vec(cg, (pos.buf.rows, pos.buf.cols), DataType.FP32, "gather_axis")
    if outer:
        cg.copy(pos, part)
    else:
        cg.emit_op("trems", f"%{pos.ssa} : {pos.ty}, %{cg.const(inner * extent, 'f32')}", part)
    if inner > 1:
        low = _vec(cg, (pos.buf.rows, pos.buf.cols), DataType.FP32, "gather_low")
        cg.emit_op("trems", f"%{part.ssa} : {part.ty}, %{cg.const(inner, 'f32')}", low)
        cg.emit_op("tsub", f"%{part.ssa}, %{low.ssa} : {part.ty}, {low.ty}", part)
        _scaled(cg, part, inner, "tdivs")
    _scaled(cg, part, stride)
    cg.emit_op("tadd", f"%{flat.ssa}, %{part.ssa} : {flat.ty}, {part.ty}", flat)


def _ramp(cg: KernelCodegen, rows: int, cols: int, prefix: str) -> Tile:
    """An f32 ``[rows, cols]`` tile of the row-major positions ``0 .. rows * cols - 1`` (a ``tci`` ramp, exact
    below 2**24); its scratch tiles are named ``<prefix>_ramp``, ``<prefix>_pos_i``, ``<prefix>_pos``."""
    ramp = _vec(cg, (1, rows * cols), DataType.INT32, f"{prefix}_ramp")
    cg.emit_op("tci", f"%{cg.const(0, 'i32')} : i32", ramp)
    pos_i = _vec(cg, (rows, cols), DataType.INT32, f"{prefix}_pos_i")
    cg.emit_op("treshape", f"%{ramp.ssa} : {ramp.ty}", pos_i)
    pos = _vec(cg, (rows, cols), DataType.FP32, f"{prefix}_pos")
    cg.emit_op("tcvt", f"%{pos_i.ssa} : {pos_i.ty}", pos, _RINT)
    return pos


def flat_positions(cg: KernelCodegen, idx: Tile, index_shape: tuple[int, ...], src_shape: tuple[int, ...],
                   pitch: int, d: int, col0: int = 0, dtype: DataType = DataType.INT32) -> Tile:
    """An i32 tile (the index's) of the flat buffer positions the index selects along axis ``d`` of a
    row-major buffer of ``src_shape`` whose rows are ``pitch`` apart (see the module docstring); ``dtype``:
    INT16 for the 16-bit positions pto.tscatter wants with 16-bit data."""
    rows, cols = idx.buf.rows, idx.buf.cols
    strides = _strides(src_shape, pitch)
    pos = _ramp(cg, rows, cols, "gather")
    flat = _vec(cg, (rows, cols), DataType.FP32, "gather_flat")
    cg.emit_op("tcvt", f"%{idx.ssa} : {idx.ty}", flat, _RINT)
    _scaled(cg, flat, strides[d])
    for k, extent in enumerate(index_shape):
        if k != d and extent > 1:
            _coordinate(cg, pos, flat, prod(index_shape[k + 1:]), extent, strides[k], outer=k == 0)
    if col0:
        cg.emit_op("tadds", f"%{flat.ssa}, %{cg.const(col0, 'f32')} : {flat.ty}, f32", flat)
    at = _vec(cg, (rows, cols), dtype, "gather_at")
    cg.emit_op("tcvt", f"%{flat.ssa} : {flat.ty}", at, _RINT)
    return at


def gather_dim(cg: KernelCodegen, c: Call, dst: Var | None) -> None:
    src, idx = cg.tile_of(c.args[0]), cg.tile_of(c.args[1])
    rows, cols = idx.buf.rows, idx.buf.cols
    src_shape = tuple(c.kwargs.get("src_shape") or (src.buf.rows, src.buf.cols))
    index_shape = tuple(c.kwargs.get("index_shape") or (rows, cols))
    if index_shape[-1] != cols or prod(index_shape) != rows * cols or src.buf.loc != "ub":
        raise cg.error(f"tile.gather(dim=...) needs a dense Vec index tile, got a {rows}x{cols} {idx.buf.loc} "
                       f"buffer for an index of shape {list(index_shape)}",
                       hint="give the index's last axis a multiple of 32 bytes")
    d = c.kwargs["dim"] % len(index_shape)
    at = flat_positions(cg, idx, index_shape, src_shape, src.buf.cols, d, c.kwargs.get("src_col0") or 0)
    out = cg.def_tile(dst, valid=None)
    cg.op(f"pto.tgather ins(%{src.ssa} : {src.ty}, %{at.ssa} : {at.ty}) outs(%{out.ssa} : {out.ty})")
    cg.written.add(out.ssa)


def mask_positions(cg: KernelCodegen, rows: int, n: int, stride: int, phase: int, pitch: int,
                   dtype: DataType = DataType.INT32) -> Tile:
    """An i32 ``[rows, n]`` tile of the flat positions ``r * pitch + j * stride + phase`` (a mask-pattern
    gather of several rows): from a ``tci`` ramp ``p = r * n + j``, ``j = p % n`` and
    ``(p - j) / n * pitch + j * stride + phase`` in f32."""
    pos = _ramp(cg, rows, n, "mask")
    col = _vec(cg, (rows, n), DataType.FP32, "mask_col")
    cg.emit_op("trems", f"%{pos.ssa} : {pos.ty}, %{cg.const(n, 'f32')}", col)
    cg.emit_op("tsub", f"%{pos.ssa}, %{col.ssa} : {pos.ty}, {col.ty}", pos)
    _scaled(cg, pos, n, "tdivs")  # r, exact
    _scaled(cg, pos, pitch)
    _scaled(cg, col, stride)
    cg.emit_op("tadd", f"%{pos.ssa}, %{col.ssa} : {pos.ty}, {col.ty}", pos)
    if phase:
        cg.emit_op("tadds", f"%{pos.ssa}, %{cg.const(phase, 'f32')} : {pos.ty}, f32", pos)
    at = _vec(cg, (rows, n), dtype, "mask_at")
    cg.emit_op("tcvt", f"%{pos.ssa} : {pos.ty}", at, _RINT)
    return at
