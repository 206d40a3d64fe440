"""Lowerings of tile windows: concat and assemble (no single ptoas 0.1.1 instruction), slice (a copy).

ptoas 0.1.1 has neither ``tconcat`` nor ``tinsert``, and its ``pto.subset`` lowers to pointer
arithmetic on a tile object, so a tile cannot be written into a window of a bigger on-chip tile.
A column concat or an assemble is therefore kept as a list of blocks painted in order
(:class:`Pieces`); storing it writes each block at its offset, later blocks over earlier ones.
MemoryReuse keeps the blocks' buffers live until the result's last use (the ops' ``keeps_operands`` trait). Any
other use of such a result, or carrying it through a loop or an if, is a compile-time error naming
the alternative. A slice reads a window, which ``pto.textract`` copies into a tile of its own.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from pypto.codegen.pto_types import TOOLCHAIN, flat_order
from pypto.codegen.pto_values import ALTERNATIVE, Block, Pieces, Tile
from pypto.ir.dtypes import DataType
from pypto.ir.expr import BinaryExpr, BinOp, Call, ConstInt, Expr, MakeTuple, Var, as_int

if TYPE_CHECKING:
    from pypto.codegen.pto_mlir import KernelCodegen

def _blocks(cg: KernelCodegen, e: Expr, op: str) -> tuple[Block, ...]:
    v = cg.env.get(e) if isinstance(e, Var) else None
    if isinstance(v, Pieces):
        return v.blocks
    t = cg.tile_of(e)
    if t.buf.loc != "ub":
        raise cg.error(f"{op} of a {t.buf.loc} tile cannot be lowered by {TOOLCHAIN}", hint=ALTERNATIVE[op])
    return ((t, 0, 0),)


def _add(a: object, b: object) -> object:
    ia, ib = as_int(a) if isinstance(a, Expr) else a, as_int(b) if isinstance(b, Expr) else b
    if isinstance(ia, int) and isinstance(ib, int):
        return ia + ib
    if ia == 0:
        return b
    if ib == 0:
        return a
    lhs = a if isinstance(a, Expr) else ConstInt(int(a))  # type: ignore[call-overload]
    rhs = b if isinstance(b, Expr) else ConstInt(int(b))  # type: ignore[call-overload]
    return BinaryExpr(BinOp.Add, lhs, rhs, DataType.INDEX)


def _shifted(blocks: tuple[Block, ...], row: object, col: object) -> tuple[Block, ...]:
    return tuple((t, _add(r, row), _add(c, col)) for t, r, c in blocks)


def concat(cg: KernelCodegen, c: Call, dst: Var | None) -> None:
    """``tile.concat(a, b)``: b's blocks to the right of a's."""
    left, right = _blocks(cg, c.args[0], c.op_name), _blocks(cg, c.args[1], c.op_name)
    width = c.args[0].type.shape[-1]  # type: ignore[union-attr]
    if dst is not None:
        cg.env[dst] = Pieces("tile.concat", left + _shifted(right, 0, width))


def assemble(cg: KernelCodegen, c: Call, dst: Var | None) -> None:
    """``tile.assemble(target, source, offset)``: the source's blocks painted over the target at ``offset``."""
    target, source = _blocks(cg, c.args[0], "tile.assemble"), _blocks(cg, c.args[1], "tile.assemble")
    offs = c.args[2]
    if not isinstance(offs, MakeTuple) or len(offs.elements) not in (1, 2):
        raise cg.error(f"tile.assemble offset must be a list of 1 or 2 dims, got {offs!r}")
    row, col = (0, offs.elements[0]) if len(offs.elements) == 1 else offs.elements
    if dst is not None:
        cg.env[dst] = Pieces("tile.assemble", target + _shifted(source, row, col))


def store_pieces(cg: KernelCodegen, p: Pieces, offsets: list, store_block: Callable[[Tile, list], None]) -> None:
    """Store each block at ``offsets`` plus its own offset, in painting order."""
    if len(offsets) != 2:
        raise cg.error(f"{p.op} results can only be stored into 2-D tensors, got offsets {offsets}")
    for tile, r, col in p.blocks:
        store_block(tile, [_add(offsets[0], r), _add(offsets[1], col)])


def fillpad(cg: KernelCodegen, c: Call, dst: Var | None) -> None:
    """``tile.fillpad(x, pad_value)``: ``tfillpad`` into a full-valid tile whose ``pad`` is the pad value.

    The destination type carries the pad value (``pad=1|2|3``); rows/columns past ``x``'s valid
    region are filled with it.
    """
    from dataclasses import replace

    from pypto.ir.enums import PadValue
    from pypto.ir.types import TileType, default_tile_view

    src = cg.tile_of(c.args[0])
    pad = c.kwargs.get("pad_value") or PadValue.zero
    pad = PadValue[pad] if isinstance(pad, str) else PadValue(pad)
    if pad is PadValue.null:
        raise cg.error(f"{c.op} needs a pad value (zero, max or min), got null",
                       hint="pass pad_value=pl.PadValue.zero")
    t = dst.type if dst is not None else c.result_type
    if not isinstance(t, TileType):
        raise cg.error(f"{c.op} result must be a tile, got {t}")
    view = t.view or default_tile_view(t.shape, t.memory_space)
    t = replace(t, view=replace(view, valid_shape=None, pad=pad))
    out = cg.def_tile(dst, t, valid=None)  # valid everywhere: it does not inherit x's valid region
    cg.emit_op("tfillpad", f"%{src.ssa} : {src.ty}", out)


def _pad_scalar(pad: object, dtype: DataType) -> float | int:
    """The element value a pad mode stands for: 0, the dtype's max/min for integers, and for floats the
    largest finite magnitude (doubled to +-inf by the caller: 0.1.1 prints an inf constant as '+Inff')."""
    import numpy as np

    from pypto.ir.enums import PadValue

    if pad is PadValue.zero:
        return 0
    if dtype.is_float:
        big = {DataType.FP16: float(np.finfo(np.float16).max),
               DataType.BF16: 3.3895313892515355e38}.get(dtype, float(np.finfo(np.float32).max))
        return big if pad is PadValue.max else -big
    bits, signed = dtype.bits, not dtype.value.upper().startswith("UINT")
    lo, hi = (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1) if signed else (0, 2 ** bits - 1)
    return hi if pad is PadValue.max else lo


def fillpad_expand(cg: KernelCodegen, c: Call, dst: Var | None) -> None:
    """``tile.fillpad_expand(x, shape, pad_value)``: ptoas 0.1.1 has no ``tfillpad_expand`` and its
    ``tfillpad`` keeps the shape, so the result is two blocks painted in order (:class:`Pieces`): a
    destination-shaped tile of the pad value (``texpands``), then ``x`` with its invalid region padded
    (``tfillpad`` into a full-valid tile of ``x``'s shape) at the top-left. It can be stored."""
    from dataclasses import replace

    from pypto.ir.enums import PadValue
    from pypto.ir.ops.elementwise_extra import pad_of
    from pypto.ir.types import TileType, default_tile_view

    src = cg.tile_of(c.args[0])
    if src.buf.loc != "ub":
        raise cg.error(f"tile.fillpad_expand of a {src.buf.loc} tile cannot be lowered by {TOOLCHAIN}",
                       hint=ALTERNATIVE["tile.fillpad_expand"])
    pad = pad_of(c.kwargs.get("pad_value"))
    t = dst.type if dst is not None else c.result_type
    if not isinstance(t, TileType) or not isinstance(c.args[0].type, TileType):
        raise cg.error(f"tile.fillpad_expand result must be a tile, got {t}")
    view = t.view or default_tile_view(t.shape, t.memory_space)
    filled = cg.scratch(cg.buf_type(replace(t, memref=None, view=replace(view, valid_shape=None, pad=pad))),
                        "expand_pad")
    ty = filled.buf.dtype.mlir
    cg.emit_op("texpands", f"%{cg.const(_pad_scalar(pad, filled.buf.dtype), ty)} : {ty}", filled)
    if filled.buf.dtype.is_float and pad is not PadValue.zero:  # max * 2 overflows to +-inf exactly
        cg.emit_op("tmuls", f"%{filled.ssa}, %{cg.const(2.0, ty)} : {filled.ty}, {ty}", filled)
    body = src
    if src.buf.valid != (src.buf.rows, src.buf.cols):
        s = c.args[0].type
        sview = s.view or default_tile_view(s.shape, s.memory_space)
        body = cg.scratch(cg.buf_type(replace(s, memref=None, view=replace(sview, valid_shape=None, pad=pad))),
                          "expand_body")
        cg.emit_op("tfillpad", f"%{src.ssa} : {src.ty}", body)
    if dst is not None:
        cg.env[dst] = Pieces("tile.fillpad_expand", ((filled, 0, 0), (body, 0, 0)))


def reinterpret_view(cg: KernelCodegen, c: Call, dst: Var | None) -> None:
    """``tile.reinterpret_view``: ``pto.treshape`` to a tile type of another dtype over the same bytes."""
    a = cg.tile_of(c.args[0])
    if dst is None:
        raise cg.error("tile.reinterpret_view needs a result")
    want = cg.buf_type(dst.type)  # type: ignore[arg-type]
    if a.buf.loc != "ub" or want.loc != "ub" or not (flat_order(a.buf) and flat_order(want)):
        raise cg.error(f"tile.reinterpret_view of a {a.buf.loc} tile in this layout is not supported by the "
                       f"{TOOLCHAIN} codegen: pto.treshape reinterprets the bytes of a fully valid Vec tile "
                       "stored densely in row order", hint="load the data into a row-major Vec tile first")
    cg.emit_op("treshape", f"%{a.ssa} : {a.ty}", cg.view_tile(a, want, dst))


def slice_(cg: KernelCodegen, c: Call, dst: Var | None) -> None:
    """``tile.slice(x, shape, offset)``: a copy of the window (``pto.textract`` at the offset).

    Tiles are values in pypto's IR, so a slice is a new tile; ptoas 0.1.1's ``pto.subset`` would alias
    the source instead (see the module docstring).
    """
    v = cg.env.get(c.args[0]) if isinstance(c.args[0], Var) else None
    if isinstance(v, Tile) and v.buf.loc == "acc":
        raise cg.error(f"tile.slice of an Acc tile cannot be lowered by {TOOLCHAIN}: upstream accumulates "
                       "matmuls into the window in place, but pypto's tiles are values and 0.1.1 cannot "
                       "address a window of an Acc tile (pto.subset aliases only by pointer arithmetic)",
                       hint="accumulate each window in an Acc tile of its own and store it at the window's "
                            "offset: pl.store(win, [0, t * NT], out)")
    src = cg.tile_of(c.args[0])
    offs = c.args[2]
    if not isinstance(offs, MakeTuple) or len(offs.elements) != 2:
        raise cg.error(f"tile.slice of a 2-D tile needs a 2-D offset, got {offs!r}",
                       hint="slice 2-D tiles (reshape an N-D tile to 2-D first)")
    row, col = (cg.index(e) for e in offs.elements)
    valid = c.args[3] if len(c.args) > 3 else None
    dims = tuple(as_int(d) if as_int(d) is not None else d for d in valid.elements) \
        if isinstance(valid, MakeTuple) else None
    cg.emit_op("textract", f"%{src.ssa}[%{row}, %{col}] : {src.ty}", cg.def_tile(dst, valid=dims))


def transpose(cg: KernelCodegen, c: Call, dst: Var | None) -> None:
    """``tile.transpose(x, 0, 1)`` of a 2-D Vec tile: ``pto.ttrans``.

    ptoas 0.1.1 spells it ``ins(%src, %dst) outs(%tmp)`` and emits ``TTRANS(dst, src)``: the second
    input receives the result and the ``outs`` tile is a scratch it does not touch. As an input the
    result must be written before (zero-filled once), or ptoas's PlanMemory may abort.
    """
    axes = sorted(as_int(a) for a in c.args[1:3])  # type: ignore[type-var]
    if axes != [0, 1] or len(c.args[0].type.shape) != 2:  # type: ignore[union-attr]
        raise cg.error(f"tile.transpose of axes {axes} of a rank-{len(c.args[0].type.shape)} tile cannot be "  # type: ignore[union-attr]
                       f"lowered by {TOOLCHAIN} (pto.ttrans swaps the two axes of a 2-D tile)",
                       hint="transpose 2-D tiles, or load the operand through a transposed tensor view")
    src = cg.tile_of(c.args[0])
    if src.buf.loc != "ub":
        raise cg.error(f"tile.transpose of a {src.buf.loc} tile cannot be lowered by {TOOLCHAIN} (pto.ttrans "
                       "transposes Vec tiles)", hint="move the tile to Vec first, or load it through a "
                                                     "transposed tensor view")
    valid = tuple(reversed(src.buf.valid))
    out = cg.def_tile(dst, valid=valid if valid != (src.buf.cols, src.buf.rows) else None)
    if out.ssa not in cg.written:  # 0.1.1 reads the ins() tiles: PlanMemory needs them written first
        cg.zero_fill(out)
    tmp = cg.scratch(out.buf, "trans_tmp", shared=True)
    cg.emit_op("ttrans", f"%{src.ssa}, %{out.ssa} : {src.ty}, {out.ty}", tmp)
    cg.written.add(out.ssa)
