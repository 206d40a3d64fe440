"""``pl.write`` inside a kernel, for ConvertTensorToTileOps.

ptoas 0.1.1 has no scalar load from or store to GM. A kernel's ``x = pl.read(t, idx)`` whose value is
only written (:func:`pypto.passes._kernel_reads.write_values`) becomes a one-element ``tile.load``;
``pl.write(tile, pos, x)`` then takes that tile as its value (the codegen broadcasts its element).
``pl.write(dst, pos, v)`` of a GM tensor is a ``tile.store`` of a one-element tile holding ``v`` (the
loaded tile, or ``tile.full`` of a scalar); of a tensor the kernel computed, a ``tile.write``.
"""

from __future__ import annotations

from typing import Protocol

from pypto.ir.enums import MemorySpace
from pypto.ir.expr import Call, Expr, MakeTuple, Var, as_int
from pypto.ir.ops.registry import make_call
from pypto.ir.stmt import AssignStmt, EvalStmt, Stmt
from pypto.ir.types import TensorType
from pypto.passes._rewrite import emit, ints
from pypto.passes._util import base_name


class _Converter(Protocol):
    """What these rewrites use of ConvertTensorToTileOps' converter (kept as a protocol: no import circle)."""

    tiles: dict[Var, Var]
    renames: dict[Var, Var]
    created: set[Var]

    def bind(self, s: AssignStmt, call: Call) -> AssignStmt: ...

    def tile_of(self, e: Expr, space: MemorySpace, out: list[Stmt]) -> Expr: ...


def _listed(e: Expr) -> MakeTuple:
    return e if isinstance(e, MakeTuple) else MakeTuple((e,), span=e.span)


def read_into_tile(conv: _Converter, s: AssignStmt, value: Call) -> list[Stmt]:
    """``x = pl.read(t, idx)``, written only: ``x`` becomes a one-element Vec tile loaded from ``t`` (the
    ``[1, 1]`` window of ``t`` when the kernel computes ``t``: a ``tile.slice`` copy)."""
    t = value.args[0].type
    assert isinstance(t, TensorType)
    ones = ints([1] * t.rank)
    src = conv.tiles.get(value.args[0]) if isinstance(value.args[0], Var) else None
    if src is not None and t.rank == 2:
        call = make_call("tile.slice", [src, ones, _listed(value.args[1])], span=value.span)
    else:
        call = make_call("tile.load", [value.args[0], _listed(value.args[1]), ones, ones],
                         {"target_memory": MemorySpace.Vec}, span=value.span)
    conv.renames[s.var] = tile = Var(f"{base_name(s.var.name)}__tile", call.result_type, span=s.var.span)
    return [AssignStmt(tile, call, span=s.span)]


def created_tile_assemble(conv: _Converter, s: Stmt, value: Call) -> list[Stmt] | None:
    """``t[:, :] = v`` or ``t[:, a:b] = v`` (``t = pl.assemble(t, v, offs)``) of a ``pl.create_tensor`` or
    ``pl.full`` of the kernel: for all of ``t``, ``t`` becomes a copy of ``v`` (a whole-window ``tile.slice``);
    for a window of it, ``tile.assemble`` of the tiles (the blocks a store of ``t`` writes in order). None for
    an assemble into a GM tensor (or a view of one), which is stored to."""
    target, src, offsets = value.args
    if not (isinstance(s, AssignStmt) and isinstance(target, Var) and target in conv.created):
        return None
    shape, src_t = conv.tiles[target].type, src.type
    whole = isinstance(src_t, TensorType) and tuple(getattr(shape, "shape", ())) == tuple(src_t.shape) and \
        all(as_int(o) == 0 for o in _listed(offsets).elements)
    out: list[Stmt] = []
    tile = conv.tile_of(src, MemorySpace.Vec, out)
    if whole:
        call = make_call("tile.slice", [tile, ints(src_t.shape), offsets], span=value.span)
    else:
        call = make_call("tile.assemble", [conv.tiles[target], tile, _listed(offsets)], span=value.span)
    conv.created.add(s.var)  # a later window write into the result assembles into it too
    return [*out, conv.bind(s, call)]


def write(conv: _Converter, s: Stmt, value: Call) -> list[Stmt]:
    """``pl.write(dst, pos, v)`` in a kernel: a tile.write of a computed tensor, else a one-element store."""
    dst, pos, v = value.args
    v = conv.renames.get(v, v) if isinstance(v, Var) else v
    if isinstance(dst, Var) and dst in conv.tiles:
        call = make_call("tile.write", [conv.tiles[dst], pos, v], span=value.span)
        return [conv.bind(s, call) if isinstance(s, AssignStmt) else EvalStmt(call, span=s.span)]
    t = dst.type
    assert isinstance(t, TensorType)
    out: list[Stmt] = []
    if not isinstance(getattr(v, "type", None), TensorType) and v not in conv.renames.values():
        fill = make_call("tile.full", [ints([1] * t.rank), v], {"dtype": t.dtype}, span=value.span)
        v = emit(out, f"{base_name(getattr(dst, 'name', 'write'))}__value", fill, value.span)
    store = make_call("tile.store", [v, _listed(pos), dst], span=value.span)
    out.append(AssignStmt(s.var, store, span=s.span) if isinstance(s, AssignStmt) else EvalStmt(store, span=s.span))
    return out
