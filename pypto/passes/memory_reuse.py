"""MemoryReuse: tiles whose lifetimes do not overlap share one on-chip buffer (first fit, equal size)."""

from __future__ import annotations

from dataclasses import dataclass, field

from pypto.ir.enums import ForKind, MemorySpace
from pypto.ir.expr import Var
from pypto.ir.function import Function, Program
from pypto.ir.ops.registry import lookup, op_of
from pypto.ir.stmt import AssignStmt, ForStmt, Stmt
from pypto.ir.types import MemRef, TileType
from pypto.passes._liveness import Liveness
from pypto.passes._memref import allocs, drop_unused_allocs, memref_of, rebase
from pypto.passes._rewrite import match
from pypto.passes._util import iter_stmts
from pypto.passes.base import Pass


def _last_uses(body: Stmt, life: Liveness) -> dict[Var, int]:
    """The linear position where each tile var is last used (from :class:`Liveness`, so values used inside a
    loop live to its end). Operands of view ops (concat/assemble, lowered lazily; reshape, sharing their
    bytes) stay live as long as the result."""
    last = {v: max([at.pos, *(q.pos for q in life.uses.get(v, ()))]) for v, at in life.defs.items()}
    views = [s for s in iter_stmts(body) if isinstance(s, AssignStmt)
             and (op := op_of(s.value)) is not None and op.keeps_operands]
    for s in reversed(views):  # results before the views that feed them
        end = last.get(s.var)
        for a in s.value.args:
            if isinstance(a, Var) and a in last and end is not None:
                last[a] = max(last[a], end)
    return last


@dataclass
class _Buffer:
    base: Var
    size: int
    space: object
    spans: list[tuple[int, int]] = field(default_factory=list)
    start: int = 0
    start_op: str = ""
    stages: set[int] = field(default_factory=set)  # lowered pl.pipeline loops its tiles are defined in
    loaded: bool = False                            # one of its tiles is a tile.load result


def _pipeline_members(func: Function) -> dict[Var, tuple[int, bool]]:
    """Tiles defined in a lowered ``pl.pipeline`` loop body -> (loop id, kept per stage): a tile.load result,
    or an accumulator of a loop marked ``pipeline_double_buffer_c`` (two L0C accumulators in flight)."""
    out: dict[Var, tuple[int, bool]] = {}
    for loop in iter_stmts(func.body):
        if isinstance(loop, ForStmt) and loop.kind is ForKind.Pipeline:
            dbc = bool(loop.attrs.get("pipeline_double_buffer_c"))
            for s in iter_stmts(loop.body):
                if isinstance(s, AssignStmt) and isinstance(t := s.var.var_type, TileType):
                    acc = dbc and t.memory_space is MemorySpace.Acc
                    out[s.var] = (id(loop), acc or match(s, "tile.load") is not None)
    return out


def _buffers(func: Function) -> list[_Buffer]:
    """The buffers of ``func``'s tiles: where each tile is defined (from :class:`Liveness`: iter args at the
    loop header, loop/if results at the end) and last used."""
    life = Liveness()
    life.walk(func.body)
    last = _last_uses(func.body, life)
    by_base: dict[int, _Buffer] = {}
    members = _pipeline_members(func)
    for var, call in allocs(func):
        by_base[id(var)] = _Buffer(var, call.kwargs.get("size", 0), call.kwargs.get("memory_space"))
    for v, at in life.defs.items():
        mr = memref_of(v)
        if mr is None or not isinstance(mr.base, Var) or id(mr.base) not in by_base:
            continue
        buf, d = by_base[id(mr.base)], at.pos
        if not buf.spans or d < buf.start:
            buf.start, buf.start_op = d, life.ops.get(v, "")
        buf.spans.append((d, last.get(v, d)))
        if v in members:
            buf.stages.add(members[v][0])
            buf.loaded |= members[v][1]
    return [b for b in by_base.values() if b.spans]


def _fits(host: _Buffer, buf: _Buffer) -> bool:
    """Same space and size, and no occupant of ``host`` is live while ``buf`` is."""
    if host.space != buf.space or host.size != buf.size:
        return False
    if host.stages & buf.stages and (host.loaded or buf.loaded):
        return False  # stages keep their own load (and dbC accumulator) buffers, so stage k+1 overlaps stage k
    op = lookup(buf.start_op)
    in_place = op is None or op.in_place
    return all(e1 < s2 or e2 < s1 or (e1 == s2 and s2 == buf.start and in_place)
               for s1, e1 in host.spans for s2, e2 in buf.spans)


def plan_reuse(func: Function) -> dict[int, Var]:
    """alloc base id -> the base it is merged into."""
    kept: list[_Buffer] = []
    merged: dict[int, Var] = {}
    for buf in sorted(_buffers(func), key=lambda b: b.start):
        host = next((k for k in kept if _fits(k, buf)), None)
        if host is None:
            kept.append(buf)
            continue
        host.spans.extend(buf.spans)
        host.stages |= buf.stages
        host.loaded |= buf.loaded
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

        def host(mr: MemRef) -> MemRef | None:
            base = merged.get(id(mr.base))
            return MemRef(base, mr.offset, mr.size) if base is not None else None

        return drop_unused_allocs(rebase(func, host))
