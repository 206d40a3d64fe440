"""A kernel whose buffers do not fit the vector memory (UB) is cut into tasks, its tiles crossing through GM.

ptoas 0.1.1's PlanMemory shares bytes only between tiles of one dtype and only when space runs short, so a long
kernel (candidate rows, then the sort of them) can overflow the UB even though few of its tiles are live at once.
The driver counts each generated kernel's UB (:mod:`pypto.codegen.ub_budget`); when ptoas reports the overflow,
for the kernels over capacity it compiles again with :func:`ub_cut_plan` naming their source regions and how many tasks each should become.
Here such a kernel is cut before a top-level statement, as :mod:`._kernel_cut` cuts one at a read of its own
tile: the first task stores the tiles the rest uses into GM scratch tensors, the second loads them. The cut
point balances the bytes of the tiles each part computes (the crossing tiles count on both sides), so the
live set at the cut is small. Without a plan (every first compile) nothing changes.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar

from pypto.ir.expr import Call, Var
from pypto.ir.function import Function, Program
from pypto.ir.stmt import AssignStmt, Stmt, flatten
from pypto.ir.types import TensorType
from pypto.passes._kernel_cut import Cut, apply_cuts, has_block_ids, split_at
from pypto.passes._kernel_reads import kernel_call_sites
from pypto.passes._rewrite import match
from pypto.passes._util import iter_stmts
from pypto.span import Span

RegionKey = tuple[str, int, int]  # a kernel's source region: file, line, column of its span
_PLAN: ContextVar[Mapping[RegionKey, int] | None] = ContextVar("ub_cut_plan", default=None)
_VIEWS = ("tensor.reshape", "tensor.view")


def region_key(span: Span) -> RegionKey:
    """The key of a kernel's source region in a plan (every task cut out of it keeps its span)."""
    return (span.file, span.line, span.col)


@contextmanager
def ub_cut_plan(plan: Mapping[RegionKey, int]) -> Iterator[None]:
    """Within: the kernel of each region in ``plan`` is cut into that many tasks (as far as it can be)."""
    token = _PLAN.set(dict(plan))
    try:
        yield
    finally:
        _PLAN.reset(token)


def _bytes(v: Var) -> int:
    t = v.var_type
    if not isinstance(t, TensorType) or not all(isinstance(d, int) for d in t.shape):
        return 0
    n = 1
    for d in t.shape:
        n *= d
    return n * t.dtype.nbytes


def computed_bytes(stmts: list[Stmt]) -> int:
    """The bytes of the tensors ``stmts`` compute (each value once; views of another tensor are free)."""
    seen: dict[Var, int] = {}
    for s in stmts:
        for t in iter_stmts(s):
            if isinstance(t, AssignStmt) and isinstance(t.value, Call) and match(t.value, _VIEWS) is None:
                seen[t.var] = _bytes(t.var)
    return sum(seen.values())


def _best_cut(f: Function, names: set[str], pieces: int) -> Cut | None:
    """The cut of ``f`` whose first part holds about a ``pieces``-th of its tile bytes, or None."""
    stmts = flatten(f.body)
    best: tuple[int, int] | None = None
    for k in range(1, len(stmts)):
        cut = split_at(f, set(names), at=k)  # a trial: its names are not taken
        if cut is None:
            continue
        crossing = sum(_bytes(p) for p in cut.head.params[len(cut.sources):])
        head = computed_bytes(stmts[:k])
        tail = (computed_bytes(stmts[k:]) + crossing) // max(1, pieces - 1)
        if best is None or max(head, tail) < best[0]:
            best = (max(head, tail), k)
    return None if best is None else split_at(f, names, at=best[1])


def _chain(f: Function, names: set[str], pieces: int) -> list[Cut]:
    cuts: list[Cut] = []
    while pieces > 1:
        cut = _best_cut(f, names, pieces)
        if cut is None:
            break
        cuts.append(cut)
        f, pieces = cut.tail, pieces - 1
    return cuts


def _kernels(program: Program) -> list[Function]:
    """The kernels only orchestration functions call."""
    sites = kernel_call_sites(program)
    return [f for f in program.functions if f.is_incore and sites.get(f.name)
            and not any(c.is_incore for c in sites[f.name])]


def cut_for_room(program: Program) -> Program:
    """Cut the kernels the active :func:`ub_cut_plan` names (see the module doc)."""
    plan = _PLAN.get()
    if not plan:
        return program
    names = {f.name for f in program.functions}
    plans: dict[str, list[Cut]] = {}
    for f in _kernels(program):
        pieces = plan.get(region_key(f.span), 1)
        if pieces > 1 and not has_block_ids(f):
            cuts = _chain(f, names, pieces)
            if cuts:
                plans[f.name] = cuts
    return apply_cuts(program, plans)


__all__ = ["RegionKey", "computed_bytes", "cut_for_room", "region_key", "ub_cut_plan"]
