"""MaterializeRuntimeScopes: orchestration bodies and each for/if body run inside a RuntimeScopeStmt."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from pypto.ir.enums import FunctionType
from pypto.ir.function import Function, Program
from pypto.ir.properties import IRProperty
from pypto.ir.stmt import ForStmt, IfStmt, RuntimeScopeStmt, Stmt, WhileStmt, flatten, seq
from pypto.passes.base import Pass


def _scoped(body: Stmt | None) -> Stmt | None:
    if body is None or (len(stmts := flatten(body)) == 1 and isinstance(stmts[0], RuntimeScopeStmt)):
        return body  # no body, or one already scoped
    return RuntimeScopeStmt(_inner(body), span=body.span)


def _inner(body: Stmt) -> Stmt:
    """Recurse into nested control flow, wrapping each loop / branch body."""
    out = []
    for s in flatten(body):
        if isinstance(s, (ForStmt, WhileStmt)):
            s = dataclasses.replace(s, body=_scoped(s.body))
        elif isinstance(s, IfStmt):
            s = dataclasses.replace(s, then_body=_scoped(s.then_body), else_body=_scoped(s.else_body))
        out.append(s)
    return seq(out, span=body.span)


@dataclass(frozen=True)
class MaterializeRuntimeScopes(Pass):
    """Wrap orchestration code in AUTO runtime scopes and mark the function ``auto_scope=False``."""

    name = "MaterializeRuntimeScopes"
    produces = frozenset({IRProperty.RuntimeScopesMaterialized})

    def run_function(self, func: Function, program: Program) -> Function:
        if func.func_type is not FunctionType.Orchestration or func.attrs.get("auto_scope") is False:
            return func
        return func.with_(body=_scoped(func.body), attrs={**func.attrs, "auto_scope": False})
