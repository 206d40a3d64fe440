"""MaterializeSemanticAliases: loop-carried and if-merged values share one buffer (MemRef).

Alias groups are (init, iter arg, yielded value, loop result) per carried value and (then value,
else value, if result) per ``if`` result; groups that share a member are merged. A member whose
value is still needed while another member of its group is written cannot share the buffer: a
yielded value of that kind is copied (``tile.move`` in its own memory space) right before the
``yield``, a loop init right before the loop. Then every group member takes one MemRef.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from functools import cached_property

from pypto.ir.expr import Expr, IterArg, Var
from pypto.ir.function import Function, Program
from pypto.ir.ops.registry import make_call
from pypto.ir.stmt import AssignStmt, ForStmt, IfStmt, Stmt, WhileStmt, YieldStmt
from pypto.ir.types import MemRef, TileType
from pypto.passes._liveness import Liveness
from pypto.passes._memref import drop_unused_allocs, memref_of, with_memref
from pypto.passes._rewrite import expand_stmts
from pypto.passes._util import follow, iter_stmts, retype, trailing_yield
from pypto.passes.base import Pass


@dataclass
class _Groups:
    """Union-find over vars, plus the copies needed to keep interfering members apart."""

    body: Stmt
    parent: dict[Var, Var] = field(default_factory=dict)
    members: dict[Var, list[Var]] = field(default_factory=dict)
    yield_copies: dict[int, dict[int, Var]] = field(default_factory=dict)  # id(YieldStmt) -> index -> copy
    init_copies: dict[IterArg, Var] = field(default_factory=dict)

    @cached_property
    def life(self) -> Liveness:
        """The liveness of ``body``, computed when a first pair of tiles is checked (most kernels carry none)."""
        life = Liveness()
        life.walk(self.body)
        return life

    def find(self, v: Var) -> Var:
        return follow(self.parent, v)

    def clashes(self, a: Var, b: Var) -> bool:
        ra, rb = self.find(a), self.find(b)
        if ra is rb:
            return False
        return any(self.life.interfere(x, y) for x in self.members.get(ra, [ra])
                   for y in self.members.get(rb, [rb]))

    def union(self, a: Var, b: Var) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra is rb:
            return
        self.parent[rb] = ra
        self.members[ra] = self.members.get(ra, [ra]) + self.members.pop(rb, [rb])

    def _join(self, target: Var, v: Expr, copy: bool) -> Var | None:
        """Alias tile ``v`` with ``target``; when they interfere (or ``copy`` says so), alias a fresh copy
        of ``v`` instead and return it."""
        if not isinstance(v, Var) or not isinstance(v.var_type, TileType):
            return None
        if not copy and not self.clashes(target, v):
            self.union(target, v)
            return None
        new = Var(f"{v.name}__carry", v.var_type, span=v.span)
        self.union(target, new)
        return new

    def join_yield(self, target: Var, ys: YieldStmt, i: int) -> None:
        """Alias ``ys.values[i]`` with ``target``, or record a copy when they interfere."""
        v = ys.values[i]
        copy = self._join(target, v, isinstance(v, IterArg) or sum(1 for x in ys.values if x is v) > 1)
        if copy is not None:
            self.yield_copies.setdefault(id(ys), {})[i] = copy

    def join_init(self, ia: IterArg, init: Expr) -> None:
        copy = self._join(ia, init, False)
        if copy is not None:
            self.init_copies[ia] = copy


def _collect(func: Function) -> _Groups:
    g = _Groups(func.body)
    for s in iter_stmts(func.body):
        if isinstance(s, (ForStmt, WhileStmt)):
            ys = trailing_yield(s.body)
            for i, (ia, init) in enumerate(zip(s.iter_args, s.inits, strict=True)):
                if not isinstance(ia.var_type, TileType):
                    continue
                if i < len(s.return_vars):
                    g.union(ia, s.return_vars[i])
                g.join_init(ia, init)
                if ys is not None and i < len(ys.values):
                    g.join_yield(ia, ys, i)
        elif isinstance(s, IfStmt) and s.return_vars:
            for body in (s.then_body, s.else_body):
                ys = trailing_yield(body)
                for i, rv in enumerate(s.return_vars):
                    if ys is not None and i < len(ys.values) and isinstance(rv.var_type, TileType):
                        g.join_yield(rv, ys, i)
    return g


def _copy_stmt(copy: Var, src: Var) -> AssignStmt:
    space = src.var_type.memory_space
    call = make_call("tile.move", [src], {"target_memory": space}, span=src.span)
    return AssignStmt(copy, call, span=src.span)


def _insert_copies(func: Function, g: _Groups) -> Function:
    """The recorded copies: of a yielded value before its yield, of a loop init before the loop."""
    def one(s: Stmt) -> list[Stmt] | None:
        if isinstance(s, YieldStmt) and id(s) in g.yield_copies:
            copies = g.yield_copies[id(s)]
            pre = [_copy_stmt(c, s.values[i]) for i, c in copies.items()]  # type: ignore[arg-type]
            return [*pre, dataclasses.replace(s, values=tuple(copies.get(i, v) for i, v in enumerate(s.values)))]
        if isinstance(s, (ForStmt, WhileStmt)) and any(ia in g.init_copies for ia in s.iter_args):
            pairs, inits = list(zip(s.iter_args, s.inits, strict=True)), g.init_copies
            pre = [_copy_stmt(inits[ia], init) for ia, init in pairs if ia in inits]  # type: ignore[arg-type]
            return [*pre, dataclasses.replace(s, inits=tuple(inits.get(ia, init) for ia, init in pairs))]
        return None

    return func.with_(body=expand_stmts(func.body, one))


@dataclass(frozen=True)
class MaterializeSemanticAliases(Pass):
    """Every member of an alias group takes the MemRef of the group's first member with one."""

    name = "MaterializeSemanticAliases"

    def run_function(self, func: Function, program: Program) -> Function:
        groups = _collect(func)
        for _ in range(_MAX_ROUNDS):  # copies are new vars: re-analyze until none are needed
            if not groups.yield_copies and not groups.init_copies:
                break
            func = _insert_copies(func, groups)
            groups = _collect(func)
        types: dict[Var, object] = {}
        for root in {groups.find(v) for v in groups.members}:
            members = groups.members[root]
            lead: MemRef | None = next((m for v in members if (m := memref_of(v)) is not None), None)
            if lead is None:
                continue
            for v in members:
                if memref_of(v) != lead:
                    types[v] = with_memref(v.var_type, lead)
        if not types:
            return func
        return drop_unused_allocs(retype(func, types))


_MAX_ROUNDS = 4
