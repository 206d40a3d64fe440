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

from pypto.ir.expr import Var
from pypto.ir.function import Function, Program
from pypto.ir.stmt import Stmt, flatten
from pypto.ir.types import TensorType
from pypto.passes._kernel_cut import Cut, cut_kernels, split_at
from pypto.passes._kernel_reads import kernel_call_sites
from pypto.passes._rewrite import assign_of, match
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
    return (v.var_type.nbytes() or 0) if isinstance(v.var_type, TensorType) else 0


def computed_bytes(stmts: list[Stmt]) -> int:
    """The bytes of the tensors ``stmts`` compute (each value once; views of another tensor are free)."""
    seen = {t.var: _bytes(t.var) for s in stmts for t in iter_stmts(s)
            if assign_of(t) is not None and match(t, _VIEWS) is None}
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
    """``f`` cut into ``pieces`` tasks, as far as it can be."""
    cuts: list[Cut] = []
    while pieces > 1:
        cut = _best_cut(f, names, pieces)
        if cut is None:
            break
        cuts.append(cut)
        f, pieces = cut.tail, pieces - 1
    return cuts


def cut_for_room(program: Program) -> Program:
    """Cut the kernels the active :func:`ub_cut_plan` names (see the module doc)."""
    plan = _PLAN.get()
    if not plan:
        return program
    sites = kernel_call_sites(program)  # kernels only orchestration functions call
    kernels = [f for f in program.functions if f.is_incore and sites.get(f.name)
               and not any(c.is_incore for c in sites[f.name]) and plan.get(region_key(f.span), 1) > 1]
    return cut_kernels(program, kernels, lambda f, names: _chain(f, names, plan[region_key(f.span)]))


__all__ = ["RegionKey", "computed_bytes", "cut_for_room", "region_key", "ub_cut_plan"]
