"""Strip-mine a kernel loop whose index is taken modulo (or floor-divided by) a constant.

ptoas 0.1.1 lowers only integer ``+``, ``*`` and comparisons on indices (``arith.remsi`` and
``arith.floordivsi`` fail to legalize), so ``i % c`` and ``i // c`` on a loop index cannot reach a
kernel. A loop ``for i in range(s, e, st)`` with constant bounds, ``s`` and ``e - s`` multiples of ``c``
and ``c`` a multiple of ``st``, becomes two nested loops ``for q in range((e - s) // c): for r in
range(c // st)`` with ``i = s + q * c + r * st``; then ``i % c`` is ``r * st`` and ``i // c`` is
``s // c + q``. When ``s`` or ``e`` is not a multiple of ``c`` (``st`` must still divide ``s``), the
iterations before the first and after the last multiple are peeled into loops of their own, where
``i // c`` is a constant ``q0`` and ``i % c`` is ``i + (-q0 * c)``. A ``pl.pipeline`` loop keeps its stages
on the inner loop (and on the peels). Each inner iteration is one iteration of the original loop, so
``continue`` keeps its meaning; a loop that ``break``s is left alone (the break would only leave the
inner loop).
A helper of UnrollLoops (it runs before SSA, on kernels and on the ``pl.at`` regions of orchestrations).
"""

from __future__ import annotations

import dataclasses

from pypto.ir.dtypes import DataType
from pypto.ir.enums import ForKind
from pypto.ir.expr import BinaryExpr, BinOp, ConstInt, Expr, Var, as_int
from pypto.ir.function import Function
from pypto.ir.stmt import BreakStmt, ForStmt, Stmt
from pypto.ir.types import ScalarType
from pypto.ir.visitor import IRMutator, IRVisitor, substitute
from pypto.passes._div_affine import split_affine_divisions
from pypto.passes._rewrite import expand_stmts, map_kernel_bodies
from pypto.passes._util import jumps, scalar_dtype

_OPS = (BinOp.FloorMod, BinOp.FloorDiv)


def _divisors(loop: ForStmt) -> set[int]:
    """The constants ``c`` of ``loop_var % c`` / ``loop_var // c`` in the loop's body."""
    found: set[int] = set()

    class _Scan(IRVisitor):
        def visit_BinaryExpr(self, e: BinaryExpr) -> None:  # noqa: N802
            c = as_int(e.rhs)
            if e.op in _OPS and e.lhs is loop.loop_var and c is not None and c > 0:
                found.add(c)
            self.generic_visit(e)

    _Scan().visit(loop.body)
    return found


def _add(a: Expr, b: Expr, dt: DataType) -> Expr:
    if as_int(a) == 0:
        return b
    return a if as_int(b) == 0 else BinaryExpr(BinOp.Add, a, b, dt)


def _mul(a: Expr, k: int, dt: DataType) -> Expr:
    return a if k == 1 else BinaryExpr(BinOp.Mul, a, ConstInt(k, dt), dt)


class _Replace(IRMutator):
    """``loop_var % c`` -> ``mod``, ``loop_var // c`` -> ``div``."""

    def __init__(self, var: Var, c: int, mod: Expr, div: Expr) -> None:
        self.var, self.c, self.mod, self.div = var, c, mod, div

    def visit_BinaryExpr(self, e: BinaryExpr) -> Expr:  # noqa: N802
        if e.op in _OPS and e.lhs is self.var and as_int(e.rhs) == self.c:
            return self.mod if e.op is BinOp.FloorMod else self.div
        return self.generic_visit(e)


def _peel(loop: ForStmt, lo: int, hi: int, c: int, tag: str) -> ForStmt:
    """``for i in range(lo, hi, st)`` inside one block of ``c`` (``lo // c == (hi - 1) // c``): ``i // c`` is
    the constant ``q0`` and ``i % c`` is ``i - q0 * c`` (an ``addi`` of a constant)."""
    dt = scalar_dtype(loop.loop_var)
    i = Var(f"{loop.loop_var.name}_{tag}", loop.loop_var.var_type, span=loop.loop_var.span)
    q0 = lo // c
    mod = _add(i, ConstInt(-q0 * c, dt), dt)
    body = substitute(_Replace(loop.loop_var, c, mod, ConstInt(q0, dt)).visit(loop.body), {loop.loop_var: i})
    return dataclasses.replace(loop, loop_var=i, start=ConstInt(lo, dt), stop=ConstInt(hi, dt), body=body)


def _mine(loop: ForStmt, lo: int, hi: int, c: int, step: int) -> ForStmt:
    """``range(lo, hi, step)`` with ``lo`` and ``hi`` multiples of ``c``: ``for q: for r:``. A pipeline loop's
    stages go to the inner loop; the outer one is sequential."""
    dt = scalar_dtype(loop.loop_var)
    name = loop.loop_var.name
    q = Var(f"{name}_q", ScalarType(dt), span=loop.loop_var.span)
    r = Var(f"{name}_r", ScalarType(dt), span=loop.loop_var.span)
    index = _add(_add(ConstInt(lo, dt), _mul(q, c, dt), dt), _mul(r, step, dt), dt)
    body = _Replace(loop.loop_var, c, _mul(r, step, dt), _add(ConstInt(lo // c, dt), q, dt)).visit(loop.body)
    body = substitute(body, {loop.loop_var: index})
    inner = dataclasses.replace(loop, loop_var=r, start=ConstInt(0, dt), stop=ConstInt(c // step, dt),
                                step=ConstInt(1, dt), body=body)
    return dataclasses.replace(loop, loop_var=q, start=ConstInt(0, dt), stop=ConstInt((hi - lo) // c, dt),
                               step=ConstInt(1, dt), body=inner, kind=ForKind.Sequential,
                               attrs={k: v for k, v in loop.attrs.items() if k != "pipeline_stages"})


def strip_mine(loop: ForStmt) -> list[Stmt] | None:
    """The loops replacing ``loop``, or None when it has no such use or cannot be split.

    Iterations before the first multiple of ``c`` and after the last one are peeled into loops of
    their own, in which ``i // c`` is a constant."""
    divs = _divisors(loop)
    start, stop, step = as_int(loop.start), as_int(loop.stop), as_int(loop.step)
    if len(divs) != 1 or start is None or stop is None or step is None or step <= 0 or loop.iter_args \
            or loop.kind not in (ForKind.Sequential, ForKind.Pipeline):
        return None
    (c,) = divs
    if start < 0 or c % step or start % step or stop <= start or jumps(loop.body, (BreakStmt,)):
        return None
    stop = start + -(-(stop - start) // step) * step  # the first index past the last iteration
    lo, hi = min(-(-start // c) * c, stop), max(stop // c * c, start)
    out: list[Stmt] = []
    if lo > start:
        out.append(_peel(loop, start, lo, c, "head"))
    if hi > lo:
        out.append(_mine(loop, lo, hi, c, step))
    if stop > max(hi, lo):
        out.append(_peel(loop, max(hi, lo), stop, c, "tail"))
    return out


def strip_mine_kernel_loops(func: Function) -> Function:
    """Every such loop of a kernel, or of a ``pl.at`` region of an orchestration, strip-mined."""
    def mine(s: Stmt) -> list[Stmt] | None:
        return strip_mine(s) if isinstance(s, ForStmt) else None

    return map_kernel_bodies(func, lambda body: expand_stmts(split_affine_divisions(body), mine))
