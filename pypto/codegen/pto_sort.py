"""Sorting, mask-pattern gathers and valid-shape changes in the ptoas 0.1.1 dialect.

* ``tile.sort32`` is ``pto.tsort32 ins(%src) outs(%dst, %idx)`` (the index tile is an input, listed
  among the outs in 0.1.1's spelling) and ``tile.mrgsort`` is ``pto.tmrgsort ... blockLen = L``.
* ``tile.gather(src, mask_pattern=P)``: 0.1.1's ``pto.tgather`` verifier rejects the mask-pattern form
  (it wants an index operand *and* rejects one together with a pattern), so the pattern becomes an
  index tile: ``tci`` makes ``0, 1, 2, ...``, doubled (twice for one-in-four patterns) and offset by the
  pattern's phase, and ``pto.tgather`` reads ``src`` at those flat indices. ``output_dtype`` re-types
  the gathered bits with ``pto.treshape`` (tgather keeps the source dtype).
* ``tile.row_expand_add(x, v)`` of a row-major packed ``[M, L]`` row vector (``L`` lanes = 32 bytes)
  adds ``v[r, c % L]`` to ``x[r, c]`` (the lane block repeats across the row). 0.1.1 has no packed
  ``trowexpandadd``, so ``pto.tgather`` builds the repeated tile from ``v`` at flat indices
  ``r * L + (c & (L - 1))`` (a ``tci`` ramp doubled to ``r * L``, broadcast along the rows, plus a ``tci``
  ramp masked to ``c & (L - 1)``, broadcast down the columns), then ``tadd``.
* ``tile.set_validshape(x, r, c)``: 0.1.1 has no ``set_validshape``; the result is a tile whose valid
  region is ``[r, c]`` (``alloc_tile valid_row/valid_col`` when not constant) bound to ``x``'s bytes
  with ``pto.treshape``, so nothing is copied.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from pypto.codegen.pto_gather import gather_dim, mask_positions
from pypto.codegen.pto_types import TOOLCHAIN
from pypto.codegen.pto_values import Tile
from pypto.ir.dtypes import DataType
from pypto.ir.enums import MemorySpace
from pypto.ir.expr import Call, Var, as_int
from pypto.ir.ops.sort_ops import MASK_STEP
from pypto.ir.types import TileType, default_tile_view

if TYPE_CHECKING:
    from pypto.codegen.pto_mlir import KernelCodegen


def _vec(cg: KernelCodegen, shape: tuple[int, int], dtype: DataType, hint: str) -> Tile:
    t = TileType(shape, dtype, memory_space=MemorySpace.Vec, view=default_tile_view(shape, MemorySpace.Vec))
    return cg.scratch(cg.buf_type(t), hint)


def _sort32(cg: KernelCodegen, c: Call, dst: Var | None) -> None:
    src, idx = cg.tile_of(c.args[0]), cg.tile_of(c.args[1])
    out = cg.def_tile(dst, valid=None)
    cg.op(f"pto.tsort32 ins(%{src.ssa} : {src.ty}) outs(%{out.ssa} : {out.ty}, %{idx.ssa} : {idx.ty})")
    cg.written.add(out.ssa)


def _mrgsort(cg: KernelCodegen, c: Call, dst: Var | None) -> None:
    src = cg.tile_of(c.args[0])
    out = cg.def_tile(dst, valid=None)
    if out.ssa == src.ssa:
        raise cg.error("tile.mrgsort cannot merge in place: its result needs a buffer of its own",
                       hint="assign the result to a new name")
    block_len = as_int(c.kwargs["block_len"]) if not isinstance(c.kwargs["block_len"], int) else c.kwargs["block_len"]
    if block_len is None:
        raise cg.error(f"tile.mrgsort: block_len is a run-time value (of a loop variable), but {TOOLCHAIN}'s "
                       "pto.tmrgsort takes blockLen as a constant attribute",
                       hint="unroll the loop (pl.unroll) or write one pl.mrgsort per constant block_len")
    cg.emit_op("tmrgsort", f"%{src.ssa} : {src.ty}", out, f" blockLen = {block_len}")


def _gather_indices(cg: KernelCodegen, n: int, stride: int, phase: int) -> Tile:
    """An i32 ``[1, n]`` tile holding ``phase + stride * j``."""
    idx = _vec(cg, (1, n), DataType.INT32, "gather_idx")
    cg.emit_op("tci", f"%{cg.const(0, 'i32')} : i32", idx)
    while stride > 1:
        cg.emit_op("tadd", f"%{idx.ssa}, %{idx.ssa} : {idx.ty}, {idx.ty}", idx)
        stride //= 2
    if phase:
        cg.emit_op("tadds", f"%{idx.ssa}, %{cg.const(phase, 'i32')} : {idx.ty}, i32", idx)
    return idx


def _gather(cg: KernelCodegen, c: Call, dst: Var | None) -> None:
    if c.kwargs.get("dim") is not None:  # torch.gather along an axis: flat positions (pypto.codegen.pto_gather)
        gather_dim(cg, c, dst)
        return
    src = cg.tile_of(c.args[0])
    if len(c.args) > 1:  # by an INT32 index row: pto.tgather's index form
        idx, out = cg.tile_of(c.args[1]), cg.def_tile(dst, valid=None)
        cg.op(f"pto.tgather ins(%{src.ssa} : {src.ty}, %{idx.ssa} : {idx.ty}) outs(%{out.ssa} : {out.ty})")
        cg.written.add(out.ssa)
        return
    if src.buf.loc != "ub":
        raise cg.error(f"tile.gather with a mask pattern reads a Vec tile with {TOOLCHAIN}, got a "
                       f"{src.buf.loc} tile", hint="load the source into Vec (pl.load)")
    t = dst.type if dst is not None else c.result_type
    assert isinstance(t, TileType)
    rows, n = as_int(t.shape[0]), as_int(t.shape[1])
    assert n is not None and rows is not None
    stride, phase = MASK_STEP[c.kwargs["mask_pattern"]]
    if rows == 1:
        idx = _gather_indices(cg, n, stride, phase)
    else:  # several rows: flat positions row by row (pypto.codegen.pto_gather)
        idx = mask_positions(cg, rows, n, stride, phase, src.buf.cols)
    want = cg.buf_type(t, None)
    got = cg.def_tile(dst, valid=None) if want.dtype is src.buf.dtype else _vec(cg, (rows, n), src.buf.dtype,
                                                                               "gathered")
    cg.op(f"pto.tgather ins(%{src.ssa} : {src.ty}, %{idx.ssa} : {idx.ty}) outs(%{got.ssa} : {got.ty})")
    cg.written.add(got.ssa)
    if got.buf.dtype is not want.dtype:
        cg.emit_op("treshape", f"%{got.ssa} : {got.ty}", cg.view_tile(got, want, dst))


def packed_row_expand_add(cg: KernelCodegen, x: Tile, v: Tile, dst: Var | None) -> None:
    """``x[r, c] + v[r, c % L]`` for a row-major packed ``[M, L]`` ``v`` (see the module docstring)."""
    rows, cols, lanes = x.buf.rows, x.buf.cols, v.buf.cols
    if v.buf.rows != rows or cols % lanes:
        raise cg.error(f"tile.row_expand_add: a packed [{v.buf.rows}, {lanes}] row vector for a [{rows}, {cols}] "
                       "tile needs the same rows and a whole number of lane blocks per row",
                       hint=f"load the row vector as [{rows}, {lanes}]")
    padded = -(-rows // 8) * 8  # an i32 [1, rows] ramp must fill whole 32-byte blocks
    ramp = _vec(cg, (1, padded), DataType.INT32, "lane_row")
    cg.emit_op("tci", f"%{cg.const(0, 'i32')} : i32", ramp)
    step = lanes
    while step > 1:  # r * lanes (lanes is 8, 16 or 32)
        cg.emit_op("tadd", f"%{ramp.ssa}, %{ramp.ssa} : {ramp.ty}, {ramp.ty}", ramp)
        step //= 2
    column = _vec(cg, (padded, 1), DataType.INT32, "lane_rowcol")
    cg.emit_op("treshape", f"%{ramp.ssa} : {ramp.ty}", column)
    idx = _vec(cg, (padded, cols), DataType.INT32, "lane_idx")
    cg.emit_op("trowexpand", f"%{column.ssa} : {column.ty}", idx)
    lane = _vec(cg, (1, cols), DataType.INT32, "lane_col")
    cg.emit_op("tci", f"%{cg.const(0, 'i32')} : i32", lane)
    mask = _vec(cg, (1, cols), DataType.INT32, "lane_mask")
    cg.emit_op("texpands", f"%{cg.const(lanes - 1, 'i32')} : i32", mask)
    cg.emit_op("tand", f"%{lane.ssa}, %{mask.ssa} : {lane.ty}, {mask.ty}", lane)
    spread = _vec(cg, (padded, cols), DataType.INT32, "lane_spread")
    cg.emit_op("tcolexpand", f"%{lane.ssa} : {lane.ty}", spread)
    cg.emit_op("tadd", f"%{idx.ssa}, %{spread.ssa} : {idx.ty}, {spread.ty}", idx)
    wide = cg.scratch(x.buf, "lane_repeat")
    cg.op(f"pto.tgather ins(%{v.ssa} : {v.ty}, %{idx.ssa} : {idx.ty}) outs(%{wide.ssa} : {wide.ty})")
    cg.written.add(wide.ssa)
    out = cg.def_tile(dst)
    cg.emit_op("tadd", f"%{x.ssa}, %{wide.ssa} : {x.ty}, {wide.ty}", out)


def _set_validshape(cg: KernelCodegen, c: Call, dst: Var | None) -> None:
    src = cg.tile_of(c.args[0])
    valid = tuple(as_int(e) if as_int(e) is not None else e for e in c.args[1:3])
    if valid == (src.buf.rows, src.buf.cols) and src.buf.valid == valid:
        if dst is not None:
            cg.env[dst] = src
        return
    t = dst.type if dst is not None else c.result_type
    assert isinstance(t, TileType)
    if t.view is not None and t.view.valid_shape:  # the operands are the valid region (the type's dims
        t = replace(t, view=replace(t.view, valid_shape=None))  # may name the caller's Vars of an outlined region)
    cg.emit_op("treshape", f"%{src.ssa} : {src.ty}", cg.view_tile(src, cg.buf_type(t, valid), dst))


def register(rules: dict) -> None:
    """Add the sort, gather and valid-shape rules to a rule table."""
    rules["tile.sort32"] = _sort32
    rules["tile.mrgsort"] = _mrgsort
    rules["tile.gather"] = _gather
    rules["tile.set_validshape"] = _set_validshape
