"""Name analyses for ConvertToSSA: which names a statement reads, and separating same-named Vars.

ConvertToSSA works on source names (the parser gives every assignment a fresh Var and resolves each
use through Python's rebinding rules). A program that already went through the pipeline is in SSA
form by Var identity instead, and its passes may have given several distinct Vars one name (two
``t__tile`` loads, say). :func:`separate_shadowed_names` detects such a function and renames those
Vars apart, so name-based conversion means the same as identity-based conversion for it.
"""

from __future__ import annotations

from typing import Any

from pypto.ir.expr import Var
from pypto.ir.function import Function
from pypto.ir.memo import IdentityMemo
from pypto.ir.stmt import (
    AssignStmt,
    ForStmt,
    IfStmt,
    ScopeStmt,
    SeqStmts,
    Stmt,
    WhileStmt,
    flatten,
)
from pypto.ir.verifier import refs
from pypto.ir.visitor import substitute
from pypto.passes._util import base_name, bound_vars, defined_vars, iter_stmts, used_vars

# Names read per IR node: ConvertToSSA asks again for a nested body at every enclosing level
# (:func:`suffix_live` of each block), and the IR is immutable, so a node's answer never changes.
_READS = IdentityMemo(8192)


def reads(node: Any) -> frozenset[str]:
    """Names an expression or a statement without a body (return, yield, an evaluated call) reads."""
    return _READS.get(None, node, lambda n: frozenset(v.name for v in refs(n)))


def _live_before(s: Stmt, live: set[str]) -> set[str]:
    """Names live before ``s`` given those live after it. A plain assignment, and a scope or statement
    sequence (which run exactly once) kill what they assign; an if kills what both branches assign
    (and its results), and a name its branches bind and read inside is not live before it; loops
    kill nothing (they may run zero times), and a name their body binds before it reads it, or their
    header binds (loop variable, iter_args), is not live before them."""
    if isinstance(s, AssignStmt):
        return (live - {s.var.name}) | reads(s.value)
    if isinstance(s, IfStmt):
        after = live - {rv.name for rv in s.return_vars}
        then = _live_through(flatten(s.then_body), after)
        other = _live_through(flatten(s.else_body), after) if s.else_body is not None else after
        return then | other | reads(s.cond)
    if isinstance(s, (ForStmt, WhileStmt)):
        return live | _READS.get("loop", s, _loop_reads)
    if isinstance(s, (SeqStmts, ScopeStmt)):
        live = _live_through(s.stmts if isinstance(s, SeqStmts) else flatten(s.body), live)
        return live.union(*(reads(d) for d in (*getattr(s, "deps", ()), getattr(s, "predicate", None))))
    return live | reads(s)


def _loop_reads(s: ForStmt | WhileStmt) -> frozenset[str]:
    """Names live before a loop whatever is live after it (a loop kills nothing): read by its body
    before the body binds them, other than its header's (loop variable, iter_args), or by its header."""
    header = header_names(s)
    body = _live_through(flatten(s.body), set()) | (reads(s.cond) if isinstance(s, WhileStmt) else set())
    heads = [*s.inits, *([s.start, s.stop, s.step] if isinstance(s, ForStmt) else [])]
    return frozenset((body - header).union(*(reads(h) for h in heads)))


def header_names(s: ForStmt | WhileStmt) -> set[str]:
    """The names a loop's header binds: its loop variable (a for) and its iter_args."""
    return {ia.name for ia in s.iter_args} | ({s.loop_var.name} if isinstance(s, ForStmt) else set())


def _live_through(stmts: list[Stmt], live: set[str]) -> set[str]:
    for x in reversed(stmts):
        live = _live_before(x, live)
    return live


def suffix_live(stmts: list[Stmt], after: frozenset[str]) -> list[frozenset[str]]:
    """For each statement, the names live after it: read by a later statement before being assigned
    again (``after`` = the names live once the block is done)."""
    out: list[frozenset[str]] = [after] * len(stmts)
    live = set(after)
    for i in range(len(stmts) - 1, -1, -1):
        out[i] = frozenset(live)
        live = _live_before(stmts[i], live)
    return out


def live_in(stmts: list[Stmt], extra: Any = None) -> set[str]:
    """Names a block reads before it (unconditionally) assigns them; ``extra`` is read first."""
    return _live_through(stmts, set()) | reads(extra)


def bound_on_every_path(stmts: list[Stmt]) -> set[str]:
    """Names a block binds whichever way its ifs go (a loop's body may run zero times: only its
    results count). Leaving early (break/continue/return) is not looked at: callers rule it out."""
    out: set[str] = set()
    for s in stmts:
        out |= {v.name for v in bound_vars(s)}  # an assignment's var; a loop's or an if's results
        if isinstance(s, IfStmt) and s.else_body is not None:
            out |= bound_on_every_path(flatten(s.then_body)) & bound_on_every_path(flatten(s.else_body))
        elif isinstance(s, ScopeStmt):
            out |= bound_on_every_path(flatten(s.body))
    return out


# -- pipeline output: separate Vars that share a name --------------------------------------------


class _ShadowCheck:
    """Replays the parser's scoping leniently (after a loop or an if, a name may denote the Var of any
    path); collects names whose use refers to an assigned Var that the name cannot denote there."""

    def __init__(self, func: Function) -> None:
        self.scope: dict[str, set[Var]] = {p.name: {p} for p in func.params}
        self.assigned: set[Var] = {s.var for s in iter_stmts(func.body) if isinstance(s, AssignStmt)}
        self.conflicts: set[str] = set()

    def uses(self, node: Any) -> None:
        self.conflicts.update(v.name for v in used_vars(node) if (cur := self.scope.get(v.name))
                              and v not in cur and v in self.assigned and cur & self.assigned)

    def bind(self, vs: Any) -> None:
        self.scope.update({v.name: {v} for v in vs})

    def merge(self, *scopes: dict[str, set[Var]]) -> None:
        self.scope = {n: set().union(*(sc.get(n, ()) for sc in scopes)) for sc in scopes for n in sc}

    def walk(self, s: Stmt | None) -> None:
        if isinstance(s, SeqStmts):
            for x in s.stmts:
                self.walk(x)
        elif isinstance(s, AssignStmt):
            self.uses(s.value)
            self.bind([s.var])
        elif isinstance(s, (ForStmt, WhileStmt)):
            self.loop(s)
        elif isinstance(s, IfStmt):
            self.uses(s.cond)
            before = dict(self.scope)  # a scope's sets are replaced, never changed in place
            self.walk(s.then_body)
            then, self.scope = self.scope, before
            self.walk(s.else_body)
            self.merge(then, self.scope)
            self.bind(s.return_vars)
        elif isinstance(s, ScopeStmt):
            self.uses([*getattr(s, "deps", ()), getattr(s, "predicate", None)])
            self.walk(s.body)
        elif s is not None:
            self.uses(s)

    def loop(self, s: ForStmt | WhileStmt) -> None:
        self.uses([*((s.start, s.stop, s.step) if isinstance(s, ForStmt) else ()), *s.inits])
        before = dict(self.scope)
        self.bind([*s.iter_args, *([s.loop_var] if isinstance(s, ForStmt) else ())])
        self.uses(s.cond if isinstance(s, WhileStmt) else None)  # a while's condition reads its iter_args
        self.walk(s.body)
        self.merge(before, self.scope)
        self.bind(s.return_vars)


def separate_shadowed_names(func: Function) -> Function:
    """``func`` with same-named distinct Vars renamed apart when some use refers to a Var its name no
    longer denotes (pipeline output); otherwise ``func`` itself. New names keep the base name
    (``t__tile`` -> ``t__ssa_v<k>``), so the names ConvertToSSA derives from them stay the same."""
    check = _ShadowCheck(func)
    check.walk(func.body)
    if not check.conflicts:
        return func
    defs = defined_vars(func.body)
    taken = {p.name for p in func.params} | {v.name for v in defs}
    seen: set[str] = set()
    mapping: dict[Var, Var] = {}
    k = 0
    for v in defs:
        if v.name not in check.conflicts or v.name not in seen:
            seen.add(v.name)
            continue
        while (name := f"{base_name(v.name)}__ssa_v{k}") in taken:
            k += 1
        taken.add(name)
        mapping[v] = type(v)(name, v.var_type, span=v.span)
    return func.with_(body=substitute(func.body, mapping))
