"""FlattenCallExpr: three-address form; calls nested in call args/conditions/bounds get ``t__tmp_vN`` temps."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from pypto.ir.expr import Call, Expr
from pypto.ir.function import Function, Program
from pypto.ir.properties import IRProperty
from pypto.ir.stmt import (
    AssignStmt,
    EvalStmt,
    ForStmt,
    IfStmt,
    ReturnStmt,
    Stmt,
    YieldStmt,
    preorder,
    stmt_value,
)
from pypto.ir.visitor import IRMutator
from pypto.passes._rewrite import emit, expand_stmts
from pypto.passes._util import NameGen, calls_in
from pypto.passes.base import Pass


class _Hoist(IRMutator):
    """Replaces every nested Call by a temp Var, recording ``temp = call`` assignments (post-order)."""

    def __init__(self, names: NameGen) -> None:
        self.names = names
        self.pre: list[Stmt] = []

    def visit_Call(self, call: Call) -> Expr:  # noqa: N802
        new = self.generic_visit(call)
        return emit(self.pre, self.names("t"), new, call.span)


def _flatten_stmt(s: Stmt, h: _Hoist) -> list[Stmt] | None:
    """The temps for the calls nested in ``s``, then ``s`` reading them; None when nothing is nested."""
    h.pre = []
    # a call that is an assignment's value or a statement of its own stays: only its arguments get temps
    if isinstance(s, AssignStmt) and isinstance(s.value, Call):
        new: Stmt = dataclasses.replace(s, value=h.generic_visit(s.value))
    elif isinstance(s, EvalStmt) and isinstance(s.expr, Call):
        new = dataclasses.replace(s, expr=h.generic_visit(s.expr))
    elif isinstance(s, AssignStmt):
        new = dataclasses.replace(s, value=h.visit(s.value))
    elif isinstance(s, (ReturnStmt, YieldStmt)):
        new = dataclasses.replace(s, values=tuple(h.visit(v) for v in s.values))
    elif isinstance(s, ForStmt):
        new = dataclasses.replace(s, start=h.visit(s.start), stop=h.visit(s.stop), step=h.visit(s.step))
    elif isinstance(s, IfStmt):
        new = dataclasses.replace(s, cond=h.visit(s.cond))
    else:
        return None
    return [*h.pre, new] if h.pre else None


@dataclass(frozen=True)
class FlattenCallExpr(Pass):
    """No call appears nested inside another call's arguments, a condition or a loop bound."""

    name = "FlattenCallExpr"
    produces = frozenset({IRProperty.NoNestedCalls})

    def run_function(self, func: Function, program: Program) -> Function:
        if not _nests_calls(func):
            return func
        h = _Hoist(NameGen("tmp"))
        body = expand_stmts(func.body, lambda s: _flatten_stmt(s, h))
        return func if body is func.body else func.with_(body=body)


def _nests_calls(func: Function) -> bool:
    """Some call is not itself the value of an assignment or an expression statement: it is nested in
    another call, an expression, a condition, a bound or a return (the remembered lists of calls and
    statements answer this without a walk when an earlier pass left the body as it was)."""
    direct = sum(1 for s in preorder(func.body) if isinstance(stmt_value(s), Call))
    return len(calls_in(func.body)) > direct
