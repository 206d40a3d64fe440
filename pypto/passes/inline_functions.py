"""InlineFunctions: splice every ``FunctionType.Inline`` body into its call sites; drop Inline functions."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from pypto.errors import UnsupportedFeatureError
from pypto.ir.callgraph import callee_first
from pypto.ir.enums import FunctionType
from pypto.ir.expr import Call, Expr, Var
from pypto.ir.function import Function, Program
from pypto.ir.properties import IRProperty
from pypto.ir.stmt import (
    DUMP_TAGS_ATTR,
    AssignStmt,
    InCoreScopeStmt,
    ReturnStmt,
    Stmt,
    flatten,
    stmt_value,
)
from pypto.ir.visitor import IRMutator
from pypto.passes._rewrite import clone, expand_stmts, program_call
from pypto.passes._util import calls_in
from pypto.passes.base import Pass


def tag_spliced_scopes(stmts: list[Stmt], tags: tuple[Expr, ...]) -> list[Stmt]:
    """The ``pl.at`` scopes of an inlined body, also dumping the caller's ``pl.dump_tag`` marks."""
    class _Scopes(IRMutator):
        def visit_InCoreScopeStmt(self, s: InCoreScopeStmt) -> Stmt:  # noqa: N802
            s = self.generic_visit(s)
            extra = tuple(t for t in tags if not any(t is d for d in s.dumps))
            return dataclasses.replace(s, dumps=s.dumps + extra) if extra else s

    return [_Scopes().visit(s) for s in stmts] if tags else stmts


def _expand(call: Call, target: Function, result: Var | None, span: object) -> list[Stmt]:
    stmts = flatten(target.body)
    if any(isinstance(s, ReturnStmt) for s in stmts[:-1]):
        raise UnsupportedFeatureError(f"early return inside inline function '{target.name}'", target.span)
    out = clone(stmts, dict(zip(target.params, call.args, strict=True)))
    out = tag_spliced_scopes(out, call.attrs.get(DUMP_TAGS_ATTR, ()))  # the caller's pl.dump_tag marks
    tail = out.pop() if stmts and isinstance(stmts[-1], ReturnStmt) else None
    if result is not None:
        if not isinstance(tail, ReturnStmt) or len(tail.values) != 1:
            raise UnsupportedFeatureError(f"inline function '{target.name}' must return exactly one value", span)
        out.append(AssignStmt(result, tail.values[0], span=span))
    return out


@dataclass(frozen=True)
class InlineFunctions(Pass):
    """Inline-typed functions are expanded at each statement-level call and removed."""

    name = "InlineFunctions"
    produces = frozenset({IRProperty.InlineFunctionsEliminated})

    def run(self, program: Program) -> Program:
        from pypto.passes._pipes import lower_pipe_groups

        program = lower_pipe_groups(program)  # a Group talking through pipes becomes Inline (see _pipes)
        inline = {f.name: f for f in program.functions if f.func_type is FunctionType.Inline}
        if not inline:
            return program
        funcs = []
        for f in program.functions:
            if f.func_type is not FunctionType.Inline:
                for _ in range(len(inline) + 1):  # inline bodies may call other inline functions
                    f = f.with_(body=expand_stmts(f.body, lambda s: self._stmt(s, inline)))
                funcs.append(f)
        return program.with_functions(callee_first(funcs))

    def _stmt(self, s: Stmt, inline: dict[str, Function]) -> list[Stmt] | None:
        if (found := program_call(s, inline)) is not None:
            result = s.var if isinstance(s, AssignStmt) else None
            return _expand(found[0], inline[found[1]], result, s.span)
        if isinstance(s, ReturnStmt) and len(s.values) == 1 and (found := program_call(s.values[0], inline)):
            # ``return f(...)``: expand as ``tmp = f(...); return tmp``
            tmp = Var(f"{found[1]}_result", found[0].result_type, span=s.span)
            return [*_expand(found[0], inline[found[1]], tmp, s.span), ReturnStmt((tmp,), span=s.span)]
        nested = [c for c in calls_in(s) if program_call(c, inline)]
        if nested and stmt_value(s) is not nested[0]:  # not an assignment's or expression statement's value
            raise UnsupportedFeatureError(
                f"call to inline function '{nested[0].op.name}' nested inside an expression", s.span,
                hint="assign the call's result to a variable first")
        return None


__all__ = ["InlineFunctions"]
