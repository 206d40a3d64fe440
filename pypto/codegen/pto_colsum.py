"""``col_sum(x, tmp)``: the pairwise (binary-tree) column sum, in instructions ptoas 0.1.1 lowers as written.

Upstream's 4-operand TCOLSUM with ``isBinary = true`` adds adjacent rows level by level (row ``i`` of the
next level is ``row 2i + row 2i+1``; with an odd count the last row is added into row 0). ptoas 0.1.1
parses ``isBinary`` but always emits the sequential form (``TCOLSUM(..., false)``), whose FP16 sums differ
in the last bits. pypto writes the tree itself. Per level, the rows to pair (``textract`` of the first
``2 * half`` rows when the level tile holds more) are viewed as ``[half, 2 * C]`` (``treshape``: row ``i``
then holds rows ``2i`` and ``2i + 1`` side by side), the two column halves are extracted and added
(``tadd``, rounded in the tile's dtype as the hardware adds). Row 0 of a level that had an odd count
differs from the pair sum, so it is carried as its own ``[1, C]`` tile (``head``) and paired with row 1 of
the next level separately. The sequential form (``col_sum(x)``, no scratch) is unchanged.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pypto.codegen.pto_values import Tile
from pypto.ir.dtypes import DataType
from pypto.ir.enums import MemorySpace
from pypto.ir.expr import Call, Var
from pypto.ir.types import TileType, default_tile_view

if TYPE_CHECKING:
    from pypto.codegen.pto_mlir import KernelCodegen


def _tile(cg: KernelCodegen, rows: int, cols: int, dtype: DataType) -> Tile:
    t = TileType((rows, cols), dtype, memory_space=MemorySpace.Vec, view=default_tile_view((rows, cols),
                                                                                            MemorySpace.Vec))
    return cg.def_tile(None, t, valid=(rows, cols))


def _extract(cg: KernelCodegen, src: Tile, row: int, col: int, rows: int, cols: int) -> Tile:
    out = _tile(cg, rows, cols, src.buf.dtype)
    cg.emit_op("textract", f"%{src.ssa}[%{cg.index(row)}, %{cg.index(col)}] : {src.ty}", out)
    return out


def _add(cg: KernelCodegen, a: Tile, b: Tile) -> Tile:
    cg.emit_op("tadd", f"%{a.ssa}, %{b.ssa} : {a.ty}, {b.ty}", a)
    return a


def _pairs(cg: KernelCodegen, cur: Tile, count: int) -> Tile:
    """``[half, C]``: row ``i`` = ``cur[2i] + cur[2i + 1]`` for the first ``2 * half`` of ``count`` rows."""
    half, cols = count // 2, cur.buf.cols
    even = cur if (cur.buf.rows, tuple(cur.buf.valid)) == (2 * half, (2 * half, cols)) else \
        _extract(cg, cur, 0, 0, 2 * half, cols)
    wide_type = TileType((half, 2 * cols), cur.buf.dtype, memory_space=MemorySpace.Vec,
                         view=default_tile_view((half, 2 * cols), MemorySpace.Vec))
    wide = cg.view_tile(even, cg.buf_type(wide_type, (half, 2 * cols)), None)
    cg.emit_op("treshape", f"%{even.ssa} : {even.ty}", wide)
    return _add(cg, _extract(cg, wide, 0, 0, half, cols), _extract(cg, wide, 0, cols, half, cols))


def binary_col_sum(cg: KernelCodegen, x: Tile, out: Tile) -> None:
    """``out`` (``[1, C]``) = the pairwise sum of ``x``'s valid rows (see the module docstring)."""
    count, cols = int(x.buf.valid[0]), x.buf.cols
    cur, head = x, None
    while count > 1:
        half = count // 2
        nxt = _pairs(cg, cur, count)
        if head is not None:  # row 0 of cur is head, not cur[0]: pair it with cur[1] on its own
            head = _add(cg, head, _extract(cg, cur, 1, 0, 1, cols))
        if count % 2:
            head = _add(cg, head if head is not None else _extract(cg, nxt, 0, 0, 1, cols),
                        _extract(cg, cur, count - 1, 0, 1, cols))
        cur, count = nxt, half
    cg.emit_op("textract", f"%{(head or cur).ssa}[%{cg.index(0)}, %{cg.index(0)}] : {(head or cur).ty}", out)


def col_sum_rule(sequential):
    """``tile.col_sum``: with a scratch operand the binary tree above; without, ``sequential``."""
    def rule(cg: KernelCodegen, c: Call, dst: Var | None) -> None:
        x = cg.tile_of(c.args[0])
        if len(c.args) < 2 or not x.buf.dtype.is_float or not isinstance(x.buf.valid[0], int):
            sequential(cg, c, dst)
            return
        binary_col_sum(cg, x, cg.def_tile(dst))
    return rule
