"""CtrlFlowTransform: ``break``/``continue`` -> structured control flow.

Runs before ConvertToSSA, where a name rebound in a loop or branch is still just a rebinding (SSA
turns it into iter args and phis). Inside a loop body:

- ``continue`` drops the rest of its path: in ``if c: ...; continue`` the statements after the ``if``
  move into the branches that fall through (``if c: ... else: <rest>``);
- ``break`` does the same and also sets a flag ``broke = True``; the flag starts ``False`` before the
  loop, and the whole body of a ``for`` runs under ``if not broke:`` (a ``while`` gets
  ``cond and not broke``), so no later iteration does anything.

A loop with explicit ``init_values`` keeps one final ``pl.yield_``: its values are first rebound to
the iter-arg names, so every path reaches the yield with the values current on that path.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from pypto.errors import UnsupportedFeatureError
from pypto.ir.dtypes import DataType
from pypto.ir.enums import ForKind
from pypto.ir.expr import BinaryExpr, BinOp, ConstBool, UnaryExpr, UnOp, Var
from pypto.ir.function import Function, Program
from pypto.ir.properties import IRProperty
from pypto.ir.stmt import (
    AssignStmt,
    BreakStmt,
    ContinueStmt,
    ForStmt,
    IfStmt,
    ScopeStmt,
    Stmt,
    WhileStmt,
    YieldStmt,
    flatten,
    seq,
)
from pypto.ir.types import ScalarType
from pypto.ir.visitor import substitute
from pypto.passes._rewrite import expand_stmts
from pypto.passes._util import bound_vars, defined_vars, iter_stmts, jumps, unique_name, used_vars
from pypto.passes.base import Pass

BOOL = ScalarType(DataType.BOOL)


def _end_paths(stmts: list[Stmt], flag: str) -> list[Stmt]:
    """``stmts`` with every jump ending its path (the rest moves into the branches that fall through); a
    break sets ``flag``."""
    out: list[Stmt] = []
    for k, s in enumerate(stmts):
        if isinstance(s, ContinueStmt):
            return out
        if isinstance(s, BreakStmt):
            return [*out, AssignStmt(Var(flag, BOOL, span=s.span), ConstBool(True, span=s.span), span=s.span)]
        if jumps(s):
            return [*out, _branch(s, stmts[k + 1:], flag)]
        out.append(s)
    return out


def _branch(s: Stmt, rest: list[Stmt], flag: str) -> Stmt:
    kw = "break" if jumps(s, (BreakStmt,)) else "continue"
    if not isinstance(s, IfStmt):
        raise UnsupportedFeatureError(f"'{kw}' inside a {type(s).__name__} scope cannot leave the scope",
                                      jumps(s)[0].span, hint=f"move the '{kw}' out of the `with` block")
    if s.return_vars:
        raise UnsupportedFeatureError(f"'{kw}' inside an if/else that yields values (pl.yield_) is not "
                                      "supported", jumps(s)[0].span,
                                      hint="assign the values by name instead of yielding them")
    then = _end_paths(flatten(s.then_body) + rest, flag)
    other = _end_paths(flatten(s.else_body) + rest, flag)
    return dataclasses.replace(s, then_body=seq(then, span=s.span),
                               else_body=seq(other, span=s.span) if other else None)


def _split_yield(loop: ForStmt | WhileStmt) -> tuple[list[Stmt], list[Stmt]]:
    """(body without its final yield, the final yield as rebinds of the iter-arg names + yield of them)."""
    stmts = flatten(loop.body)
    if not loop.iter_args or not stmts or not isinstance(stmts[-1], YieldStmt):
        return stmts, []
    y = stmts[-1]
    rebinds: list[Stmt] = [AssignStmt(Var(ia.name, ia.var_type, span=y.span), v, span=y.span)
                           for ia, v in zip(loop.iter_args, y.values, strict=True) if v is not ia]
    return stmts[:-1] + rebinds, [YieldStmt(tuple(loop.iter_args), span=y.span)]


def _transform_loop(loop: ForStmt | WhileStmt, flag: str) -> list[Stmt]:
    breaks = jumps(loop.body, (BreakStmt,))
    if breaks and isinstance(loop, ForStmt) and loop.kind is ForKind.Parallel:
        raise UnsupportedFeatureError("'break' inside a pl.parallel loop is not supported (iterations are "
                                      "independent)", breaks[0].span, hint="use pl.range for a loop that can stop early")
    body, final = _split_yield(loop)
    body = _end_paths(body, flag)
    if not breaks:
        return [dataclasses.replace(loop, body=seq([*body, *final], span=loop.span))]
    sp = loop.span
    init = AssignStmt(Var(flag, BOOL, span=sp), ConstBool(False, span=sp), span=sp)
    not_broke = UnaryExpr(UnOp.Not, init.var, DataType.BOOL, span=sp)
    if isinstance(loop, WhileStmt):
        cond = BinaryExpr(BinOp.And, loop.cond, not_broke, DataType.BOOL, span=sp)
        return [init, dataclasses.replace(loop, cond=cond, body=seq([*body, *final], span=sp))]
    guarded = IfStmt(not_broke, seq(body, span=sp), None, span=sp)
    return [init, dataclasses.replace(loop, body=seq([guarded, *final], span=sp))]


@dataclass(frozen=True)
class CtrlFlowTransform(Pass):
    """Rewrite break/continue into if-structured bodies with a loop-carried break flag."""

    name = "CtrlFlowTransform"
    produces = frozenset({IRProperty.StructuredCtrlFlow})

    def run_function(self, func: Function, program: Program) -> Function:
        if not any(isinstance(s, (BreakStmt, ContinueStmt)) for s in iter_stmts(func.body)):
            return func  # no break/continue anywhere: nothing to rewrite or reject
        taken = {v.name for v in (*func.params, *defined_vars(func.body))}
        if stray := jumps(func.body):
            raise UnsupportedFeatureError("'break'/'continue' outside a loop", stray[0].span)
        # every jump now sits in a loop, which is rewritten: the body always changes
        body = expand_stmts(func.body, lambda s: _transform_loop(s, unique_name("broke", taken))
                            if isinstance(s, (ForStmt, WhileStmt)) and jumps(s.body) else None)
        rebind = _Rebinder({p.name: p for p in func.params})
        return func.with_(body=seq([rebind.stmt(s) for s in flatten(body)], span=body.span))


@dataclass
class _Rebinder:
    """Re-point every use to the Var the frontend would bind its name to (so dumps re-parse identically):
    names assigned inside an if-branch fall back to their pre-if binding after the if; loop and
    scope bodies keep theirs."""

    env: dict[str, Var]

    def use(self, node):
        mapping = {v: self.env[v.name] for v in used_vars(node) if v.name in self.env and self.env[v.name] is not v}
        return substitute(node, mapping) if mapping else node

    def _body(self, body: Stmt | None, restore: bool) -> Stmt | None:
        if body is None:
            return None
        snap, stmts = dict(self.env), flatten(body)
        out = seq([self.stmt(s) for s in stmts], span=body.span) if stmts else body
        if restore:
            self.env = snap
        return out

    def stmt(self, s: Stmt) -> Stmt:
        if isinstance(s, AssignStmt):
            s = dataclasses.replace(s, value=self.use(s.value))
        elif isinstance(s, IfStmt):
            s = dataclasses.replace(s, cond=self.use(s.cond), then_body=self._body(s.then_body, True),
                                    else_body=self._body(s.else_body, True))
        elif isinstance(s, (ForStmt, WhileStmt)):
            changes = {k: self.use(getattr(s, k)) for k in ("start", "stop", "step") if hasattr(s, k)}
            self.env.update({v.name: v for v in (getattr(s, "loop_var", None), *s.iter_args) if v is not None})
            if isinstance(s, WhileStmt):
                changes["cond"] = self.use(s.cond)
            s = dataclasses.replace(s, body=self._body(s.body, False), **changes)
        elif isinstance(s, ScopeStmt):
            s = dataclasses.replace(s, body=self._body(s.body, False))
        else:
            return self.use(s)
        self.env.update({v.name: v for v in bound_vars(s)})  # an assignment's var; a loop's or if's results
        return s
