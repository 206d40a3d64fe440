"""Scatters in the ptoas 0.1.1 dialect: ``pto.tscatter ins(%src, %pos) outs(%dst)`` writes
``dst.flat[pos[r, c]] = src[r, c]`` (the index form; 0.1.1 has no mask-pattern tscatter), so every scatter
is a copy of its input (``tmov``) and one tscatter at flat positions computed on chip:

* ``tile.scatter(input, index, src, dim=-1)``: ``r * pitch + index[r, c]`` (pypto.codegen.pto_gather);
* ``tile.scatter(dst, x, mask_pattern=P)``: ``r * pitch + c * stride + phase``;
* ``tile.scatter_update(input, -2, index, src)``: ``index.flat[r] * pitch + c`` (the index reshaped to a
  column, ``trowexpand`` along the row, plus a ``tci`` column ramp broadcast with ``tcolexpand``).

``tile.scatter(base, idx, src, flat=True)`` takes the positions as given: pypto.passes._mscatter lowers
``tile.mscatter`` (``pto.tmscatter``, a scatter into GM, which pypto's codegen and simulators do not
implement) to a load of the output, this scatter and a store.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pypto.codegen.pto_gather import _RINT, _scaled, _vec, flat_positions, mask_positions
from pypto.codegen.pto_values import Tile
from pypto.ir.dtypes import DataType
from pypto.ir.expr import Call, Var
from pypto.ir.ops.sort_ops import MASK_STEP

if TYPE_CHECKING:
    from pypto.codegen.pto_mlir import KernelCodegen


def _index_dtype(cg: KernelCodegen, target: Tile) -> DataType:
    """pto.tscatter takes indices as wide as the data: INT16 positions for 16-bit data (below 2**15)."""
    if target.buf.dtype.bits == 32:
        return DataType.INT32
    if target.buf.dtype.bits != 16 or target.buf.rows * target.buf.cols > 2**15:
        raise cg.error(f"scatter into a {target.buf.rows}x{target.buf.cols} {target.buf.dtype.value} tile: "
                       "pto.tscatter of ptoas 0.1.1 takes indices as wide as the data, so it scatters 32-bit "
                       "data, or 16-bit data into at most 32768 elements", hint="scatter in row blocks")
    return DataType.INT16


def _as_positions(cg: KernelCodegen, idx: Tile, dtype: DataType) -> Tile:
    """``idx`` as ``dtype`` positions (through f32: exact below 2**24)."""
    if idx.buf.dtype is dtype:
        return idx
    shape = (idx.buf.rows, idx.buf.cols)
    wide = _vec(cg, shape, DataType.FP32, "scatter_pos_f")
    cg.emit_op("tcvt", f"%{idx.ssa} : {idx.ty}", wide, _RINT)
    pos = _vec(cg, shape, dtype, "scatter_pos")
    cg.emit_op("tcvt", f"%{wide.ssa} : {wide.ty}", pos, _RINT)
    return pos


def _emit(cg: KernelCodegen, target: Tile, values: Tile, pos: Tile, dst: Var | None) -> None:
    out = cg.def_tile(dst, valid=None)
    cg.copy(target, out)
    cg.op(f"pto.tscatter ins(%{values.ssa} : {values.ty}, %{pos.ssa} : {pos.ty}) outs(%{out.ssa} : {out.ty})")
    cg.written.add(out.ssa)


def _row_positions(cg: KernelCodegen, idx: Tile, rows: int, cols: int, pitch: int, dtype: DataType) -> Tile:
    """``idx.flat[r] * pitch + c`` over ``[rows, cols]`` (rows = the index's element count)."""
    column = _vec(cg, (rows, 1), idx.buf.dtype, "update_rows")
    cg.emit_op("treshape", f"%{idx.ssa} : {idx.ty}", column)
    column32 = _vec(cg, (rows, 1), DataType.FP32, "update_rows_f")
    cg.emit_op("tcvt", f"%{column.ssa} : {column.ty}", column32, _RINT)
    pos = _vec(cg, (rows, cols), DataType.FP32, "update_pos")
    cg.emit_op("trowexpand", f"%{column32.ssa} : {column32.ty}", pos)
    _scaled(cg, pos, pitch)
    ramp = _vec(cg, (1, cols), DataType.INT32, "update_ramp")
    cg.emit_op("tci", f"%{cg.const(0, 'i32')} : i32", ramp)
    ramp32 = _vec(cg, (1, cols), DataType.FP32, "update_ramp_f")
    cg.emit_op("tcvt", f"%{ramp.ssa} : {ramp.ty}", ramp32, _RINT)
    spread = _vec(cg, (rows, cols), DataType.FP32, "update_cols")
    cg.emit_op("tcolexpand", f"%{ramp32.ssa} : {ramp32.ty}", spread)
    cg.emit_op("tadd", f"%{pos.ssa}, %{spread.ssa} : {pos.ty}, {spread.ty}", pos)
    at = _vec(cg, (rows, cols), dtype, "update_at")
    cg.emit_op("tcvt", f"%{pos.ssa} : {pos.ty}", at, _RINT)
    return at


def scatter(cg: KernelCodegen, c: Call, dst: Var | None) -> None:
    if c.kwargs.get("flat"):  # positions given (pl.mscatter, pypto.passes._mscatter)
        target, idx, values = (cg.tile_of(a) for a in c.args)
        pos = _as_positions(cg, idx, _index_dtype(cg, target))
    elif c.kwargs.get("mask_pattern") is not None:
        target, values = cg.tile_of(c.args[0]), cg.tile_of(c.args[1])
        stride, phase = MASK_STEP[c.kwargs["mask_pattern"]]
        pos = mask_positions(cg, values.buf.rows, values.buf.cols, stride, phase, target.buf.cols,
                             _index_dtype(cg, target))
    else:
        target, idx, values = (cg.tile_of(a) for a in c.args)
        shape = (idx.buf.rows, idx.buf.cols)
        pos = flat_positions(cg, idx, shape, (target.buf.rows, target.buf.cols), target.buf.cols, 1,
                             dtype=_index_dtype(cg, target))
    _emit(cg, target, values, pos, dst)


def scatter_update(cg: KernelCodegen, c: Call, dst: Var | None) -> None:
    target, idx, values = cg.tile_of(c.args[0]), cg.tile_of(c.args[2]), cg.tile_of(c.args[3])
    pos = _row_positions(cg, idx, values.buf.rows, values.buf.cols, target.buf.cols, _index_dtype(cg, target))
    _emit(cg, target, values, pos, dst)


def register(rules: dict) -> None:
    rules.update({"tile.scatter": scatter, "tile.scatter_update": scatter_update})
