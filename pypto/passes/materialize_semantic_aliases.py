"""MaterializeSemanticAliases: loop-carried and if-merged values share one buffer (MemRef)."""

from __future__ import annotations

from dataclasses import dataclass

from pypto.ir.expr import Var
from pypto.ir.function import Function, Program
from pypto.ir.stmt import ForStmt, IfStmt, Stmt, WhileStmt, YieldStmt, flatten
from pypto.ir.types import MemRef
from pypto.passes._memref import drop_unused_allocs, memref_of, with_memref
from pypto.passes._util import iter_stmts, retype
from pypto.passes.base import Pass


def _yield_values(body: Stmt | None) -> tuple[object, ...]:
    stmts = flatten(body)
    return stmts[-1].values if stmts and isinstance(stmts[-1], YieldStmt) else ()


def _groups(func: Function) -> list[list[Var]]:
    """Sets of vars that must share a buffer: (init, iter_arg, yielded, result) and (then, else, result)."""
    out: list[list[Var]] = []
    for s in iter_stmts(func.body):
        if isinstance(s, (ForStmt, WhileStmt)):
            ys = _yield_values(s.body)
            for i, ia in enumerate(s.iter_args):
                group = [ia.init, ia, ys[i] if i < len(ys) else None, s.return_vars[i] if i < len(s.return_vars) else None]
                out.append([v for v in group if isinstance(v, Var)])
        elif isinstance(s, IfStmt) and s.return_vars:
            ts, es = _yield_values(s.then_body), _yield_values(s.else_body)
            for i, rv in enumerate(s.return_vars):
                group = [ts[i] if i < len(ts) else None, es[i] if i < len(es) else None, rv]
                out.append([v for v in group if isinstance(v, Var)])
    return out


@dataclass(frozen=True)
class MaterializeSemanticAliases(Pass):
    """Every member of an alias group takes the MemRef of the group's first member."""

    name = "MaterializeSemanticAliases"

    def run_function(self, func: Function, program: Program) -> Function:
        types: dict[Var, object] = {}
        for group in _groups(func):
            lead: MemRef | None = next((m for v in group if (m := memref_of(v)) is not None), None)
            if lead is None:
                continue
            for v in group:
                if memref_of(v) is not None and memref_of(v) != lead:
                    types[v] = with_memref(v.var_type, lead)
        if not types:
            return func
        return drop_unused_allocs(retype(func, types))  # type: ignore[arg-type]
