"""``tile.store(tile, offsets, target, atomic=Add)`` as a read-modify-write (ptoas 0.1.1 has no atomic store).

The kernel loads the target window into Vec, adds the tile and stores the sum with a plain store. That
makes ``target`` a tensor the kernel both reads and writes, so DeriveCallDirections passes it InOut and
the runtime runs every task that writes it one after another: tasks adding into the same window (the
iterations of a ``pl.parallel`` split-K loop) each see the previous sum, and the total is exact.

The blocks of one multi-block task run at the same time, so their read-modify-writes of one window
could overlap; a kernel launched with more than one block (``pl.spmd``) is therefore rejected.
"""

from __future__ import annotations

from pypto.errors import UnsupportedFeatureError
from pypto.ir.enums import AtomicType, MemorySpace
from pypto.ir.expr import Call, Expr, Var, as_int
from pypto.ir.function import Function, Program
from pypto.ir.ops.registry import make_call
from pypto.ir.stmt import AssignStmt, Stmt
from pypto.ir.types import TileType
from pypto.passes._rewrite import emit, ints, rewrite_blocks, shaped
from pypto.passes._util import base_name, calls_in


def is_atomic_add(call: Call) -> bool:
    return call.op == "tile.store" and call.kwargs.get("atomic") in (AtomicType.Add, int(AtomicType.Add))


def expand_atomic_stores(func: Function, program: Program) -> Function:
    """``func`` with every atomic-add ``tile.store`` turned into load, add and plain store."""
    stores = [c for c in calls_in(func.body) if is_atomic_add(c)]
    if not stores:
        return func
    blocks = _launch_blocks(func.name, program)
    if blocks is not None:
        raise UnsupportedFeatureError(
            f"an atomic-add store in kernel '{func.name}', launched with {blocks} blocks: ptoas 0.1.1 has no "
            "atomic store, so pypto reads, adds and stores, which is exact only when no two writers run at "
            "the same time (the blocks of one launch do)", stores[0].span,
            hint="launch one block per task (a pl.parallel loop around the pl.at region): the runtime orders "
                 "the tasks that write the same tensor")

    return func.with_(body=rewrite_blocks(func.body, {"tile.store": _expand}))


def _expand(s: Stmt, call: Call) -> list[Stmt] | None:
    if not is_atomic_add(call):
        return None
    tile, offsets, target = call.args
    out: list[Stmt] = []
    total = accumulate(target, tile, offsets, call, out)
    kwargs = {k: v for k, v in call.kwargs.items() if k != "atomic"}
    store = make_call("tile.store", [total, offsets, target], kwargs, span=call.span)
    var = s.var if isinstance(s, AssignStmt) else Var(f"{base_name(getattr(target, 'name', 'out'))}__store",
                                                       store.result_type, span=s.span)
    return [*out, AssignStmt(var, store, span=s.span)]


def accumulate(target: Expr, tile: Expr, offsets: Expr, call: Call, out: list[Stmt]) -> Expr:
    """The target window's current value plus ``tile``, as statements appended to ``out``; the window
    is loaded with the tile's shape and valid shape. A tile of another dtype than the target (an f32
    accumulator added into f16/bf16) is first rounded to the target's dtype, as the fix-pipe does."""
    t = shaped(tile)
    want = shaped(target).dtype
    if t.dtype is not want:
        cast = make_call("tile.cast", [tile], {"target_type": want, "mode": "rint"}, span=call.span)
        tile = emit(out, f"{base_name(getattr(tile, 'name', 'v'))}__{want.value.lower()}", cast, call.span)
    shape = ints(t.shape)
    view = t.view if isinstance(t, TileType) else None
    valid = ints(view.valid_shape) if view is not None and view.valid_shape is not None else shape
    name = base_name(getattr(target, "name", "out"))
    load = make_call("tile.load", [target, offsets, shape, valid], {"target_memory": MemorySpace.Vec},
                     span=call.span)
    cur = emit(out, f"{name}__cur", load, call.span)
    return emit(out, f"{name}__sum", make_call("tile.add", [cur, tile], span=call.span), call.span)


def _launch_blocks(name: str, program: Program) -> object | None:
    """The block count of a launch of ``name`` with more than one block (None: every launch is one block)."""
    for f in program.functions:
        for c in calls_in(f.body):
            if getattr(c.op, "name", None) != name:
                continue
            n = c.attrs.get("block_num")
            if n is not None and as_int(n) != 1:
                return n
    return None
