"""``pl.MemRef(name, slots=N)[k]`` for the ptoas 0.1.1 codegen, which has no multi-slot buffer.

ptoas 0.1.1 plans every ``alloc_tile`` itself, and each tile definition with an author MemRef gets
its own ``alloc_tile``. So a slot index is resolved before codegen (by LowerPipelineLoops):

* a constant ``k``: nothing to do, the definition already owns a buffer;
* ``f(i) % M`` over the variable ``i`` of an enclosing ``pl.range`` loop with constant start and
  step: the loop is unrolled ``M`` ways (the copies keep the loop kind), so each copy's tile has
  its own buffer and its slot becomes a constant;
* anything else: the tile uses one buffer for every slot (same values, no overlap), with a warning.

Under ``memory_planner=PTOAS`` upstream lowers the declared buffer to one ptoas multi-buffer region
(``pto.alloc_multi_tile`` + ``pto.multi_tile_get``, not in ptoas 0.1.1) and refuses two slots of it taken
in one loop iteration (:func:`colive_slot_defs`); pypto keeps that rule, so a program it accepts under
PTOAS is one upstream accepts too.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from math import lcm

from pypto.errors import UserError
from pypto.ir.expr import BinaryExpr, BinOp, Expr, UnaryExpr, UnOp, Var, as_int
from pypto.ir.stmt import AssignStmt, ForStmt, Stmt, WhileStmt, seq
from pypto.ir.types import MemRef
from pypto.ir.visitor import substitute
from pypto.passes._util import base_name, iter_stmts, jumps, used_vars

_ARITH = {BinOp.Add: lambda a, b: a + b, BinOp.Sub: lambda a, b: a - b, BinOp.Mul: lambda a, b: a * b,
          BinOp.FloorMod: lambda a, b: a % b}


def slot_memref(var: Var) -> MemRef | None:
    """The MemRef of a tile defined with a not yet resolved slot index."""
    mr = getattr(var.var_type, "memref", None)
    return mr if mr is not None and mr.slot is not None and not isinstance(mr.slot, int) else None


def _slot_defs(body: Stmt | None) -> Iterator[tuple[AssignStmt, MemRef, Expr]]:
    """Each tile definition in ``body`` whose slot index is not resolved yet, its MemRef and that index."""
    for s in iter_stmts(body):
        mr = slot_memref(s.var) if isinstance(s, AssignStmt) else None
        if mr is not None and isinstance(mr.slot, Expr):
            yield s, mr, mr.slot


def _value(e: Expr, iv: Var, rep: int) -> int | None:
    """``e`` evaluated with ``iv = rep`` (integer +, -, *, %, constants), else None."""
    if e is iv:
        return rep
    n = as_int(e)
    if n is not None:
        return n
    if isinstance(e, UnaryExpr) and e.op is UnOp.Neg:
        v = _value(e.operand, iv, rep)
        return -v if v is not None else None
    if isinstance(e, BinaryExpr) and e.op in _ARITH:
        a, b = _value(e.lhs, iv, rep), _value(e.rhs, iv, rep)
        if a is None or b is None or (e.op is BinOp.FloorMod and b == 0):
            return None
        return _ARITH[e.op](a, b)
    return None


def _period(slot: Expr, iv: Var) -> int | None:
    """M when ``slot`` is ``f(iv) % M`` with ``f`` a polynomial in ``iv`` (so it repeats every M steps)."""
    if not (isinstance(slot, BinaryExpr) and slot.op is BinOp.FloorMod and set(used_vars(slot.lhs)) == {iv}):
        return None
    m = as_int(slot.rhs)
    if m is None or m < 2 or _value(slot, iv, 0) is None:
        return None
    return m


def unroll_period(loop: ForStmt) -> int | None:
    """How many ways ``loop`` must be unrolled to make the slot indices in its body constant."""
    start, step = as_int(loop.start), as_int(loop.step)
    if start is None or step is None or step <= 0:
        return None
    period = 1
    for _, _, slot in _slot_defs(loop.body):
        if loop.loop_var not in used_vars(slot):
            continue
        m = _period(slot, loop.loop_var)
        if m is None:
            return None
        period = lcm(period, m)
    return period if period > 1 else None


def resolve_slots(stmts: list[Stmt], iv: Var, rep: int) -> list[Stmt]:
    """Copies of tiles whose slot is ``f(iv) % M`` get the constant slot ``f(rep) % M``."""
    mapping: dict[Var, Expr] = {}
    for s, mr, slot in _slot_defs(seq(stmts)):
        k = _value(slot, iv, rep) if iv in used_vars(slot) else None
        if k is not None and not 0 <= k < mr.slots:
            raise UserError(f"the slot index of '{base_name(s.var.name)}' reaches {k} (at {base_name(iv.name)} = {rep}), out of "
                            f"range for its pl.MemRef of {mr.slots} slots", s.span,
                            hint=f"keep the index in 0..{mr.slots - 1} (e.g. i % {mr.slots}), or declare more slots")
        if k is not None:
            mapping[s.var] = _with_slot(s.var, mr, k)
    return [substitute(x, mapping) for x in stmts] if mapping else stmts


def _with_slot(var: Var, mr: MemRef, slot: int) -> Var:
    return Var(var.name, dataclasses.replace(var.var_type, memref=dataclasses.replace(mr, slot=slot)), span=var.span)


def share_unresolved(body: Stmt, warn) -> Stmt:
    """Tiles whose slot index stayed a run-time value use slot 0 (one buffer); ``warn(var)`` reports each."""
    mapping: dict[Var, Expr] = {}
    for s, mr, _ in _slot_defs(body):
        warn(s)
        mapping[s.var] = _with_slot(s.var, mr, 0)
    return substitute(body, mapping) if mapping else body


def colive_slot_defs(body: Stmt | None) -> tuple[AssignStmt, AssignStmt, Stmt, MemRef] | None:
    """Two tile definitions in one loop body taking slots of the same multi-slot MemRef, one of them by an
    index still computed at run time; that loop and the second one's MemRef.

    Upstream's rule under the PTOAS planner: ptoas guards only the first slot of a multi-buffer region an
    iteration takes, so a second one is overwritten by the next iteration while it is still read. Upstream
    refuses two constant slots in one loop body too; here they pass, since a loop this pass has unrolled
    holds exactly that (a program compiled again from its lowered form must not be refused).
    """
    for loop in iter_stmts(body):
        if not isinstance(loop, (ForStmt, WhileStmt)):
            continue
        seen: dict[object, list[AssignStmt]] = {}
        for s in jumps(loop.body, (AssignStmt,)):  # one iteration's: a nested loop's are iterations of its own
            mr = getattr(s.var.var_type, "memref", None)
            if mr is None or mr.slots < 2 or mr.slot is None:
                continue
            defs = seen.setdefault(mr.base, [])
            defs.append(s)
            if len(defs) > 1 and any(slot_memref(d.var) is not None for d in defs):
                return defs[0], s, loop, mr
    return None
