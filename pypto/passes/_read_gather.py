"""Loads addressed by tensor reads in a loop that carries a tile gather their blocks through GM first.

ptoas 0.1.1 has no scalar load from GM, and a loop that carries a tile (``pl.matmul_acc`` onto an
accumulator, say, or a tensor of a ``pl.at`` region) cannot run as one kernel task per iteration. When
the values it reads only address loads (``row = pl.read(block_table, i) * bs``;
``pl.load(cache, [row, 0], [bs, d])``, or the window ``cache[row:row + bs, 0:d]`` in a region), the
program is rewritten as a gather: for each such load, a new kernel copies block ``i`` of the loaded
tensor into row block ``i`` of a GM scratch tensor (``[n * bs, d]``, created by the orchestration
before the call), and the loop loads ``[i * bs, 0]`` of the scratch instead. The gather kernel is a
loop over the tensor it stores into, so :mod:`._read_loops` then runs it as one task per iteration
with the reads done in the orchestration; the runtime orders the kernel after it through the
scratch. ``n`` bounds the loop variable: the loop's constant stop, the length of a 1-D tensor it
reads at exactly the loop variable, or, for a stop passed as a parameter, the static bound every call
site gives it (``n = pl.min(2048, pl.read(lens, [b]))``; :mod:`._gather_sites`). A stop with no bound
is a located error naming that rewrite. With such a run-time stop, one gather task copies several
iterations' blocks (as many as its scalars hold, each address read by the orchestration; the reads past
the stop re-read the last iteration, and their copies fill slots the loop never loads). The gathers
then move in front of every orchestration loop that does not change their arguments (a head loop
around a kernel whose rows depend on the batch row only gathers them once per batch row).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass

from pypto.errors import UnsupportedFeatureError
from pypto.ir.dtypes import DataType
from pypto.ir.enums import MemorySpace, ParamDirection
from pypto.ir.expr import (
    BinaryExpr,
    BinOp,
    Call,
    ConstInt,
    Expr,
    IterArg,
    MakeTuple,
    UnaryExpr,
    UnOp,
    Var,
    as_int,
)
from pypto.ir.function import Function, Program
from pypto.ir.ops.registry import make_call
from pypto.ir.stmt import AssignStmt, ForStmt, ReturnStmt, Stmt, YieldStmt, flatten, seq
from pypto.ir.types import ScalarType, TensorType
from pypto.ir.visitor import substitute
from pypto.passes._gather_sites import call_site_bounds, hoist_out_of_loops
from pypto.passes._kernel_arrays import scalarize_kernel_arrays
from pypto.passes._kernel_cut import cut_tile_reads
from pypto.passes._kernel_reads import (
    address_statements,
    carried_values,
    expand_calls,
    inputs_closure,
    is_read,
    reading_kernels,
    reads_in,
    users_closure,
    written_tensors,
)
from pypto.passes._read_tiles import reads_as_tiles
from pypto.passes._rewrite import (
    call_function,
    call_in,
    clone,
    create_tensor,
    drop_unused,
    elements,
    fresh_vars,
    ints,
    match,
    replace_functions,
    with_scalar_params,
)
from pypto.passes._ub_cut import cut_for_room
from pypto.passes._util import base_name, scalar_dtype, unique_name, used_vars
from pypto.passes.base import Pass
from pypto.span import Span
from pypto.toolchain.platforms import TASK_MAX_SCALARS

_CHUNK_BYTES = 64 * 1024  # one gather copy's Vec tile at most (rows are split above this)
_MAX_BATCH = 16  # rows one gather task copies at most (a task's scalars bound it first)


@dataclass(frozen=True)
class _Gather:
    """One load of a loop that becomes a load of a gathered GM scratch tensor."""

    load: AssignStmt  # t = pl.load(src, offsets, shape, ...) in the loop body
    kernel: Function  # the gather kernel: params ``sources``, then the scratch
    sources: tuple[Var, ...]  # the parameters of the original kernel it takes
    param: Var  # the scratch as a new parameter of the rewritten kernel


def _reads(addr: dict[Var, AssignStmt]) -> list[AssignStmt]:
    return [s for s in addr.values() if is_read(s.value)]


def _slots(loop: ForStmt, reads: list[AssignStmt], bounds: Mapping[Var, int]) -> tuple[int, bool] | None:
    """A static bound on the loop variable (it indexes the scratch's row blocks), or None: the loop's
    constant stop, the length of a 1-D tensor it reads at exactly the loop variable, or the bound every
    call site puts on a parameter stop (``bounds``; the flag says it is that one)."""
    start, stop, step = (as_int(e) for e in (loop.start, loop.stop, loop.step))
    if start is None or step is None or start < 0 or step <= 0:
        return None
    if stop is not None:
        return stop, False
    for s in reads:
        t, idx = s.value.args[0], s.value.args[1]
        idx = idx.elements[0] if isinstance(idx, MakeTuple) and len(idx.elements) == 1 else idx
        if idx is loop.loop_var and isinstance(t.type, TensorType) and t.type.rank == 1:
            n = as_int(t.type.shape[0])
            if n is not None:
                return n, False
    bound = bounds.get(loop.stop) if isinstance(loop.stop, Var) else None
    return None if bound is None else (bound, True)


def _addressing(f: Function, loop: ForStmt) -> tuple[dict[Var, AssignStmt], list[AssignStmt]] | None:
    """(the read-dependent scalar statements, the loads they address), or None when the loop's reads
    are used for anything but load offsets (or sit below its top level)."""
    body = flatten(loop.body)
    if any(reads_in(s) for s in body if not isinstance(s, AssignStmt)):
        return None
    written, known = written_tensors(f), {*f.params, loop.loop_var}
    scalar = address_statements(body, known, written)  # address arithmetic: reads and scalar statements
    dependent = users_closure(scalar, {s.var for s in _reads(scalar)})
    loads: list[AssignStmt] = []
    for s in body:
        if isinstance(s, AssignStmt) and s.var in scalar:
            continue
        if not any(u in dependent for u in used_vars(s)):
            continue
        if not _gatherable(s, dependent, known | set(scalar), written):
            return None
        loads.append(s)
    return scalar, loads


def _window(v: Call) -> tuple[Expr, MakeTuple, MakeTuple, Expr | None]:
    """(source, offsets, shape, valid shape or None) of a ``tile.load`` or a ``tensor.slice``."""
    if v.op == "tile.load":
        src, off, shape, *rest = v.args
    else:
        src, shape, off, *rest = v.args
    return src, off, shape, (rest[0] if rest else None)  # type: ignore[return-value]


def _gatherable(s: Stmt, dependent: set[Var], addressable: set[Var], written: set[Var]) -> bool:
    """``t = pl.load(param, offsets, static shape[, valid])`` (or the ``tensor.slice`` of a ``pl.at`` region)
    whose read-dependent values are offsets."""
    v = match(s, ("tile.load", "tensor.slice")) if isinstance(s, AssignStmt) else None
    if v is None:
        return False
    src, offsets, shape, valid = _window(v)
    if not isinstance(src, Var) or src in written or not isinstance(offsets, MakeTuple):
        return False
    if not isinstance(shape, MakeTuple) or any(as_int(d) is None for d in shape.elements):
        return False
    rest = [src, shape, valid, *v.args[4:]]
    return (all(u in addressable for u in used_vars(offsets))
            and not any(u in dependent for u in used_vars(rest)))


def _unbounded(f: Function, loop: ForStmt, read: AssignStmt) -> UnsupportedFeatureError:
    """The located refusal of a gatherable loop whose stop has no static bound (the scratch has no size)."""
    carried = base_name(loop.iter_args[0].name) if loop.iter_args else "a value"
    stop = base_name(loop.stop.name) if isinstance(loop.stop, Var) else "its stop"
    err = UnsupportedFeatureError(
        f"scalar read of a tensor inside a loop of kernel '{f.name}' that carries '{carried}' from one iteration "
        f"to the next: ptoas 0.1.1 has no scalar load from GM (the ptoas release upstream PyPTO targets has "
        f"one), and pypto gathers the rows such reads address into a GM scratch before the kernel, sized by a "
        f"static bound on the loop; '{stop}' has none at the kernel's call sites", read.span,
        hint=f"bound the stop where the orchestration computes it, e.g. {stop} = pl.min(<most iterations>, "
             f"{stop}), or give the loop a constant stop")
    err.construct = "pl.read in a tile-carrying loop"  # type: ignore[attr-defined]
    return err


def _row_chunks(rows: int, row_bytes: int) -> list[tuple[int, int]]:
    step = max(1, _CHUNK_BYTES // max(1, row_bytes))
    return [(r, min(step, rows - r)) for r in range(0, rows, step)]


def _plus(e: Expr, k: int) -> Expr:
    if k == 0:
        return e
    dtype = scalar_dtype(e)
    return BinaryExpr(BinOp.Add, e, ConstInt(k, dtype), dtype, span=e.span)


def _times(i: Var, rows: int) -> Expr:
    dtype = scalar_dtype(i)
    return BinaryExpr(BinOp.Mul, i, ConstInt(rows, dtype), dtype, span=i.span)


def _copies(load: Call, slot_row: Expr) -> list[tuple[Call, Expr]]:
    """(load, store offsets) pairs copying ``load``'s block to row ``slot_row`` of the scratch in Vec
    tiles of at most ``_CHUNK_BYTES`` (row chunks; a load with a smaller valid region is one copy)."""
    src, off, dims, valid = _window(load)
    offsets, shape = off.elements, [as_int(d) for d in dims.elements]
    row_bytes = src.type.dtype.nbytes
    for d in shape[1:]:
        row_bytes *= d
    whole = valid is None or [as_int(d) for d in valid.elements] == shape
    chunks = _row_chunks(shape[0], row_bytes) if whole else [(0, shape[0])]
    out = []
    for r0, rows in chunks:
        part = [rows, *shape[1:]]
        args = [src, MakeTuple((_plus(offsets[0], r0), *offsets[1:])), ints(part)]
        args += [ints(part)] if whole else [valid]
        call = make_call("tile.load", args, {"target_memory": MemorySpace.Vec}, span=load.span)
        out.append((call, MakeTuple((_plus(slot_row, r0), *(ConstInt(0) for _ in shape[1:])))))
    return out


def _batch(f: Function, loop: ForStmt, stmts: list[AssignStmt], call: Call, slots: int, bound_from_sites: bool) -> int:
    """Rows (loop iterations) one gather task copies: 1, or for a run-time stop bounded at the call sites,
    as many as a task's scalars hold (the orchestration reads each row's address) and ``_CHUNK_BYTES`` of
    copies fit (the copies of a task run one after another through one Vec buffer size)."""
    step, start = as_int(loop.step), as_int(loop.start)
    if not bound_from_sites or step != 1 or start is None:
        return 1
    src, offsets, dims, _ = _window(call)
    per_row = len({u for u in used_vars(offsets) if any(u is s.var for s in stmts)}) or 1
    fixed = sum(isinstance(p.var_type, ScalarType) and p in set(used_vars([*stmts, call, loop.stop]))
                for p in f.params)
    block = src.type.dtype.nbytes * math.prod(as_int(d) or 1 for d in dims.elements)
    room = (TASK_MAX_SCALARS - fixed - 1) // per_row
    return max(1, min(_MAX_BATCH, room, _CHUNK_BYTES // max(1, block), slots - start))


def _index_expr(e: Expr, dtype: DataType) -> Expr:
    return e if scalar_dtype(e) == dtype else UnaryExpr(UnOp.Cast, e, dtype, span=e.span)


def _copy_stores(call: Call, at_row: Expr, current: Expr, scratch: Var, tag: str, sp: Span) -> tuple[list[Stmt], Expr]:
    body: list[Stmt] = []
    for k, (copy, at) in enumerate(_copies(call, at_row)):
        tile = Var(f"{scratch.name}_tile_{tag}{k}", copy.result_type, span=sp)
        stored = Var(f"{scratch.name}_{tag}{k}", scratch.var_type, span=sp)
        body += [AssignStmt(tile, copy, span=sp),
                 AssignStmt(stored, make_call("tile.store", [tile, at, current], span=sp), span=sp)]
        current = stored
    return body, current


def _batched(loop: ForStmt, stmts: list[AssignStmt], call: Call, rows: int, n: int, it: IterArg,
             scratch: Var) -> tuple[ForStmt, list[Stmt], Expr]:
    """``for c in range(ceil((stop - start) / n))``: rows ``start + c*n + j`` (j < n), each read at that
    iteration clamped to the last one (the copies past the stop fill slots the loop never loads)."""
    sp, dt = loop.span, scalar_dtype(loop.loop_var)
    start, stop = as_int(loop.start), _index_expr(loop.stop, dt)
    assert start is not None
    c = Var(f"{base_name(loop.loop_var.name)}_batch", ScalarType(dt), span=sp)
    chunks = BinaryExpr(BinOp.FloorDiv, _plus(BinaryExpr(BinOp.Sub, stop, ConstInt(start, dt), dt, span=sp), n - 1),
                        ConstInt(n, dt), dt, span=sp)
    last = BinaryExpr(BinOp.Sub, stop, ConstInt(1, dt), dt, span=sp)
    body: list[Stmt] = []
    current: Expr = it
    for j in range(n):
        i = _plus(_times(c, n), start + j)
        at = Var(f"{base_name(loop.loop_var.name)}_{j}", ScalarType(dt), span=sp)
        mapping: dict[Var, Expr] = {loop.loop_var: at}
        body += [AssignStmt(at, BinaryExpr(BinOp.Min, i, last, dt, span=sp), span=sp), *clone(list(stmts), mapping)]
        copies, current = _copy_stores(substitute(call, mapping), BinaryExpr(BinOp.Mul, i, ConstInt(rows, dt), dt, span=sp),
                                       current, scratch, f"{j}_", sp)
        body += copies
    header = dataclasses.replace(loop, loop_var=c, start=ConstInt(0, dt), stop=chunks, step=ConstInt(1, dt))
    return header, body, current


def _gather_kernel(f: Function, loop: ForStmt, addr: dict[Var, AssignStmt], load: AssignStmt, slots: int,
                   bound_from_sites: bool, name: str) -> tuple[Function, tuple[Var, ...]]:
    """``for i in <loop's range>: <reads>; scratch[i*rows:...] = src[<offsets>]`` as an InCore kernel (a task
    per :func:`_batch` iterations)."""
    call = call_in(load)
    src, offsets, dims, _ = _window(call)
    shape = [as_int(d) for d in dims.elements]
    need = inputs_closure(addr, set(used_vars(offsets)))
    stmts = [s for v, s in addr.items() if v in need]
    n = _batch(f, loop, stmts, call, slots, bound_from_sites)
    start = as_int(loop.start) or 0
    slots = slots if n == 1 else start + -(-(slots - start) // n) * n
    scratch_t = TensorType((slots * shape[0], *shape[1:]), src.type.dtype)
    scratch = Var(f"{base_name(src.name)}_blocks", scratch_t, span=load.span)
    params = [p for p in f.params if p in set(used_vars([*stmts, call, loop.start, loop.stop, loop.step]))]
    it = IterArg(f"{scratch.name}_iter", scratch_t, span=load.span)
    if n == 1:
        header = loop
        body, current = _copy_stores(call, _times(loop.loop_var, shape[0]), it, scratch, "", load.span)
        body = [*stmts, *body]
    else:
        header, body, current = _batched(loop, stmts, call, shape[0], n, it, scratch)
    rv = Var(f"{scratch.name}_out", scratch_t, span=load.span)
    body.append(YieldStmt((current,), span=load.span))
    new_loop = ForStmt(header.loop_var, header.start, header.stop, header.step, seq(body, span=loop.span), (it,),
                       (rv,), loop.kind, {}, inits=(scratch,), span=loop.span)
    g = Function(name, (*params, scratch), (*(ParamDirection.In for _ in params), ParamDirection.Out),
                 (scratch_t,), seq([new_loop, ReturnStmt((rv,), span=f.span)], span=f.span),
                 f.func_type, attrs={}, span=f.span)
    return fresh_vars(g), tuple(params)


def _plan_loop(f: Function, loop: ForStmt, names: set[str],
               bounds: Mapping[Var, int]) -> tuple[dict[Var, AssignStmt], list[_Gather]] | None:
    """(the loop's address statements, one gather per read-addressed load), or None (not gatherable)."""
    found = _addressing(f, loop)
    if found is None or not found[1] or not _reads(found[0]):
        return None
    addr, loads = found
    found_slots = _slots(loop, _reads(addr), bounds)
    if found_slots is None:
        raise _unbounded(f, loop, _reads(addr)[0])
    out = []
    for load in loads:
        name = unique_name(f"{f.name}_gather_{base_name(_window(call_in(load))[0].name)}", names)
        kernel, sources = _gather_kernel(f, loop, addr, load, *found_slots, name)
        param = Var(kernel.params[-1].name, kernel.params[-1].var_type, span=load.span)
        out.append(_Gather(load, kernel, sources, param))
    return addr, out


def _rewrite_loop(loop: ForStmt, addr: dict[Var, AssignStmt], gathers: list[_Gather]) -> ForStmt:
    """The loop loading its blocks from the scratch parameters; address statements left unused go."""
    swap = {}
    for g in gathers:
        call = call_in(g.load)
        _, _, dims, _ = _window(call)
        rows, *rest = (as_int(d) for d in elements(dims))
        assert rows is not None
        at = MakeTuple((_times(loop.loop_var, rows), *(ConstInt(0) for _ in rest)))
        args = [g.param, at, *call.args[2:]] if call.op == "tile.load" else [g.param, dims, at, *call.args[3:]]
        swap[g.load] = dataclasses.replace(g.load, value=make_call(call.op, args, call.kwargs, span=call.span,
                                                                   attrs=call.attrs))
    body = drop_unused([swap.get(s, s) for s in flatten(loop.body)], lambda s: s.var in addr)
    return dataclasses.replace(loop, body=seq(body, span=loop.body.span))


def _carries(f: Function, loop: ForStmt) -> bool:
    """``loop`` carries a tile or scalar, or a tensor of a ``pl.at`` region that is not a parameter (one
    that becomes a tile): it cannot run as one task per iteration."""
    return bool(carried_values(loop)) or any(e not in f.params for e in loop.inits)


def _plan(f: Function, names: set[str], bounds: Mapping[Var, int]) -> tuple[Function, list[_Gather]] | None:
    """``f`` with every top-level tile-carrying read loop rewritten, and its gathers (None: none)."""
    stmts, gathers = [], []
    for s in flatten(f.body):
        plan = _plan_loop(f, s, names, bounds) if isinstance(s, ForStmt) and _carries(f, s) else None
        if plan is None:
            stmts.append(s)
            continue
        stmts.append(_rewrite_loop(s, *plan))  # type: ignore[arg-type]
        gathers += plan[1]
    if not gathers:
        return None
    return with_scalar_params(f, [g.param for g in gathers], stmts), gathers


def _expand(call: Call, old: Function, gathers: list[_Gather], fills: dict[Var, Var]) -> tuple[list[Stmt], Call]:
    """The call of ``old`` filling its scratch tensors first: create, gather kernel call, per gather
    (``fills`` maps each gather's result to its buffer)."""
    args = dict(zip(old.params, call.args, strict=True))
    pre: list[Stmt] = []
    filled = []
    for g in gathers:
        t = g.param.var_type
        assert isinstance(t, TensorType)
        buf, create = create_tensor(f"{g.param.name}_buf", t, call.span)
        out = Var(g.param.name, t, span=call.span)
        fill = call_function(g.kernel, [*(args[p] for p in g.sources), buf], call.span)
        pre += [create, AssignStmt(out, fill, span=call.span)]
        filled.append(out)
        fills[out] = buf
    return pre, dataclasses.replace(call, args=(*call.args, *filled))


def gather_carried_reads(program: Program) -> Program:
    """Rewrite every orchestrated InCore kernel whose tile-carrying loop reads load addresses."""
    names = {f.name for f in program.functions}
    plans: dict[str, tuple[Function, list[_Gather]]] = {}
    for f in reading_kernels(program):
        plan = _plan(f, names, call_site_bounds(program, f))
        if plan is not None:
            plans[f.name] = plan
    if not plans:
        return program
    olds = {f.name: f for f in program.functions if f.name in plans}
    fills: dict[Var, Var] = {}

    def site(f: Function) -> Function:
        if f.is_incore:
            return f
        f = expand_calls(f, olds, lambda c, old: _expand(c, old, plans[old.name][1], fills))
        return hoist_out_of_loops(f, fills)

    # each kernel, then its gathers (the order a printed dump reads back in)
    return replace_functions(program, {n: [k, *(g.kernel for g in gs)] for n, (k, gs) in plans.items()}, site)


@dataclass(frozen=True)
class GatherCarriedReads(Pass):
    """A tile-carrying kernel loop whose reads only address loads gets gather kernels (see the module doc);
    first, a kernel's ``pl.array`` becomes scalars (:mod:`._kernel_arrays`), and reads of loaded tiles become
    tensor reads and reads in kernel loops that only scale one-row tiles one-element loads (:mod:`._read_tiles`)."""

    name = "GatherCarriedReads"

    def run(self, program: Program) -> Program:
        program = cut_for_room(scalarize_kernel_arrays(program))
        return gather_carried_reads(reads_as_tiles(cut_tile_reads(program)))
