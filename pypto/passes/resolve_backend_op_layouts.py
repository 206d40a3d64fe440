"""ResolveBackendOpLayouts: tile layout changes ptoas 0.1.1 has no op for become loads through a GM view.

Upstream's ``tile.transpose_view`` reinterprets a tile's bytes in place (an NZ ``[M, N]`` tile read as
a ZN ``[N, M]`` one). 0.1.1 has no tile reinterpretation, but its loads take any strided GM view, so
``transpose_view(load(x, [r, c], [m, n], target_memory=Mat))`` becomes
``load(tensor.transpose(x, 0, 1), [c, r], [n, m], target_memory=Mat)``: the same window read through
the transposed (DN) view of ``x``. The natural load goes away when nothing else reads it. A view of a
2-D tile computed on the vector core (``pl.matmul(a, pl.add(b0, b1), b_trans=True)``) has no GM view to
read through: it becomes ``tile.transpose`` (``pto.ttrans``, a copy) before the tile moves to the cube.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import prod

from pypto.errors import UserError
from pypto.ir.enums import MemorySpace
from pypto.ir.expr import Call, ConstInt, Expr, MakeTuple, Var, as_int
from pypto.ir.function import Function, Program
from pypto.ir.ops.infer import fmt_shape
from pypto.ir.ops.registry import make_call
from pypto.ir.stmt import AssignStmt, Stmt
from pypto.ir.types import TensorType, TileType
from pypto.passes._index import iadd, imul
from pypto.passes._rewrite import assigns_of, drop_unread, emit, ints, rewrite_blocks
from pypto.passes._util import base_name, substitute_typed
from pypto.passes.base import Pass
from pypto.span import Span

_HINT = ("write pl.tile.transpose_view(pl.load(x, offsets, shapes, target_memory=pl.Mem.Mat)) on a 2-D "
         "tensor x, or pass pl.transpose(x, 0, 1) from the orchestration and load that")


def _error(why: str, span: Span) -> UserError:
    return UserError(f"tile.transpose_view: {why}; ptoas 0.1.1 cannot reinterpret a tile in place, so pypto "
                     "lowers a transposed view only as a load through the transposed GM tensor", span, hint=_HINT)


def _swap(e: Expr) -> MakeTuple:
    assert isinstance(e, MakeTuple) and len(e.elements) == 2
    return MakeTuple((e.elements[1], e.elements[0]), span=e.span)


def _vector_tile(view: Call, loads: dict[Var, Call]) -> bool:
    """Is the view's operand a 2-D Vec tile computed in the kernel (not a load)? It is copied transposed."""
    src = view.args[0]
    t = src.type if isinstance(src, Var) and src not in loads else None
    return isinstance(t, TileType) and t.memory_space is MemorySpace.Vec and t.rank == 2


def _source_load(view: Call, loads: dict[Var, Call]) -> Call:
    src = view.args[0]
    load = loads.get(src) if isinstance(src, Var) else None
    if load is None:
        raise _error("its operand must be a tile loaded straight from a tensor (the result of pl.load)", view.span)
    if load.kwargs.get("target_memory") is not MemorySpace.Mat:
        raise _error("its operand must be loaded into Mat (target_memory=pl.Mem.Mat), the cube's L1", view.span)
    t = load.args[0].type
    if not isinstance(t, TensorType) or t.rank < 2:
        raise _error(f"the loaded tensor must be at least 2-D, got {t}", view.span)
    if t.rank > 2 and _flat_rows(load) is None:
        raise _error(f"a load of the {t.rank}-D tensor {fmt_shape(t.shape)} is viewed transposed only as one "
                     "matrix of a packed tensor (static shape, window 1 in every leading dim)", view.span)
    return load


def _flat_rows(load: Call) -> Expr | None:
    """The first row of an N-D load's single-matrix window in the packed ``[prod(leading), last]`` view
    of its tensor; None when the tensor is strided or dynamic, or the window spans several matrices."""
    t, offs, shapes = load.args[0].type, load.args[1], load.args[2]
    assert isinstance(t, TensorType) and isinstance(offs, MakeTuple) and isinstance(shapes, MakeTuple)
    packed = t.view is None or t.view.stride is None
    lead = [as_int(d) for d in shapes.elements[:-2]]
    if not packed or not all(isinstance(d, int) for d in t.shape) or any(d != 1 for d in lead):
        return None
    row: Expr = offs.elements[-2]
    stride = 1
    for i in range(t.rank - 2, 0, -1):  # offsets of the leading dims, scaled by the rows each spans
        stride *= t.shape[i]
        row = iadd(imul(offs.elements[i - 1], stride, load.span), row, load.span)
    return row


def _flattened(s: AssignStmt, load: Call, out: list[Stmt]) -> Call:
    """An N-D load as a load of the tensor's packed 2-D view: ``x2 = tensor.reshape(x, [rows, last])``."""
    x, t = load.args[0], load.args[0].type
    if not isinstance(t, TensorType) or t.rank == 2:
        return load
    flat = make_call("tensor.reshape", [x, ints((prod(t.shape[:-1]), t.shape[-1]), s.span)], span=s.span)
    x2 = emit(out, f"{base_name(getattr(x, 'name', 'x'))}_2d", flat, s.span)
    row = _flat_rows(load)
    assert row is not None and isinstance(load.args[1], MakeTuple)
    offs = MakeTuple((row, load.args[1].elements[-1]), span=s.span)
    last2 = [MakeTuple(a.elements[-2:], span=a.span) if isinstance(a, MakeTuple) else a for a in load.args[2:]]
    return make_call("tile.load", [x2, offs, *last2], dict(load.kwargs), span=load.span)


def _transposed_load(s: AssignStmt, load: Call) -> list[Stmt]:
    """``xt = tensor.transpose(x, 0, 1)`` and ``v = tile.load(xt, swapped window)`` (an N-D ``x`` first
    viewed as packed 2-D)."""
    out: list[Stmt] = []
    load = _flattened(s, load, out)
    x = load.args[0]
    tr = make_call("tensor.transpose", [x, ConstInt(0, span=s.span), ConstInt(1, span=s.span)], span=s.span)
    xt = emit(out, f"{base_name(getattr(x, 'name', 'x'))}_t", tr, s.span)
    args = [xt, *(_swap(a) if a is not None else None for a in load.args[1:])]
    new = make_call("tile.load", args, dict(load.kwargs), span=s.span)
    var = s.var if new.result_type == s.var.var_type else Var(s.var.name, new.result_type, span=s.var.span)
    return [*out, AssignStmt(var, new, span=s.span)]


@dataclass(frozen=True)
class ResolveBackendOpLayouts(Pass):
    """Lower ``tile.transpose_view`` of a Mat load into a load through the transposed GM view."""

    name = "ResolveBackendOpLayouts"

    def run_function(self, func: Function, program: Program) -> Function:
        if not func.is_incore:
            return func
        views = assigns_of(func.body, "tile.transpose_view").values()
        if not views:
            return func
        loads = assigns_of(func.body, "tile.load")
        # every view checked before any rewrite
        sources = [_source_load(view, loads) for view in views if not _vector_tile(view, loads)]
        renamed: dict[Var, Expr] = {}

        def transpose_view(s: Stmt, view: Call) -> list[Stmt] | None:
            if not isinstance(s, AssignStmt):
                return None
            if _vector_tile(view, loads):  # pto.ttrans: a transposed copy
                zero, one = (ConstInt(i, span=view.span) for i in (0, 1))
                return [AssignStmt(s.var, make_call("tile.transpose", [view.args[0], zero, one], {}, span=view.span),
                                   span=s.span)]
            new = _transposed_load(s, _source_load(view, loads))
            if new[-1].var is not s.var:
                renamed[s.var] = new[-1].var
            return new

        func = func.with_(body=rewrite_blocks(func.body, {"tile.transpose_view": transpose_view}))
        if renamed:
            func = func.with_(body=substitute_typed(func.body, renamed))
        # the natural loads that only fed transposed views are dead now
        fed = {v for v, c in loads.items() if any(c is src for src in sources)}
        return func.with_(body=drop_unread(func.body, fed))


__all__ = ["ResolveBackendOpLayouts"]
