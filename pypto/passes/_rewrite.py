"""Matching op calls in statements, and rule tables keyed by op run over every block.

``match`` replaces the ``isinstance(s, AssignStmt) and isinstance(s.value, Call) and s.value.op == ...``
idiom with one typed lookup; ``assign_of`` also hands back the assigned Var. A local rewrite is a
table ``{op name: rule}``; :func:`rewrite_blocks` runs it over each statement list of a body, innermost
first, and returns the body itself when no rule changed anything. :func:`clone` is the one routine that
copies statements with fresh Vars (unrolling, inlining, hoisting, kernel splitting).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

from pypto.errors import InternalError
from pypto.ir.enums import MemorySpace, ParamDirection
from pypto.ir.expr import Call, ConstInt, Expr, GlobalVar, MakeTuple, TupleGetItem, Var
from pypto.ir.function import Function, Program
from pypto.ir.ops.registry import make_call, written_index
from pypto.ir.stmt import AssignStmt, EvalStmt, InCoreScopeStmt, Stmt, seq, stmt_value
from pypto.ir.types import TensorType, TupleType
from pypto.ir.visitor import IRMutator, substitute
from pypto.passes._index import iadd
from pypto.passes._util import (
    calls_in,
    defined_vars,
    iter_stmts,
    map_blocks,
    shaped,
    used_vars,
    var_use_counts,
)
from pypto.span import Span

# A rule gets ``var = call`` (var None for a bare call statement) and returns the statements that
# replace it, or None to keep it.
Rule = Callable[[Stmt, Call], "list[Stmt] | None"]

# The attrs that launch a program call's kernel as an SPMD task (``pl.spmd`` / ``core_num=``:
# ``block_num`` blocks, started together under ``sync_start``). A rewrite that replaces the call either
# keeps them on its new calls (ExpandMixedKernel's stage calls) or drops them (a kernel loop turned
# into single-block tasks).
LAUNCH_ATTRS = ("block_num", "sync_start")


def match(node: object, op: str | Collection[str] | None = None) -> Call | None:
    """The op call ``node`` computes: a Call, ``x = call`` or a bare ``call`` statement, when its op is
    ``op`` (one name or a collection of names; None: any op or program call)."""
    value = stmt_value(node) if isinstance(node, Stmt) else node
    if not isinstance(value, Call):
        return None
    if op is None:
        return value
    if isinstance(op, str):
        return value if value.op == op else None
    return value if isinstance(value.op, str) and value.op in op else None


def program_call(node: object, names: Collection[str]) -> tuple[Call, str] | None:
    """``(call, function name)`` when ``node`` (see :func:`match`) calls a program function in ``names``."""
    call = match(node)
    if call is None or not isinstance(call.op, GlobalVar) or call.op.name not in names:
        return None
    return call, call.op.name


def call_function(func: Function, args: Sequence[Expr], span: Span, **attrs: Any) -> Call:
    """A call of ``func`` with its result type (its return type, a tuple of several)."""
    rets = func.return_types
    result = rets[0] if len(rets) == 1 else TupleType(rets)
    return Call(GlobalVar(func.name), tuple(args), result_type=result, span=span, attrs=attrs)


def with_scalar_params(func: Function, extra: Sequence[Var], stmts: list[Stmt]) -> Function:
    """``func`` taking ``extra`` as further In parameters, with body ``stmts``."""
    return func.with_(params=(*func.params, *extra),
                      param_directions=(*func.param_directions, *(ParamDirection.In for _ in extra)),
                      body=seq(stmts, span=func.body.span))


def create_tensor(name: str, t: TensorType, span: Span, **kwargs: Any) -> tuple[Var, AssignStmt]:
    """``name = tensor.create(<t's shape>, dtype=<t's dtype>, **kwargs)``: a GM buffer of type ``t``."""
    create = make_call("tensor.create", [ints(t.shape)], {"dtype": t.dtype, **kwargs}, span=span)
    var = Var(name, create.result_type, span=span)
    return var, AssignStmt(var, create, span=span)


def emit(out: list[Stmt], name: str, value: Expr, span: Span, var_span: Span | None = None) -> Var:
    """A fresh Var ``name`` (located at ``var_span``, else ``span``) for ``value``; ``name = value`` goes
    at the end of ``out``."""
    var = Var(name, value.type, span=span if var_span is None else var_span)
    out.append(AssignStmt(var, value, span=span))
    return var


def assign_of(node: object, op: str | Collection[str] | None = None) -> tuple[Var, Call] | None:
    """``(var, call)`` for ``var = call`` where ``match(call, op)``; None for anything else."""
    if not isinstance(node, AssignStmt):
        return None
    call = match(node.value, op)
    return None if call is None else (node.var, call)


def assigns_of(body: Stmt, op: str) -> dict[Var, Call]:
    """``{var: call}`` for every ``var = op(...)`` anywhere in ``body``."""
    return dict(m for s in iter_stmts(body) if (m := assign_of(s, op)) is not None)


def drop_defs(body: Stmt, dead: Collection[Var]) -> Stmt:
    """``body`` without the assignments to ``dead`` (values nothing reads any more)."""
    return expand_stmts(body, lambda s: [] if isinstance(s, AssignStmt) and s.var in dead else None)


def drop_unused(stmts: list[Stmt], removable: Callable[[AssignStmt], bool]) -> list[Stmt]:
    """``stmts`` without the ``removable`` assignments nothing reads, repeated until none is left (a
    chain of them goes as a whole)."""
    while True:
        used = set(used_vars([s.value if isinstance(s, AssignStmt) else s for s in stmts]))
        keep = [s for s in stmts if not (isinstance(s, AssignStmt) and s.var not in used and removable(s))]
        if len(keep) == len(stmts):
            return keep
        stmts = keep


def call_in(stmt: Stmt) -> Call:
    """The call of a statement already known to compute one; a pypto bug otherwise."""
    call = match(stmt)
    if call is None:
        raise InternalError(f"expected a call statement, got {type(stmt).__name__}")
    return call


def elements(e: Expr) -> tuple[Expr, ...]:
    """The items of an index tuple (``[0, k]``); a pypto bug when ``e`` is no tuple."""
    if not isinstance(e, MakeTuple):
        raise InternalError(f"expected an index tuple, got {type(e).__name__}")
    return e.elements


def ints(values: Collection[int | Expr], span: Span | None = None) -> MakeTuple:
    """An index tuple of constants (ints) and expressions; ``span`` locates the tuple and its constants."""
    sp = span or Span.unknown()
    return MakeTuple(tuple(v if isinstance(v, Expr) else ConstInt(int(v), span=sp) for v in values), span=sp)


def load_whole(tensor: Expr, space: MemorySpace, span: Span) -> Call:
    """``tile.load`` of all of ``tensor`` (offsets 0, its static shape) into ``space``."""
    shape = ints(shaped(tensor).shape)
    return make_call("tile.load", [tensor, ints((0,) * len(shape.elements)), shape, shape], {"target_memory": space},
                     span=span)


def expand_stmts(body: Stmt, fn: Callable[[Stmt], list[Stmt] | None]) -> Stmt:
    """``body`` with each statement of every block replaced by ``fn(s)`` (None keeps it), innermost
    first; ``body`` itself when nothing changed."""
    def block(stmts: list[Stmt]) -> list[Stmt]:
        out: list[Stmt] = []
        for s in stmts:
            new = fn(s)
            out.extend([s] if new is None else new)
        return out

    return map_blocks(body, block)


def rewrite_blocks(body: Stmt, rules: Mapping[str, Rule]) -> Stmt:
    """Apply ``rules`` (op name -> rule) to every call statement of every block of ``body``."""
    def apply(s: Stmt) -> list[Stmt] | None:
        call = match(s)
        rule = rules.get(call.op) if call is not None and isinstance(call.op, str) else None
        return rule(s, call) if rule is not None and call is not None else None

    return expand_stmts(body, apply)


def splice_calls(stmts: list[Stmt], expand: Callable[[Stmt], tuple[list[Stmt], list[Expr]] | None]
                 ) -> tuple[list[Stmt], dict[Var, Expr]]:
    """``stmts`` with each statement ``expand`` takes replaced by the statements it gives; the call's
    result is renamed to the value it gives for it (for a tuple result, the ``x = r[i]`` statements go
    and each ``x`` is renamed to item ``i``). Returns the block and the renames (for later uses too)."""
    out: list[Stmt] = []
    renames: dict[Var, Expr] = {}
    items: dict[Var, list[Expr]] = {}  # a replaced tuple result -> the values of its items
    for s in stmts:
        if isinstance(s, AssignStmt) and isinstance(s.value, TupleGetItem) \
                and isinstance(tup := s.value.tuple_value, Var) and tup in items:
            renames[s.var] = items[tup][s.value.index]
            continue
        s = substitute(s, renames)
        new = expand(s)
        out.extend([s] if new is None else new[0])
        if new is not None and isinstance(s, AssignStmt) and isinstance(s.var.var_type, TupleType):
            items[s.var] = new[1]
        elif new is not None and isinstance(s, AssignStmt):
            renames[s.var] = new[1][0]
    return out, renames


def clone(stmts: list[Stmt], mapping: dict[Var, Expr]) -> list[Stmt]:
    """``stmts`` with ``mapping`` applied and every Var they define replaced by a fresh one; ``mapping``
    gains the fresh Vars, so later statements can be read through it."""
    mapping.update({v: type(v)(v.name, v.var_type, span=v.span) for s in stmts for v in defined_vars(s)})
    return [substitute(s, mapping) for s in stmts]


def replace_functions(program: Program, new: Mapping[str, Sequence[Function]],
                      other: Callable[[Function], Function]) -> Program:
    """``program`` with each function named in ``new`` replaced by those functions (in place, in that
    order) and every other function by ``other(f)``."""
    return program.with_functions([g for f in program.functions for g in new.get(f.name) or [other(f)]])


def fresh_vars(func: Function) -> Function:
    """``func`` with its params and every local definition renamed to fresh Vars: functions built from
    statements of another function (kernel splits) must not share Var objects, as in a re-parsed dump."""
    params = {p: Var(p.name, p.var_type, span=p.span) for p in func.params}
    [body] = clone([func.body], dict(params))
    return dataclasses.replace(func, params=tuple(params.values()), body=body)


def drop_unread(body: Stmt, candidates: Collection[Var]) -> Stmt:
    """``body`` without the assignments to those ``candidates`` nothing reads any more (their definition
    is their only occurrence); ``body`` itself when there is none."""
    uses = var_use_counts(body)
    dead = {v for v in candidates if uses[v] <= 1}
    return drop_defs(body, dead) if dead else body


def map_kernel_bodies(func: Function, fn: Callable[[Stmt], Stmt]) -> Function:
    """``func`` with ``fn`` applied to its body (a kernel) or to the body of each of its ``pl.at`` regions
    (an orchestration); ``func`` itself when nothing changed."""
    class _Regions(IRMutator):
        def visit_InCoreScopeStmt(self, s: InCoreScopeStmt) -> Stmt:  # noqa: N802
            body = fn(s.body)
            return s if body is s.body else dataclasses.replace(s, body=body)

    body = fn(func.body) if func.is_incore else _Regions().visit(func.body)
    return func if body is func.body else func.with_(body=body)


def store_shifted(value: Expr, store: Call, row: Expr, col: Expr, span: Span) -> EvalStmt:
    """``tile.store(value, ...)`` to the tensor of ``store`` (a ``tile.store`` call), with its last two
    offsets moved by ``row`` and ``col``: a block of the stored tile put where it belongs."""
    *lead, row0, col0 = elements(store.args[1])
    offs = ints([*lead, iadd(row0, row, span), iadd(col0, col, span)], span)
    return EvalStmt(make_call("tile.store", [value, offs, store.args[2]], dict(store.kwargs), span=span), span=span)


def last_writes(stmts: list[Stmt], tiles: set[Var]) -> dict[Var, int]:
    """Each of ``tiles`` -> the position of the last statement of ``stmts`` that defines it or writes into
    it in place (a call's written operand, in a loop or an if included)."""
    last: dict[Var, int] = {}
    for i, s in enumerate(stmts):
        hit = set(defined_vars(s)) & tiles
        hit |= {c.args[k] for c in calls_in(s) if (k := written_index(c)) is not None and c.args[k] in tiles}
        last.update(dict.fromkeys(hit, i))
    return last


def store_tile(tile: Var, offsets: Expr, gm: Var) -> AssignStmt:
    """``<gm>__store = tile.store(tile, offsets, gm)``: a tile crossing cores, written into its GM temp."""
    store = make_call("tile.store", [tile, offsets, gm], span=tile.span)
    return AssignStmt(Var(f"{gm.name}__store", store.result_type, span=tile.span), store, span=tile.span)
