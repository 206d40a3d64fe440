"""NormalizeReturnOrder: kernels return their Out/InOut params themselves, in parameter order."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from pypto.ir.enums import ParamDirection
from pypto.ir.expr import Call, Expr, Var
from pypto.ir.function import Function, Program
from pypto.ir.ops.registry import written_index
from pypto.ir.properties import IRProperty
from pypto.ir.stmt import AssignStmt, ForStmt, IfStmt, ReturnStmt, Stmt, WhileStmt, flatten, seq
from pypto.ir.types import TensorType
from pypto.passes._util import iter_stmts, trailing_yield
from pypto.passes.base import Pass


def _written_param(func: Function) -> dict[Var, Var]:
    """Tensor var -> the param it is a write-result of (``c__store = tile.store(t, off, c)`` -> c)."""
    alias: dict[Var, Var] = {}
    stmts = list(iter_stmts(func.body))
    for _ in range(1 + sum(isinstance(s, IfStmt) for s in stmts)):  # nested ifs resolve inside out
        before = dict(alias)
        for s in stmts:
            if isinstance(s, AssignStmt) and isinstance(s.value, Call) and (at := written_index(s.value)) is not None:
                target = s.value.args[at]
                if isinstance(target, Var):
                    alias[s.var] = alias.get(target, target)
            elif isinstance(s, ForStmt | WhileStmt):  # a tensor carried through a loop is still its init's buffer
                for ia, init, rv in zip(s.iter_args, s.inits, s.return_vars, strict=False):
                    if isinstance(init, Var) and isinstance(ia.var_type, TensorType):
                        alias[ia] = alias[rv] = alias.get(init, init)
            elif isinstance(s, IfStmt) and s.return_vars:
                _merge_if(s, alias)
        if alias == before:
            break
    return alias


def _merge_if(s: IfStmt, alias: dict[Var, Var]) -> None:
    """An if result is a write-result of param ``p`` when both branches yield a write of ``p``."""
    for i, rv in enumerate(s.return_vars):
        vals = [y.values[i] for y in map(trailing_yield, (s.then_body, s.else_body))
                if y is not None and len(y.values) > i]
        roots = {alias.get(v, v) for v in vals if isinstance(v, Var)}
        if len(vals) == 2 and len(roots) == 1:
            alias[rv] = roots.pop()


@dataclass(frozen=True)
class NormalizeReturnOrder(Pass):
    """Returned tensors are replaced by the Out/InOut params they were written into."""

    name = "NormalizeReturnOrder"
    produces = frozenset({IRProperty.ReturnParamsExplicit})

    def run_function(self, func: Function, program: Program) -> Function:
        if not func.is_incore:
            return func
        stmts = flatten(func.body)
        if not stmts or not isinstance(stmts[-1], ReturnStmt):
            return func
        ret = stmts[-1]
        alias = _written_param(func)
        outs = {p for p, d in zip(func.params, func.param_directions, strict=True) if d is not ParamDirection.In}
        values: list[Expr] = [alias.get(v, v) if isinstance(v, Var) and isinstance(v.type, TensorType) else v
                              for v in ret.values]
        if all(a is b for a, b in zip(values, ret.values, strict=True)):
            return func
        bad = [v for v in values if isinstance(v.type, TensorType) and v not in outs]
        if bad:
            return func
        new: list[Stmt] = [*stmts[:-1], dataclasses.replace(ret, values=tuple(values))]
        return func.with_(body=seq(new))
