"""UnrollLoops: fully expand ``pl.unroll`` (ForKind.Unroll) loops with constant bounds."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from pypto.errors import UserError
from pypto.ir.census import census
from pypto.ir.enums import ForKind
from pypto.ir.expr import BinOp, ConstInt, Expr, Var, as_int
from pypto.ir.function import Function, Program
from pypto.ir.properties import IRProperty
from pypto.ir.stmt import AssignStmt, ForStmt, Stmt, YieldStmt, flatten
from pypto.ir.visitor import substitute
from pypto.passes._rewrite import clone, expand_stmts
from pypto.passes._strip_mine import strip_mine_kernel_loops
from pypto.passes._util import defined_vars, iter_stmts, scalar_dtype, used_vars
from pypto.passes._vector_loops import vectorize_element_loops
from pypto.passes.base import Pass


def unrolled(loop: ForStmt, indices: Iterable[Expr]) -> list[Stmt]:
    """``loop``'s body once per loop index, each iteration's yields carried into the next, then the
    loop's results bound to the last values.

    Before ConvertToSSA a name the body reassigns (``c = c + n``) is carried by name: the body's uses
    of the Var bound before the loop read, from the second copy on, the previous copy's last binding;
    the last copy defines the body's own Vars, which the statements after the loop may use.
    """
    carried = loop.inits
    out: list[Stmt] = []
    body = flatten(loop.body)
    defined = {v for s in body for v in defined_vars(s)}
    names = {v.name for v in defined}
    outer = [v for v in used_vars(body) if v not in defined and v.name in names]
    latest: dict[str, Var] = {}
    idxs = list(indices)
    for n, idx in enumerate(idxs):
        threaded = {v: latest[v.name] for v in outer if v.name in latest}
        mapping = {loop.loop_var: idx, **dict(zip(loop.iter_args, carried, strict=True)), **threaded}
        # the last copy keeps the body's own Vars: a use after the loop names them
        stmts = clone(body, mapping) if n < len(idxs) - 1 else [substitute(s, mapping) for s in body]
        latest.update((v.name, v) for s in stmts for v in defined_vars(s))
        if stmts and isinstance(stmts[-1], YieldStmt):
            carried = list(stmts.pop().values)
        out.extend(stmts)
    out.extend(AssignStmt(rv, v, span=loop.span) for rv, v in zip(loop.return_vars, carried, strict=True))
    return out


def _unroll(loop: ForStmt) -> list[Stmt]:
    start, stop, step = as_int(loop.start), as_int(loop.stop), as_int(loop.step)
    if start is None or stop is None or step is None or step == 0:
        raise UserError("pl.unroll needs constant start/stop/step", loop.span,
                        hint="use pl.range for loops with run-time bounds")
    return unrolled(loop, (ConstInt(i, scalar_dtype(loop.loop_var)) for i in range(start, stop, step)))


# A loop becomes row ops only when it reads an element (pl.read) of a tensor (see _vector_loops); strip
# mining and the affine split (see _div_affine) rewrite only // and % expressions.
_VECTORIZE_NEEDS = "tensor.read"
_STRIP_MINE_NEEDS = frozenset({BinOp.FloorDiv, BinOp.FloorMod})


@dataclass(frozen=True)
class UnrollLoops(Pass):
    """Each Unroll loop becomes its body repeated with the loop variable bound to constants; a kernel
    loop whose index is taken modulo a constant is strip-mined first (:mod:`pypto.passes._strip_mine`), and a
    loop of element reads of a computed tile and element writes becomes row tile ops
    (:mod:`pypto.passes._vector_loops`)."""

    name = "UnrollLoops"
    produces = frozenset({IRProperty.UnrollResolved})

    def run_function(self, func: Function, program: Program) -> Function:
        # each helper only where the function has what it rewrites (see pypto.ir.census)
        if _VECTORIZE_NEEDS in census(func).ops and ForStmt in census(func).stmts:
            func = vectorize_element_loops(func)  # t[0, i] of a computed tile t, one element per iteration
        if not census(func).binops.isdisjoint(_STRIP_MINE_NEEDS):
            func = strip_mine_kernel_loops(func)  # i % c, i // c on a kernel loop index (see _strip_mine)
        if ForStmt not in census(func).stmts or \
                not any(isinstance(s, ForStmt) and s.kind is ForKind.Unroll for s in iter_stmts(func.body)):
            return func
        return func.with_(body=expand_stmts(
            func.body, lambda s: _unroll(s) if isinstance(s, ForStmt) and s.kind is ForKind.Unroll else None))
