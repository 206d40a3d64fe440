"""A kernel that reads a scalar of its own tile is cut there into two tasks; scalar work between them moves out.

ptoas 0.1.1 has no scalar read of a tile (its PlanMemory pass refuses ``pto.tgetval``) and no scalar load
from GM. ``x = pl.read(t, idx)`` at the top level of an orchestrated kernel, ``t`` a tensor the kernel
computes (a tile), splits the kernel before that statement: the first task runs the statements before it
and stores every tile the rest uses into a GM scratch tensor (created by the orchestration just before
the call); the second task takes those scratch tensors as inputs, so the read is a read of GM, which the
orchestration does after the first task completed (the runtime waits for a tensor's producer). Scalar
values the second part needs from the first (index arithmetic, windows of parameters) are recomputed
there. The cut is made only when the first part writes no parameter of the kernel.

The second part's top-level scalar work on values known to the orchestration moves out with the read:
reads of tensors it does not write, scalar arithmetic, and loops and ``if``s that only do such work and
carry scalars (``for t in range(n): if pl.read(row, [0, t]) == best: pos = t``). A read of a window of
a parameter (``w = pl.slice(p, ...)``; ``pl.read(w, idx)``) is first read as an element of ``p``; tile
statements at the head of an ``if`` branch that depend only on values before the ``if`` (a
``pl.fillpad`` of a window, say) are computed before it, so that a read of them in the branch cuts too.
The parts are cut again until no such read is left (a read the cut cannot take keeps its located error).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

from pypto.ir.enums import ParamDirection
from pypto.ir.expr import Call, Expr, TupleGetItem, Var
from pypto.ir.function import Function, Program
from pypto.ir.ops.common import SPMD_IDS
from pypto.ir.ops.registry import make_call, written_index
from pypto.ir.stmt import AssignStmt, EvalStmt, ForStmt, IfStmt, ReturnStmt, Stmt, flatten, seq, stmt_value
from pypto.ir.types import ScalarType, TensorType
from pypto.ir.visitor import substitute
from pypto.passes._index import iadd
from pypto.passes._kernel_reads import (
    expand_calls,
    is_read,
    listed_index,
    movable,
    reading_kernels,
    reads_in,
    write_values,
    written_tensors,
)
from pypto.passes._read_tiles import kernel_tile, origins
from pypto.passes._rewrite import (
    call_function,
    clone,
    create_tensor,
    elements,
    emit,
    expand_stmts,
    fresh_vars,
    ints,
    match,
    replace_functions,
    with_scalar_params,
)
from pypto.passes._util import base_name, bound_vars, free_vars, iter_stmts, unique_name, used_vars

_MAX_CUTS = 8  # cuts of one kernel (each one is a further task per call)
_BLOCK_IDS = tuple(f"{ns}.{op}" for ns in ("tensor", "tile") for op in SPMD_IDS)


@dataclass(frozen=True)
class Cut:
    """One cut of a kernel ``before``: ``head`` stores the tiles the rest uses into its scratch parameters;
    ``tail`` (``before``'s params, then one In scratch per tile, then ``extra``) is the rest without the scalar
    work ``moved`` out (which computes ``extra``)."""

    before: Function
    head: Function  # params: ``sources``, then one Out scratch per tile
    sources: tuple[Var, ...]
    tail: Function
    moved: tuple[Stmt, ...]
    extra: tuple[Var, ...]


def _tile_reads(f: Function, s: Stmt) -> list[AssignStmt]:
    """The scalar reads in ``s`` of a tensor ``f`` computes (only-written reads are copies, not reads)."""
    reads = reads_in(s)
    if not reads:  # most statements read nothing: skip the whole-function analyses below
        return []
    params, orig, copied = set(f.params), origins(f), write_values(f.body)
    return [r for r in reads if r.var not in copied and kernel_tile(r.value.args[0], params, orig)]


def _writes(stmts: list[Stmt], targets: set[Var]) -> bool:
    """Whether a statement of ``stmts`` writes into one of ``targets`` (a store-like op's destination)."""
    return any((i := written_index(c)) is not None and c.args[i] in targets
               for s in stmts for t in iter_stmts(s) if (c := match(t)) is not None)


def _recomputable(v: Var, defs: dict[Var, Stmt], params: set[Var], out: dict[Var, Stmt]) -> bool:
    """Whether ``v`` (bound in the head) can be computed again after the cut from parameters: scalar
    arithmetic, reads of parameters and windows of parameters; ``out`` gathers the statements."""
    if v in params or v in out:
        return True
    s = defs.get(v)
    if not isinstance(s, AssignStmt):
        return False
    value = s.value
    view = match(value, ("tensor.slice", "tensor.reshape")) is not None
    scalar = isinstance(s.var.var_type, ScalarType) and (not isinstance(value, Call) or is_read(value))
    if not (view or scalar) or not all(_recomputable(u, defs, params, out) for u in used_vars(value)):
        return False
    out[v] = s
    return True


def _head(f: Function, head: list[Stmt], tiles: list[Var], scratch: list[Var],
          names: set[str]) -> tuple[Function, tuple[Var, ...]]:
    """The first task: ``head``, then each tile stored whole into its Out ``scratch`` parameter."""
    sp = f.span
    stores, outs = [], []
    for t, g in zip(tiles, scratch, strict=True):
        stored = Var(f"{g.name}_out", g.var_type, span=t.span)
        at = ints([0] * len(t.var_type.shape), t.span)
        stores.append(AssignStmt(stored, make_call("tensor.assemble", [g, t, at], span=t.span), span=t.span))
        outs.append(stored)
    used = set(used_vars(head))
    sources = tuple(p for p in f.params if p in used)
    g = Function(unique_name(f"{f.name}_head", names), (*sources, *scratch),
                 (*(ParamDirection.In for _ in sources), *(ParamDirection.Out for _ in scratch)),
                 tuple(x.var_type for x in scratch),
                 seq([*head, *stores, ReturnStmt(tuple(outs), span=sp)], span=f.body.span),
                 f.func_type, attrs=dict(f.attrs), span=sp)
    return fresh_vars(g), sources


def split_at(f: Function, names: set[str], at: int | None = None) -> Cut | None:
    """``f`` cut before its first top-level statement that reads a tile of its own (or before statement
    ``at``, for room: :mod:`._ub_cut`), or None."""
    stmts = flatten(f.body)
    k = at if at is not None else next((i for i, s in enumerate(stmts) if _tile_reads(f, s)), None)
    if not k or k >= len(stmts):
        return None
    head, rest = stmts[:k], stmts[k:]
    params = set(f.params)
    if _writes(head, params):
        return None  # the head writes a parameter
    defs = {v: s for s in head for v in bound_vars(s)}
    crossing = [v for v in dict.fromkeys(u for s in rest for u in free_vars(s)) if v in defs]
    orig = origins(f)
    tiles = [v for v in crossing if isinstance(v.var_type, TensorType) and kernel_tile(v, params, orig)]
    read = {r.value.args[0] for r in _tile_reads(f, stmts[k])} if at is None else set()
    if not read <= set(tiles) or any(t.var_type.static_shape() is None for t in tiles):
        return None  # the tile read is computed after the cut (or has a dynamic shape)
    if _writes(rest, set(tiles)):
        return None  # the rest writes a tile of the head: it would write the scratch it reads
    again: dict[Var, Stmt] = {}
    if not all(_recomputable(v, defs, params, again) for v in crossing if v not in tiles):
        return None
    inputs = [Var(f"{base_name(t.name)}_gm", t.var_type, span=t.span) for t in tiles]
    kept = [s for s in head if any(s is a for a in again.values())]
    body = [substitute(s, dict(zip(tiles, inputs, strict=True))) for s in [*kept, *rest]]
    tail = with_scalar_params(f, inputs, body)
    tail, moved, extra = _outward(_reads_of_windows(tail))
    if at is None and any(r.value.args[0] in inputs for r in reads_in(tail.body)):
        return None  # a read of a stored tile stays in the kernel: the cut would not take it
    head_f, sources = _head(f, head, tiles, inputs, names)
    return Cut(f, head_f, sources, tail, tuple(moved), extra)


def _scalar_block(s: Stmt, written: set[Var]) -> bool:
    """A loop or ``if`` that only reads unwritten tensors, does scalar arithmetic and carries scalars."""
    bound = bound_vars(s) if isinstance(s, ForStmt | IfStmt) else []
    if not bound or not all(isinstance(v.var_type, ScalarType) for v in bound):
        return False
    for t in iter_stmts(s):
        if isinstance(t, ForStmt) and not all(isinstance(a.var_type, ScalarType) for a in t.iter_args):
            return False
        if isinstance(t, AssignStmt) and not movable(t, lambda _: True, written):
            return False
        if isinstance(t, (EvalStmt, ReturnStmt)):
            return False
    return True


def _reads_of_windows(f: Function) -> Function:
    """``pl.read(w, idx)`` with ``w = pl.slice(p, shape, offsets)`` of a parameter -> ``pl.read(p, offsets + idx)``."""
    params = set(f.params)
    windows = {s.var: v for s in flatten(f.body) if isinstance(s, AssignStmt)
               and (v := match(s.value, "tensor.slice")) is not None and v.args[0] in params and len(v.args) == 3}
    swap: dict[int, list[Stmt]] = {}
    for s in iter_stmts(f.body):
        v = s.value if isinstance(s, AssignStmt) else None
        w = windows.get(v.args[0]) if is_read(v) else None
        if w is None or len(elements(w.args[2])) != len(elements(v.args[1])):
            continue
        at = ints([iadd(o, i, v.span) for o, i in zip(elements(w.args[2]), elements(v.args[1]), strict=True)],
                  v.span)
        swap[id(s)] = [dataclasses.replace(s, value=make_call("tensor.read", [w.args[0], at], span=v.span))]
    return f.with_(body=expand_stmts(f.body, lambda s: swap.get(id(s)))) if swap else f


def _lift_branch_tiles(f: Function) -> Function:
    """Tile statements at the head of an ``if`` branch that reads a tile, on values bound before the ``if``,
    computed before it (they write nothing, so computing them on both paths changes no result)."""
    stmts, out = flatten(f.body), []
    for s in stmts:
        lifted: list[Stmt] = []
        new = _lift_if(s, set(free_vars(s)), lifted) if isinstance(s, IfStmt) and _tile_reads(f, s) else s
        out += [*lifted, new if lifted else s]
    return f if len(out) == len(stmts) else f.with_(body=seq(out, span=f.body.span))


def _lift_if(s: IfStmt, before: set[Var], lifted: list[Stmt]) -> IfStmt:
    return dataclasses.replace(s, then_body=_lift(s.then_body, before, lifted),
                               else_body=None if s.else_body is None else _lift(s.else_body, before, lifted))


def _lift(body: Stmt, before: set[Var], lifted: list[Stmt]) -> Stmt:
    """``body`` without its leading tile statements on ``before`` values (and those of nested ``if``s), which
    go to ``lifted``."""
    keep: list[Stmt] = []
    for t in flatten(body):
        v = stmt_value(t)
        pure = (not keep and isinstance(t, AssignStmt) and isinstance(t.var.var_type, TensorType)
                and isinstance(v, Call) and written_index(v) is None
                and all(u in before or any(u is x.var for x in lifted) for u in used_vars(v)))
        if pure:
            lifted.append(t)
            continue
        keep.append(_lift_if(t, before, lifted) if isinstance(t, IfStmt) else t)
    return seq(keep, span=body.span)


def _outward(f: Function) -> tuple[Function, list[Stmt], tuple[Var, ...]]:
    """``f`` without the top-level scalar work the orchestration can do: the reads (and scalar blocks) on
    parameters, what they need and what is computed from them; (kernel, moved statements, values passed)."""
    known, written, copied = set(f.params), written_tensors(f), write_values(f.body)
    params = set(f.params)
    candidates: list[Stmt] = []
    for s in flatten(f.body):
        if not all(u in known for u in free_vars(s)):
            continue
        if _scalar_block(s, written) or (movable(s, known.__contains__, written)
                                         and not (is_read(s.value) and s.var in copied)):
            candidates.append(s)
            known.update(bound_vars(s))
    seeds = {v for s in candidates if _scalar_block(s, written) or is_read(stmt_value(s)) for v in bound_vars(s)}
    need = set(seeds)
    for s in reversed(candidates):  # what the seeds are computed from
        if any(v in need for v in bound_vars(s)):
            need.update(free_vars(s))
    for s in candidates:  # and what is computed from those
        if any(u in need and u not in params for u in free_vars(s)):
            need.update(bound_vars(s))
    moved = [s for s in candidates if any(v in need for v in bound_vars(s))]
    ids = {id(s) for s in moved}
    kept = [s for s in flatten(f.body) if id(s) not in ids]
    bound = {v for s in moved for v in bound_vars(s)}
    extra = tuple(v for v in used_vars(kept) if v in bound)
    return with_scalar_params(f, extra, kept), moved, extra


def _cuts(f: Function, names: set[str]) -> list[Cut]:
    """The cuts that take ``f``'s tile reads apart, in order (each one's tail is the next one's kernel)."""
    cuts: list[Cut] = []
    if not any(_tile_reads(f, s) for s in flatten(f.body)):
        return cuts
    for _ in range(_MAX_CUTS):
        f = _lift_branch_tiles(_reads_of_windows(f))
        cut = split_at(f, names)
        if cut is None:
            break
        cuts.append(cut)
        f = cut.tail
    return cuts


def expand_cuts(call: Call, cuts: list[Cut], keep: list[int]) -> tuple[list[Stmt], Call]:
    """The call as its tasks: per cut, the scratch tensors, the head task, the scalar work moved out; then
    the last part's call with the arguments at ``keep``."""
    pre: list[Stmt] = []
    args: list[Expr] = list(call.args)
    sp = call.span
    for cut in cuts:
        at = dict(zip(cut.before.params, args, strict=True))
        made = [create_tensor(f"{g.name}_buf", g.var_type, sp) for g in cut.head.params[len(cut.sources):]]
        pre += [create for _, create in made]
        bufs = [buf for buf, _ in made]
        head_call = call_function(cut.head, [*(at[p] for p in cut.sources), *bufs], sp)
        res = emit(pre, f"{cut.head.name}_out", head_call, sp)
        filled = [res] if len(bufs) == 1 else [TupleGetItem(res, i, span=sp) for i in range(len(bufs))]
        args = [*args, *filled]
        mapping: dict[Var, Expr] = dict(zip(cut.tail.params, args, strict=False))
        pre += [listed_index(s) for s in clone(list(cut.moved), mapping)]
        args = [*args, *(mapping[v] for v in cut.extra)]
    return pre, dataclasses.replace(call, args=tuple(args[i] for i in keep))


def cut_tile_reads(program: Program) -> Program:
    """Cut every orchestrated kernel at its top-level reads of its own tiles (see the module doc)."""
    return cut_kernels(program, reading_kernels(program), _cuts)


def cut_kernels(program: Program, kernels: list[Function], plan: Callable[[Function, set[str]], list[Cut]]
                ) -> Program:
    """``program`` with each of ``kernels`` that asks for no block id replaced by the tasks ``plan`` cuts
    it into (heads, then the pruned last tail), and every call of it, in the orchestration, by calls of
    those tasks."""
    names = {f.name for f in program.functions}
    plans = {f.name: cuts for f in kernels if not has_block_ids(f) and (cuts := plan(f, names))}
    if not plans:
        return program
    olds = {f.name: f for f in program.functions if f.name in plans}
    lasts = {n: prune_params(cuts[-1].tail, len(olds[n].params)) for n, cuts in plans.items()}
    return replace_functions(program, {n: [*(c.head for c in cuts), lasts[n][0]] for n, cuts in plans.items()},
                             lambda f: f if f.is_incore else expand_calls(
                                 f, olds, lambda c, old: expand_cuts(c, plans[old.name], lasts[old.name][1])))


def has_block_ids(f: Function) -> bool:
    """Whether ``f`` asks which block of a launch it is (its head would run as one task, not a launch)."""
    return any(match(stmt_value(s), _BLOCK_IDS) is not None for s in iter_stmts(f.body))


def prune_params(f: Function, own: int) -> tuple[Function, list[int]]:
    """``f`` without the parameters the cuts added (after its ``own`` ones) that it no longer uses; the
    positions of those it keeps."""
    used = set(used_vars(f.body))
    keep = [i for i, p in enumerate(f.params) if i < own or p in used]
    return f.with_(params=tuple(f.params[i] for i in keep),
                   param_directions=tuple(f.param_directions[i] for i in keep)), keep


__all__ = ["Cut", "cut_kernels", "cut_tile_reads", "expand_cuts", "prune_params", "split_at"]
