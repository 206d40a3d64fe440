"""A kernel loop adding a matmul into a carried vector tile, ``acc = add(acc, matmul(a_k, b_k))``, carries the
matmul's accumulator instead: a helper of ExpandMixedKernel (:func:`pypto.passes._mixed_split.splittable`).

Such a loop mixes cube and vector work in every iteration, which ptoas 0.1.1 cannot split (no tpush/tpop
between the cores). Summed over the loop, it is a K-chained matmul: the cube accumulates in FP32 in L0C,
in the same order. So the loop carries ``m = matmul_acc(m, a_k, b_k, init_cond=(k == start))`` (peeled at
once, as PeelFirstIterations does), and after it ``acc = m`` when ``acc`` started as a zero fill, or
``acc = add(init, m)`` otherwise. The loop is then cube-only and what follows an ordinary mixed kernel.

Taken only when the carried tile is read by that add alone, the add's other operand is a matmul of this
iteration read nowhere else, both FP32 of one shape, the loop is sequential with constant bounds, and the
rewritten loop no longer mixes cores; any other loop keeps the located refusal.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable

from pypto.ir.dtypes import DataType
from pypto.ir.enums import ForKind, MemorySpace
from pypto.ir.expr import BinaryExpr, BinOp, Call, ConstInt, Expr, IterArg, Var, as_int
from pypto.ir.ops.registry import make_call
from pypto.ir.stmt import AssignStmt, ForStmt, Stmt, YieldStmt, flatten, seq
from pypto.ir.types import TileType
from pypto.ir.verifier import refs
from pypto.passes._peel import peel
from pypto.passes._rewrite import assign_of, ints, match
from pypto.passes._util import element_dtype, scalar_dtype


def _uses(node: object) -> Counter[Var]:
    return Counter(refs(node))


def _match(loop: ForStmt, i: int, body: list[Stmt], uses: Counter[Var]) -> tuple[AssignStmt, AssignStmt] | None:
    """(the matmul, the add) of ``acc = add(acc, matmul(a, b))`` carried as ``loop``'s iter arg ``i``."""
    carry, yielded = loop.iter_args[i], body[-1]
    assert isinstance(yielded, YieldStmt)
    add = next((s for s in body if isinstance(s, AssignStmt) and (a := match(s, "tile.add")) and carry in a.args[:2]),
               None)
    call = match(add, "tile.add")
    if add is None or call is None or uses[carry] != 1 or yielded.values[i] is not add.var or uses[add.var] != 2:
        return None
    other = [x for x in call.args[:2] if x is not carry]
    mm = next((s for s in body if other and isinstance(s, AssignStmt) and s.var is other[0]), None)
    prod = match(mm, "tile.matmul")
    if mm is None or prod is None or uses[mm.var] != 2 or prod.kwargs.get("c_matrix_nz"):
        return None
    a, m = add.var.var_type, mm.var.var_type
    if not (isinstance(a, TileType) and isinstance(m, TileType) and a.shape == m.shape
            and element_dtype(add.var) is DataType.FP32 and element_dtype(mm.var) is DataType.FP32):
        return None
    return mm, add


def _zero_fill(init: Expr, defs: dict[Var, AssignStmt]) -> bool:
    fill = assign_of(defs.get(init), "tile.full") if isinstance(init, Var) else None
    return fill is not None and len(fill[1].args) > 1 and getattr(fill[1].args[1], "value", None) == 0


def _carried_loop(loop: ForStmt, found: dict[int, tuple[AssignStmt, AssignStmt]]) -> tuple[ForStmt, list[Stmt]]:
    """``loop`` carrying each found matmul's accumulator in place of its vector tile, and the Acc placeholders."""
    sp, lv = loop.span, loop.loop_var
    start = as_int(loop.start)
    assert start is not None
    cond = BinaryExpr(BinOp.Eq, lv, ConstInt(start, scalar_dtype(lv), span=sp), DataType.BOOL, span=sp)
    drop = {id(add) for _, add in found.values()}
    swap: dict[int, AssignStmt] = {}
    creates: list[Stmt] = []
    iters, inits, rets = list(loop.iter_args), list(loop.inits), list(loop.return_vars)
    last = flatten(loop.body)[-1]
    assert isinstance(last, YieldStmt)
    yields = list(last.values)
    for i, (mm, _) in found.items():
        t = mm.var.var_type
        assert isinstance(t, TileType)
        init = Var(f"{mm.var.name}_init", t, span=sp)
        creates.append(AssignStmt(init, make_call("tile.create", [ints(t.shape, sp)],
                                                  {"dtype": t.dtype, "target_memory": MemorySpace.Acc}, span=sp),
                                  span=sp))
        iters[i], inits[i] = IterArg(f"{mm.var.name}_iter", t, span=sp), init
        rets[i], yields[i] = Var(f"{mm.var.name}_sum", t, span=sp), mm.var
        c = mm.value
        assert isinstance(c, Call)
        trans = {k: v for k, v in c.kwargs.items() if k in ("a_trans", "b_trans")}
        swap[id(mm)] = dataclasses.replace(mm, value=make_call("tile.matmul_acc", [iters[i], *c.args[:2], cond], trans,
                                                               span=c.span))
    body = [swap.get(id(s), s) for s in flatten(loop.body)[:-1] if id(s) not in drop]
    body.append(YieldStmt(tuple(yields), span=flatten(loop.body)[-1].span))
    new = dataclasses.replace(loop, body=seq(body, span=loop.body.span), iter_args=tuple(iters), inits=tuple(inits),
                              return_vars=tuple(rets))
    return new, creates


def carry_matmuls(loop: Stmt, defs: dict[Var, AssignStmt],
                  mixes: Callable[[Stmt], bool]) -> tuple[list[Stmt], dict[Var, Expr]] | None:
    """The statements replacing ``loop`` and the renames of its results (see the module doc), or None;
    ``defs``: the assignments before it, ``mixes``: does a statement mix cube and vector work."""
    if not isinstance(loop, ForStmt) or loop.kind is not ForKind.Sequential or not loop.iter_args:
        return None
    start, stop, step = (as_int(e) for e in (loop.start, loop.stop, loop.step))
    body = flatten(loop.body)
    if start is None or stop is None or not step or step <= 0 or stop <= start \
            or not body or not isinstance(body[-1], YieldStmt):
        return None
    uses = _uses(loop.body)
    found = {i: m for i in range(len(loop.iter_args)) if (m := _match(loop, i, body, uses)) is not None}
    if not found:
        return None
    new, creates = _carried_loop(loop, found)
    if mixes(new):
        return None
    renames: dict[Var, Expr] = {}
    out = [*creates, *peel(new, renames)]
    sums = {loop.return_vars[i]: renames.pop(new.return_vars[i], new.return_vars[i]) for i in found}
    for i in found:
        old, m = loop.return_vars[i], sums[loop.return_vars[i]]
        if _zero_fill(loop.inits[i], defs):
            renames[old] = m
        else:
            out.append(AssignStmt(old, make_call("tile.add", [loop.inits[i], m], span=loop.span), span=loop.span))
    return out, renames
