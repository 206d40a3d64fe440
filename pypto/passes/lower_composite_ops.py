"""LowerCompositeOps: a tile assembled block by block across a kernel loop becomes one store per block.

``acc = pl.tile.assemble(acc, block, [r, c])`` carried by a ``pl.range`` loop (or by nested loops, each
carrying the tile into the next) and stored once after it (``out = pl.store(acc, [r0, c0], out)``) has no
lowering in ptoas 0.1.1 (no ``tinsert``; pypto keeps an assembled tile as blocks written out when it is
stored, and blocks of different iterations cannot be kept). Its only observable effect is that store, so
the loops carry the tensor instead: each iteration stores its block at ``[r0 + r, c0 + c]``. An initial
value other than ``tile.create`` (whose bytes are undefined) is stored first. Any other use of the carried tile leaves the loop alone (codegen reports it).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from pypto.ir.expr import Expr, IterArg, MakeTuple, Var
from pypto.ir.function import Function, Program
from pypto.ir.ops.registry import make_call
from pypto.ir.stmt import AssignStmt, ForStmt, Stmt, YieldStmt, flatten, seq
from pypto.ir.types import TensorType, TileType
from pypto.passes._index import iadd
from pypto.passes._rewrite import assigns_of, drop_unread, emit, match
from pypto.passes._util import iter_stmts, map_blocks, refs, substitute_typed
from pypto.passes.base import Pass


def _uses(node: object, v: Var) -> int:
    return sum(1 for x in refs(node) if x is v)


def _carrier(loop: ForStmt, i: int) -> Stmt | None:
    """The statement of ``loop``'s body that takes iter arg ``i`` to its yield: a ``tile.assemble`` onto it
    at a 2-D offset, or an inner loop that carries it the same way (nested loops). None otherwise."""
    ia = loop.iter_args[i]
    body = flatten(loop.body)
    if not isinstance(ia.var_type, TileType) or not body or not isinstance(body[-1], YieldStmt):
        return None
    out = body[-1].values[i]
    if _uses(loop.body, ia) != 1 or _uses(loop.body, out) != 2:
        return None
    for s in body:
        if isinstance(s, AssignStmt) and s.var is out:
            call = match(s, "tile.assemble")
            ok = call is not None and call.args[0] is ia and isinstance(call.args[2], MakeTuple) \
                and len(call.args[2].elements) == 2
            return s if ok else None
        if isinstance(s, ForStmt) and out in s.return_vars:
            j = s.return_vars.index(out)
            return s if s.inits[j] is ia and _carrier(s, j) is not None else None
    return None


def _carry(loop: ForStmt, i: int, rest: list[Stmt]) -> AssignStmt | None:
    """The one store ``t = tile.store(rv, [r0, c0], T)`` in ``rest`` of the result of iter arg ``i``, when
    that arg is a tile assembled block by block (see :func:`_carrier`)."""
    if _carrier(loop, i) is None:
        return None
    rv = loop.return_vars[i]
    store = next((s for s in rest if _uses(s, rv)), None)
    st = match(store, "tile.store") if isinstance(store, AssignStmt) else None
    if st is None or st.args[0] is not rv or sum(_uses(s, rv) for s in rest) != 1:
        return None
    ok = isinstance(st.args[1], MakeTuple) and len(st.args[1].elements) == 2
    return store if ok and isinstance(store, AssignStmt) else None


def _carried_store(loop: ForStmt, i: int, init: Expr, store: AssignStmt) -> tuple[ForStmt, Var]:
    """``loop`` carrying the tensor of ``store`` (entering as ``init``) in place of tile iter arg ``i``: each
    block assembled is stored at the store's offset plus its own. The new loop and its tensor result."""
    sp, st = loop.span, match(store)
    assert st is not None
    carrier = _carrier(loop, i)
    ttype, name = store.var.var_type, store.var.name
    assert isinstance(ttype, TensorType) and carrier is not None
    tia = IterArg(f"{name}_iter", ttype, span=sp)
    body = flatten(loop.body)
    yields = list(body[-1].values)  # type: ignore[attr-defined]
    if isinstance(carrier, ForStmt):
        inner, tnew = _carried_store(carrier, carrier.return_vars.index(yields[i]), tia, store)
        replacement: Stmt = inner
    else:
        asm = match(carrier)
        assert asm is not None
        row0, col0 = st.args[1].elements  # type: ignore[union-attr]
        r, col = asm.args[2].elements  # type: ignore[union-attr]
        block = make_call("tile.store", [asm.args[1], MakeTuple((iadd(row0, r, sp), iadd(col0, col, sp)), span=sp),
                                         tia], dict(st.kwargs), span=sp)
        tnew = Var(name, block.result_type, span=sp)
        replacement = AssignStmt(tnew, block, span=sp)
    keep = [j for j in range(len(loop.iter_args)) if j != i]
    stmts = [replacement if s is carrier else s for s in body[:-1]]
    stmts.append(YieldStmt((*(yields[j] for j in keep), tnew), span=body[-1].span))
    trv = Var(name, ttype, span=sp)
    return replace(loop, body=seq(stmts, sp), iter_args=(*(loop.iter_args[j] for j in keep), tia),
                   inits=(*(loop.inits[j] for j in keep), init),
                   return_vars=(*(loop.return_vars[j] for j in keep), trv)), trv


def _rewrite(loop: ForStmt, i: int, store: AssignStmt, creates: set[Var]) -> tuple[list[Stmt], ForStmt, Var]:
    """The statements before the loop, the loop carrying the tensor, and the loop's tensor result."""
    st = match(store)
    assert st is not None
    tensor, init = st.args[2], loop.inits[i]
    pre: list[Stmt] = []
    if init not in creates:  # a tile.create has no defined bytes to store
        first = make_call("tile.store", [init, st.args[1], tensor], dict(st.kwargs), span=loop.span)
        tensor = emit(pre, store.var.name, first, loop.span)
    new, trv = _carried_store(loop, i, tensor, store)
    return pre, new, trv


@dataclass(frozen=True)
class LowerCompositeOps(Pass):
    """Rewrite loop-carried ``tile.assemble`` that is stored once after the loop (see the module doc)."""

    name = "LowerCompositeOps"

    def run_function(self, func: Function, program: Program) -> Function:
        if not func.is_incore or not any(match(s, "tile.assemble") for s in iter_stmts(func.body)):
            return func
        creates = set(assigns_of(func.body, "tile.create"))
        renamed: dict[Var, Expr] = {}

        def block(stmts: list[Stmt]) -> list[Stmt]:
            out = list(stmts)
            for k, s in enumerate(stmts):
                if not isinstance(s, ForStmt):
                    continue
                for i in range(len(s.iter_args)):
                    store = _carry(s, i, stmts[k + 1:])
                    if store is None:
                        continue
                    pre, new, trv = _rewrite(s, i, store, creates)
                    j = out.index(s)
                    out[j:j + 1] = [*pre, new]
                    out.remove(store)
                    renamed[store.var] = trv
                    break
            return out

        new = func.with_(body=map_blocks(func.body, block))
        if new is func:
            return func
        body = substitute_typed(new.body, renamed) if renamed else new.body
        return new.with_(body=drop_unread(body, creates))  # creates that fed a loop


__all__ = ["LowerCompositeOps"]
