"""Lowerings of tile ops that ptoas 0.1.1 has no single instruction for (concat).

ptoas 0.1.1 has neither ``tconcat`` nor ``tinsert``, and its ``pto.subset`` lowers to pointer
arithmetic on a tile object, so a tile cannot be written into a window of a bigger tile. A column
concat is therefore kept as a list of column blocks (:class:`ColumnJoin`); storing it writes each
block at its column offset. Any other use of a concat result is a compile-time error naming the
alternative.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from pypto.codegen.pto_types import TOOLCHAIN
from pypto.ir.dtypes import DataType
from pypto.ir.expr import BinaryExpr, BinOp, Call, ConstInt, Expr, Var

if TYPE_CHECKING:
    from pypto.codegen.pto_mlir import KernelCodegen, Tile

CONCAT_ALTERNATIVE = ("store the concat result directly (each half is stored at its column offset), or store "
                      "the two tiles into one GM tensor at column offsets yourself and load the joined tile "
                      "in a following kernel")


@dataclass(frozen=True, slots=True)
class ColumnJoin:
    """A column concat result: ``(tile, column offset)`` blocks, left to right."""

    blocks: tuple[tuple[Tile, int], ...]
    cols: int


def join_error(cg: KernelCodegen, e: Expr) -> Exception:
    return cg.error(f"the result of tile.concat ('{getattr(e, 'name', e)}') is used as a tile operand; "
                    f"{TOOLCHAIN} has no tconcat/tinsert instruction, so a concat can only be stored",
                    hint=CONCAT_ALTERNATIVE)


def _blocks(cg: KernelCodegen, e: Expr) -> tuple[tuple[tuple[Tile, int], ...], int]:
    v = cg.env.get(e) if isinstance(e, Var) else None
    if isinstance(v, ColumnJoin):
        return v.blocks, v.cols
    t = cg.tile_of(e)
    if t.buf.dynamic or t.buf.valid != (t.buf.rows, t.buf.cols):
        raise cg.error(f"tile.concat of a tile with a partial valid shape {t.buf.valid} cannot be lowered by "
                       f"{TOOLCHAIN}", hint=CONCAT_ALTERNATIVE)
    return ((t, 0),), t.buf.cols


def concat(cg: KernelCodegen, c: Call, dst: Var | None) -> None:
    """``tile.concat(a, b)``: remember the column blocks; :func:`store_join` writes them."""
    left, lcols = _blocks(cg, c.args[0])
    right, rcols = _blocks(cg, c.args[1])
    rows = {t.buf.rows for t, _ in left + right}
    if len(rows) != 1:
        raise cg.error(f"tile.concat operands have different row counts {sorted(rows)}")
    if dst is not None:
        cg.env[dst] = ColumnJoin(left + tuple((t, off + lcols) for t, off in right), lcols + rcols)


def _shift(off: object, k: int) -> object:
    if k == 0:
        return off
    if isinstance(off, int):
        return off + k
    return BinaryExpr(BinOp.Add, off, ConstInt(k), DataType.INDEX)  # type: ignore[arg-type]


def store_join(cg: KernelCodegen, join: ColumnJoin, offsets: list, store_block) -> None:
    """Store each block of a concat at ``offsets`` shifted by its column offset."""
    if len(offsets) != 2:
        raise cg.error(f"tile.concat results can only be stored into 2-D tensors, got offsets {offsets}")
    for tile, col in join.blocks:
        store_block(tile, [offsets[0], _shift(offsets[1], col)])
