"""MemoryReuse: tiles whose lifetimes do not overlap share one on-chip buffer (first fit, equal size)."""

from __future__ import annotations

from dataclasses import dataclass, field

from pypto.ir.expr import Call, Var
from pypto.ir.function import Function, Program
from pypto.ir.stmt import AssignStmt, ForStmt, IfStmt, ScopeStmt, SeqStmts, Stmt, WhileStmt
from pypto.ir.types import MemRef, PtrType, TileType
from pypto.passes._memref import allocs, drop_unused_allocs, memref_of, with_memref
from pypto.passes._util import retype, used_vars
from pypto.passes.base import Pass
from pypto.passes.memory_rules import NOT_IN_PLACE


@dataclass
class _Lifetimes:
    """Linear statement positions: where each tile var is defined and last used."""

    pos: int = 0
    defined: dict[Var, int] = field(default_factory=dict)
    last: dict[Var, int] = field(default_factory=dict)
    def_op: dict[Var, str] = field(default_factory=dict)

    def use(self, v: Var) -> None:
        if isinstance(v.var_type, TileType):
            self.last[v] = max(self.last.get(v, 0), self.pos)

    def walk(self, stmt: Stmt | None) -> None:
        if stmt is None:
            return
        if isinstance(stmt, SeqStmts):
            for s in stmt.stmts:
                self.walk(s)
            return
        if isinstance(stmt, (ForStmt, WhileStmt)):
            start = self.pos
            self.walk(stmt.body)
            for v in used_vars(stmt.body):  # values from outside live through the whole loop
                if v in self.defined and self.defined[v] < start:
                    self.use(v)
            return
        if isinstance(stmt, IfStmt):
            self.walk(stmt.then_body)
            self.walk(stmt.else_body)
            return
        if isinstance(stmt, ScopeStmt):
            self.walk(stmt.body)
            return
        self.pos += 1
        value = stmt.value if isinstance(stmt, AssignStmt) else stmt
        for v in used_vars(value):
            self.use(v)
        if isinstance(stmt, AssignStmt):
            self.defined[stmt.var] = self.pos
            self.last.setdefault(stmt.var, self.pos)
            if isinstance(stmt.value, Call) and isinstance(stmt.value.op, str):
                self.def_op[stmt.var] = stmt.value.op


@dataclass
class _Buffer:
    base: Var
    size: int
    space: object
    spans: list[tuple[int, int]] = field(default_factory=list)
    start: int = 0
    start_op: str = ""


def _buffers(func: Function, life: _Lifetimes) -> list[_Buffer]:
    by_base: dict[int, _Buffer] = {}
    for a in allocs(func):
        by_base[id(a.var)] = _Buffer(a.var, a.value.kwargs.get("size", 0), a.value.kwargs.get("memory_space"))
    for v, d in life.defined.items():
        mr = memref_of(v)
        if mr is None or not isinstance(mr.base, Var) or id(mr.base) not in by_base:
            continue
        buf = by_base[id(mr.base)]
        if not buf.spans or d < buf.start:
            buf.start, buf.start_op = d, life.def_op.get(v, "")
        buf.spans.append((d, life.last.get(v, d)))
    return [b for b in by_base.values() if b.spans]


def _fits(host: _Buffer, buf: _Buffer) -> bool:
    """Same space and size, and no occupant of ``host`` is live while ``buf`` is."""
    if host.space != buf.space or host.size != buf.size:
        return False
    in_place = buf.start_op not in NOT_IN_PLACE
    for s1, e1 in host.spans:
        for s2, e2 in buf.spans:
            disjoint = e1 < s2 or e2 < s1 or (e1 == s2 and s2 == buf.start and in_place)
            if not disjoint:
                return False
    return True


def plan_reuse(func: Function) -> dict[int, Var]:
    """alloc base id -> the base it is merged into."""
    life = _Lifetimes()
    life.walk(func.body)
    kept: list[_Buffer] = []
    merged: dict[int, Var] = {}
    for buf in sorted(_buffers(func, life), key=lambda b: b.start):
        host = next((k for k in kept if _fits(k, buf)), None)
        if host is None:
            kept.append(buf)
            continue
        host.spans.extend(buf.spans)
        merged[id(buf.base)] = host.base
    return merged


@dataclass(frozen=True)
class MemoryReuse(Pass):
    """Coalesce buffers with disjoint lifetimes; the merged allocs are removed."""

    name = "MemoryReuse"

    def run_function(self, func: Function, program: Program) -> Function:
        if not func.is_incore:
            return func
        merged = plan_reuse(func)
        if not merged:
            return func
        types = {}
        for v in _tile_vars(func):
            mr = memref_of(v)
            if mr is not None and isinstance(mr.base, Var) and id(mr.base) in merged:
                types[v] = with_memref(v.var_type, MemRef(merged[id(mr.base)], mr.offset, mr.size))
        return drop_unused_allocs(retype(func, types))


def _tile_vars(func: Function) -> list[Var]:
    from pypto.passes._memref import all_vars

    return [v for v in all_vars(func) if isinstance(v.var_type, TileType) and not isinstance(v.var_type, PtrType)]
