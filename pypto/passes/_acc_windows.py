"""Windows of an Acc tile as ``matmul_acc`` destinations, a helper of ConvertTensorToTileOps.

Upstream lets a kernel accumulate into windows of one shared accumulator::

    acc = pl.tile.create([M, N], pl.FP32, target_memory=pl.MemorySpace.Acc)
    for t in pl.range(T):
        for k0 in pl.range(0, K, KT):
            ...
            win = pl.tile.slice(acc, [M, NT], [0, t * NT])
            win = pl.matmul_acc(win, a_l0, b_l0, init_cond=(k0 == 0))
    out = pl.store(acc, [0, 0], out)

where the slice is a view (``pto.subview``) the MAD writes in place. Tiles are values in pypto's IR, and
ptoas 0.1.1 can address no window of an Acc tile, so the same program is rewritten into what it means: each
window's K loop carries a window-sized accumulator of its own (starting from a fresh Acc tile, the first step
overwriting it through ``init_cond``), and after the loop the window is stored at its offset within the
final store's window. The final store of ``acc`` is dropped; ``acc`` is never built.

Only this shape is rewritten: ``acc`` a ``tile.create`` in Acc whose every use is such a slice or one
``tile.store`` at the top level after them; each slice feeding exactly one ``matmul_acc`` with an
``init_cond`` in the same loop body, whose result is used nowhere else, the slice's offset not computed in that
loop. Anything else keeps the located error of the codegen (a slice of an Acc tile).
"""

from __future__ import annotations

import dataclasses

from pypto.ir.enums import MemorySpace
from pypto.ir.expr import Call, IterArg, Var
from pypto.ir.function import Function
from pypto.ir.ops.registry import make_call
from pypto.ir.stmt import AssignStmt, ForStmt, SeqStmts, Stmt, YieldStmt, flatten, seq
from pypto.ir.types import TileType
from pypto.ir.visitor import substitute
from pypto.passes._rewrite import assign_of, elements, expand_stmts, ints, store_shifted
from pypto.passes._util import defined_vars, iter_stmts, used_vars, var_use_counts


def _acc_creates(func: Function) -> list[Var]:
    return [a[0] for s in flatten(func.body) if (a := assign_of(s, "tile.create")) is not None
            and isinstance(t := a[0].var_type, TileType) and t.memory_space is MemorySpace.Acc]


def _windows(func: Function, acc: Var) -> tuple[list[tuple[ForStmt, AssignStmt, AssignStmt]],
                                                tuple[Stmt, tuple[Var, Call]]] | None:
    """The (loop, slice, matmul_acc) of every window of ``acc`` and its one top-level store (the statement and
    its ``var = call``), or None when ``acc`` is used in any other way."""
    uses = var_use_counts(func.body)  # a var's count includes its definition
    stores = [(s, a) for s in flatten(func.body) if (a := assign_of(s, "tile.store")) and a[1].args[0] is acc]
    found = []
    for loop in iter_stmts(func.body):
        if not isinstance(loop, ForStmt):
            continue
        body = flatten(loop.body)
        for i, s in enumerate(body):
            sl = assign_of(s, "tile.slice")
            if sl is None or sl[1].args[0] is not acc:
                continue
            step = next((x for x in body[i + 1:] if (m := assign_of(x, "tile.matmul_acc"))
                         and m[1].args[0] is sl[0]), None)
            if step is None or len(step.value.args) < 4 or uses[sl[0]] != 2 or uses[step.var] != 1 \
                    or set(used_vars(sl[1].args[2])) & set(defined_vars(loop)):
                return None
            found.append((loop, s, step))
    if len(stores) != 1 or not found or uses[acc] != len(found) + 2:
        return None
    return found, stores[0]


def _carry(loop: ForStmt, sl: AssignStmt, step: AssignStmt, store: Call) -> list[Stmt]:
    """``loop`` carrying the window's accumulator, preceded by its fresh Acc tile and followed by its store."""
    sp, win = loop.span, sl.var
    t = win.var_type
    assert isinstance(t, TileType)
    init = Var(f"{win.name}_init", t, span=sp)
    create = make_call("tile.create", [ints(t.shape, sp)], {"dtype": t.dtype, "target_memory": MemorySpace.Acc},
                       span=sp)
    carry = IterArg(f"{win.name}_iter", t, span=sp)
    out = Var(win.name, t, span=sp)
    body = [substitute(x, {win: carry}) for x in flatten(loop.body) if x is not sl]
    if body and isinstance(body[-1], YieldStmt):
        body[-1] = YieldStmt((*body[-1].values, step.var), span=body[-1].span)
    else:
        body.append(YieldStmt((step.var,), span=sp))
    new = dataclasses.replace(loop, body=SeqStmts(tuple(body), span=loop.body.span),
                              iter_args=(*loop.iter_args, carry), inits=(*loop.inits, init),
                              return_vars=(*loop.return_vars, out))
    return [AssignStmt(init, create, span=sp), new, store_shifted(out, store, *elements(sl.value.args[2]), sp)]


def carry_acc_windows(func: Function) -> Function:
    """``func`` with each window accumulation of an Acc tile rewritten (see the module doc)."""
    for acc in _acc_creates(func):
        found = _windows(func, acc)
        if found is None:
            continue
        windows, (store, st) = found
        loops = {id(loop): (sl, step) for loop, sl, step in windows}

        def carry(s: Stmt, loops=loops, st=st) -> list[Stmt] | None:
            hit = loops.get(id(s))
            return _carry(s, *hit, st[1]) if hit is not None and isinstance(s, ForStmt) else None

        body = expand_stmts(func.body, carry)
        kept = [s for s in flatten(body) if s is not store and not (isinstance(s, AssignStmt) and s.var is acc)]
        body = substitute(seq(kept, span=func.body.span), {st[0]: st[1].args[2]})
        func = dataclasses.replace(func, body=body)
    return func


__all__ = ["carry_acc_windows"]
