"""LowerCompositeOps: a tile assembled block by block across a kernel loop becomes one store per block.

``acc = pl.tile.assemble(acc, block, [r, c])`` carried by a ``pl.range`` loop and stored once after it
(``out = pl.store(acc, [r0, c0], out)``) has no lowering in ptoas 0.1.1 (no ``tinsert``; pypto keeps an
assembled tile as blocks written out when it is stored, and blocks of different iterations cannot be
kept). Its only observable effect is that store, so the loop carries the tensor instead: each iteration
stores its block at ``[r0 + r, c0 + c]``. An initial value other than ``tile.create`` (whose bytes are
undefined) is stored first. Any other use of the carried tile leaves the loop alone (codegen reports it).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from pypto.ir.expr import Expr, IterArg, MakeTuple, Var
from pypto.ir.function import Function, Program
from pypto.ir.ops.registry import make_call
from pypto.ir.stmt import AssignStmt, ForStmt, Stmt, YieldStmt, flatten, seq
from pypto.ir.types import TensorType, TileType
from pypto.passes._index import iadd
from pypto.passes._rewrite import drop_defs, emit, match
from pypto.passes._util import iter_stmts, map_blocks, refs, substitute_typed, var_use_counts
from pypto.passes.base import Pass


@dataclass(frozen=True, slots=True)
class _Carry:
    index: int          # of the loop's iter arg
    assemble: AssignStmt
    store: AssignStmt   # ``t = tile.store(rv, offs, T)`` after the loop


def _uses(node: object, v: Var) -> int:
    return sum(1 for x in refs(node) if x is v)


def _carry(loop: ForStmt, i: int, rest: list[Stmt]) -> _Carry | None:
    ia, rv = loop.iter_args[i], loop.return_vars[i]
    body = flatten(loop.body)
    if not isinstance(ia.var_type, TileType) or not body or not isinstance(body[-1], YieldStmt):
        return None
    out = body[-1].values[i]
    asm = next((s for s in body if isinstance(s, AssignStmt) and s.var is out), None)
    call = match(asm, "tile.assemble") if asm is not None else None
    if call is None or call.args[0] is not ia or _uses(loop.body, ia) != 1 or _uses(loop.body, out) != 2:
        return None
    if not isinstance(call.args[2], MakeTuple) or len(call.args[2].elements) != 2:
        return None
    store = next((s for s in rest if _uses(s, rv)), None)
    st = match(store, "tile.store") if isinstance(store, AssignStmt) else None
    if st is None or st.args[0] is not rv or sum(_uses(s, rv) for s in rest) != 1:
        return None
    if not isinstance(st.args[1], MakeTuple) or len(st.args[1].elements) != 2:
        return None
    assert isinstance(store, AssignStmt) and isinstance(asm, AssignStmt)
    return _Carry(i, asm, store)


def _rewrite(loop: ForStmt, c: _Carry, creates: set[Var]) -> tuple[list[Stmt], ForStmt, Var]:
    """The statements before the loop, the loop carrying the tensor, and the loop's tensor result."""
    sp, st, asm = loop.span, match(c.store), match(c.assemble)
    assert st is not None and asm is not None
    offs0, tensor = st.args[1], st.args[2]
    init: Expr = loop.inits[c.index]
    pre: list[Stmt] = []
    if init not in creates:  # a tile.create has no defined bytes to store
        first = make_call("tile.store", [init, offs0, tensor], dict(st.kwargs), span=sp)
        tensor = emit(pre, c.store.var.name, first, sp)
    ttype = c.store.var.var_type
    assert isinstance(ttype, TensorType)
    tia = IterArg(f"{c.store.var.name}_iter", ttype, span=sp)
    row0, col0 = st.args[1].elements  # type: ignore[union-attr]
    r, col = asm.args[2].elements  # type: ignore[union-attr]
    block = make_call("tile.store", [asm.args[1], MakeTuple((iadd(row0, r, sp), iadd(col0, col, sp)), span=sp),
                                     tia], dict(st.kwargs), span=sp)
    tnew = Var(c.store.var.name, block.result_type, span=sp)
    body = flatten(loop.body)
    yields = list(body[-1].values)  # type: ignore[attr-defined]
    yields[c.index] = tnew
    body = [AssignStmt(tnew, block, span=sp) if s is c.assemble else s for s in body[:-1]]
    body.append(YieldStmt(tuple(yields), span=body[-1].span if body else sp))
    keep = [j for j in range(len(loop.iter_args)) if j != c.index]
    trv = Var(c.store.var.name, ttype, span=sp)
    new = replace(loop, body=seq(body, sp),
                  iter_args=(*(loop.iter_args[j] for j in keep), tia),
                  inits=(*(loop.inits[j] for j in keep), tensor),
                  return_vars=(*(loop.return_vars[j] for j in keep), trv))
    return pre, new, trv


@dataclass(frozen=True)
class LowerCompositeOps(Pass):
    """Rewrite loop-carried ``tile.assemble`` that is stored once after the loop (see the module doc)."""

    name = "LowerCompositeOps"

    def run_function(self, func: Function, program: Program) -> Function:
        if not func.is_incore or not any(match(s, "tile.assemble") for s in iter_stmts(func.body)):
            return func
        creates = {s.var for s in iter_stmts(func.body) if isinstance(s, AssignStmt) and match(s, "tile.create")}
        renamed: dict[Var, Expr] = {}

        def block(stmts: list[Stmt]) -> list[Stmt]:
            out = list(stmts)
            for k, s in enumerate(stmts):
                if not isinstance(s, ForStmt):
                    continue
                for i in range(len(s.iter_args)):
                    c = _carry(s, i, stmts[k + 1:])
                    if c is None:
                        continue
                    pre, new, trv = _rewrite(s, c, creates)
                    j = out.index(s)
                    out[j:j + 1] = [*pre, new]
                    out.remove(c.store)
                    renamed[c.store.var] = trv
                    break
            return out

        new = func.with_(body=map_blocks(func.body, block))
        if new is func:
            return func
        body = substitute_typed(new.body, renamed) if renamed else new.body
        uses = var_use_counts(body)
        return new.with_(body=drop_defs(body, {v for v in creates if uses[v] <= 1}))  # creates that fed a loop


__all__ = ["LowerCompositeOps"]
