"""Peel the first iteration of a kernel loop that branches on it (``if k == start: acc = matmul(...)
else: acc = matmul_acc(acc, ...)``), a helper of PeelFirstIterations and AutoTileMatmulL0.

The accumulator of such a loop starts as an uninitialised ``pl.create_tensor`` and is only defined
by the first iteration's branch. On tiles, the two branches produce different buffers (a fresh Acc
tile and the accumulator itself) that ptoas 0.1.1 cannot merge, so the first iteration runs once
before the loop with the ``then`` branch, and the loop runs from ``start + step`` with the ``else``
branch, carrying the peeled iteration's results: the shape ``acc = matmul(); for: acc = matmul_acc``.

Upstream's ``acc = pl.tile.matmul_acc(acc, a, b, init_cond=(k == 0))`` is the same choice in one call (a
plain matmul when the condition holds): the peeled iteration gets ``matmul(a, b)``, the rest ``matmul_acc``.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from pypto.ir.enums import ForKind
from pypto.ir.expr import BinaryExpr, BinOp, Call, ConstInt, Expr, Var, as_int
from pypto.ir.function import Function
from pypto.ir.ops.registry import make_call
from pypto.ir.stmt import AssignStmt, ForStmt, IfStmt, Stmt, YieldStmt, flatten, initial_values, seq
from pypto.ir.visitor import substitute
from pypto.passes._rewrite import assign_of, assigns_of, clone, drop_defs, expand_stmts
from pypto.passes._util import calls_in, element_dtype, scalar_dtype, var_use_counts
from pypto.passes.simplify import _Fold


def _affine(e: Expr, loop: ForStmt, body: list[Stmt]) -> int | None:
    """``k`` when ``e`` is the loop variable (k = 1) or a body variable ``loop_var * k`` (k != 0)."""
    if e is loop.loop_var:
        return 1
    for s in body:
        if isinstance(s, AssignStmt) and s.var is e and isinstance(s.value, BinaryExpr) \
                and s.value.op is BinOp.Mul:
            a, b = s.value.lhs, s.value.rhs
            k = as_int(b) if a is loop.loop_var else as_int(a) if b is loop.loop_var else None
            return k if k else None
    return None


def _init_cond(s: Stmt) -> Expr | None:
    """The ``init_cond`` of ``acc = matmul_acc(acc, a, b, init_cond=c)``, else None."""
    v = assign_of(s, "tile.matmul_acc")
    return v[1].args[3] if v is not None and len(v[1].args) > 3 else None


def first_iteration_choice(s: Stmt, loop: ForStmt, body: list[Stmt]) -> bool:
    """``if x == c`` with an else and results, or a ``matmul_acc`` whose ``init_cond`` is ``x == c``, where
    ``x`` is the loop variable times ``k`` and ``c`` its value on the first iteration (only there): a
    choice on iteration one."""
    c = s.cond if isinstance(s, IfStmt) and s.else_body is not None and s.return_vars else _init_cond(s)
    if not isinstance(c, BinaryExpr) or c.op is not BinOp.Eq:
        return False
    start = as_int(loop.start)
    for x, v in ((c.lhs, c.rhs), (c.rhs, c.lhs)):
        k = _affine(x, loop, body)
        if k is not None and start is not None and as_int(v) == start * k:
            return True
    return False


def _on_cube(s: Stmt) -> bool:
    """Does the choice ``s`` compute on the cube (a matmul in a branch, or ``matmul_acc(..., init_cond=...)``)?"""
    return any(isinstance(c.op, str) and c.op.split(".")[-1].startswith("matmul") for c in calls_in(s))


def peelable(loop: Stmt, cube: bool | None = None) -> bool:
    """Does ``loop`` choose on its first iteration? ``cube``: only a choice that computes on the cube (True), or
    only one that does not (False)."""
    if not isinstance(loop, ForStmt) or loop.kind not in (ForKind.Sequential, ForKind.Pipeline) \
            or not loop.iter_args:
        return False
    start, stop, step = (as_int(e) for e in (loop.start, loop.stop, loop.step))
    if start is None or stop is None or step is None or step <= 0 or stop <= start:
        return False
    body = flatten(loop.body)
    choices = [s for s in body if first_iteration_choice(s, loop, body)]
    return bool(choices) and (cube is None or any(_on_cube(s) for s in choices) == cube)


def _take_branch(body: list[Stmt], choices: set[int], then: bool, renames: dict[Var, Expr]) -> list[Stmt]:
    """``body`` with its statements at ``choices`` (first-iteration ifs) replaced by one branch; the ifs'
    results read the branch's yields."""
    def renamed(x: Any) -> Any:
        return substitute(x, renames) if renames else x

    out: list[Stmt] = []
    for i, s in enumerate(body):
        if i not in choices:
            out.append(renamed(s))
        elif isinstance(s, AssignStmt):
            out.append(_chosen_matmul(renamed(s), then))
        else:
            assert isinstance(s, IfStmt)
            branch = flatten(s.then_body if then else s.else_body)
            yielded = branch.pop() if branch and isinstance(branch[-1], YieldStmt) else None
            out.extend(renamed(b) for b in branch)
            for rv, v in zip(s.return_vars, yielded.values if yielded is not None else (), strict=False):
                renames[rv] = renamed(v)
    return out


def _chosen_matmul(s: AssignStmt, first: bool) -> AssignStmt:
    """``matmul_acc(acc, a, b, init_cond=c)`` on the iteration where ``c`` holds (a plain matmul) or not."""
    c = s.value
    assert isinstance(c, Call)
    if not first:
        return dataclasses.replace(s, value=dataclasses.replace(c, args=c.args[:3]))
    kwargs = {**c.kwargs, "out_dtype": element_dtype(c)}
    return dataclasses.replace(s, value=make_call("tile.matmul", list(c.args[1:3]), kwargs, span=c.span))


def peel(loop: ForStmt, renames: dict[Var, Expr]) -> list[Stmt]:
    """The peeled first iteration, then the loop over the rest. When no iteration is left, ``renames`` gains
    the loop's results (uses of them read the peeled values)."""
    start, stop, step = as_int(loop.start), as_int(loop.stop), as_int(loop.step)
    assert start is not None and stop is not None and step is not None
    first = ConstInt(start, scalar_dtype(loop.loop_var))
    body = flatten(loop.body)
    choices = {i for i, s in enumerate(body) if first_iteration_choice(s, loop, body)}
    # the loop variable is a constant here: fold ``0 * 64`` as the parser would read it back
    cloned = [_Fold().visit(x) for x in clone(body, {loop.loop_var: first, **initial_values(loop)})]
    peeled = _take_branch(cloned, choices, True, {})
    yielded = peeled.pop() if peeled and isinstance(peeled[-1], YieldStmt) else None
    carried = yielded.values if yielded is not None else loop.inits
    if start + step >= stop:
        renames.update(zip(loop.return_vars, carried, strict=True))
        return peeled
    rest = _take_branch(body, choices, False, {})
    rest_loop = dataclasses.replace(loop, start=ConstInt(start + step, first.dtype), inits=tuple(carried),
                                    body=seq(rest, span=loop.body.span))
    return [*peeled, rest_loop]


def drop_dead_creates(body: Stmt) -> Stmt:
    """``body`` without the ``tile.create`` placeholders a peeled accumulator started from (read nowhere now)."""
    uses = var_use_counts(body)
    dead = [v for v in assigns_of(body, "tile.create") if uses[v] <= 1]
    return drop_defs(body, dead) if dead else body


def peel_first_iterations(func: Function, cube: bool | None = None) -> Function:
    """Every peelable loop of ``func`` (``cube``: see :func:`peelable`) split into its first iteration and the
    rest."""
    renames: dict[Var, Expr] = {}

    def one(s: Stmt) -> list[Stmt] | None:
        return peel(s, renames) if isinstance(s, ForStmt) and peelable(s, cube) else None

    body = expand_stmts(func.body, one)
    if body is func.body:
        return func
    if renames:
        body = substitute(body, renames)
    return dataclasses.replace(func, body=drop_dead_creates(body))

