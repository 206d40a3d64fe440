"""UnrollLoops: fully expand ``pl.unroll`` (ForKind.Unroll) loops with constant bounds."""

from __future__ import annotations

from dataclasses import dataclass

from pypto.errors import UserError
from pypto.ir.dtypes import DataType
from pypto.ir.enums import ForKind
from pypto.ir.expr import ConstInt, Expr, IterArg, Var, as_int
from pypto.ir.function import Function, Program
from pypto.ir.properties import IRProperty
from pypto.ir.stmt import AssignStmt, ForStmt, Stmt, YieldStmt, flatten
from pypto.ir.visitor import substitute
from pypto.passes._util import defined_vars, iter_stmts, map_blocks
from pypto.passes.base import Pass


def copy_body(body: list[Stmt], mapping: dict[Var, Expr]) -> list[Stmt]:
    """A copy of ``body`` with ``mapping`` applied and fresh Vars for everything it defines."""
    local = dict(mapping)
    for s in body:
        for v in defined_vars(s):
            if not isinstance(v, IterArg):
                local[v] = Var(v.name, v.var_type, span=v.span)
    for s in body:
        for v in defined_vars(s):
            if isinstance(v, IterArg):
                local[v] = IterArg(v.name, v.var_type, init=substitute(v.init, local), span=v.span)
    return [substitute(s, local) for s in body]


def _unroll(loop: ForStmt) -> list[Stmt]:
    start, stop, step = as_int(loop.start), as_int(loop.stop), as_int(loop.step)
    if start is None or stop is None or step is None or step == 0:
        raise UserError("pl.unroll needs constant start/stop/step", loop.span,
                        hint="use pl.range for loops with run-time bounds")
    carried: list[Expr] = [ia.init for ia in loop.iter_args]  # type: ignore[misc]
    out: list[Stmt] = []
    body = flatten(loop.body)
    for i in range(start, stop, step):
        dtype = getattr(loop.loop_var.var_type, "dtype", DataType.INDEX)
        mapping: dict[Var, Expr] = {loop.loop_var: ConstInt(i, dtype)}
        mapping.update(dict(zip(loop.iter_args, carried, strict=True)))
        stmts = copy_body(body, mapping)
        if stmts and isinstance(stmts[-1], YieldStmt):
            carried = list(stmts.pop().values)
        out.extend(stmts)
    out.extend(AssignStmt(rv, v, span=loop.span) for rv, v in zip(loop.return_vars, carried, strict=True))
    return out


@dataclass(frozen=True)
class UnrollLoops(Pass):
    """Each Unroll loop becomes its body repeated with the loop variable bound to constants."""

    name = "UnrollLoops"
    produces = frozenset({IRProperty.UnrollResolved})

    def run_function(self, func: Function, program: Program) -> Function:
        if not any(isinstance(s, ForStmt) and s.kind is ForKind.Unroll for s in iter_stmts(func.body)):
            return func

        def block(stmts: list[Stmt]) -> list[Stmt]:
            out: list[Stmt] = []
            for s in stmts:
                out.extend(_unroll(s) if isinstance(s, ForStmt) and s.kind is ForKind.Unroll else [s])
            return out

        return func.with_(body=map_blocks(func.body, block))
