"""Loads addressed by tensor reads in a loop that carries a tile gather their blocks through GM first.

ptoas 0.1.1 has no scalar load from GM, and a loop that carries a tile (``pl.matmul_acc`` onto an
accumulator, say) cannot run as one kernel task per iteration. When the values it reads only address
loads (``row = pl.read(block_table, i) * bs``; ``pl.load(cache, [row, 0], [bs, d])``), the program
is rewritten as a gather: for each such load, a new kernel copies block ``i`` of the loaded tensor
into row block ``i`` of a GM scratch tensor (``[n * bs, d]``, created by the orchestration just
before the call), and the loop loads ``[i * bs, 0]`` of the scratch instead. The gather kernel is a
loop over the tensor it stores into, so :mod:`._read_loops` then runs it as one task per iteration
with the reads done in the orchestration; the runtime orders the kernel after it through the
scratch. ``n`` bounds the loop variable: the loop's constant stop, or the length of a 1-D tensor it
reads at exactly the loop variable. Anything else keeps the located read error.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from pypto.ir.enums import MemorySpace, ParamDirection
from pypto.ir.expr import BinaryExpr, BinOp, Call, ConstInt, Expr, IterArg, MakeTuple, Var, as_int
from pypto.ir.function import Function, Program
from pypto.ir.ops.registry import make_call
from pypto.ir.stmt import AssignStmt, ForStmt, ReturnStmt, Stmt, YieldStmt, flatten, seq
from pypto.ir.types import TensorType
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

_CHUNK_BYTES = 64 * 1024  # one gather copy's Vec tile at most (rows are split above this)


@dataclass(frozen=True)
class _Gather:
    """One load of a loop that becomes a load of a gathered GM scratch tensor."""

    load: AssignStmt  # t = pl.load(src, offsets, shape, ...) in the loop body
    kernel: Function  # the gather kernel: params ``sources``, then the scratch
    sources: tuple[Var, ...]  # the parameters of the original kernel it takes
    param: Var  # the scratch as a new parameter of the rewritten kernel


def _reads(addr: dict[Var, AssignStmt]) -> list[AssignStmt]:
    return [s for s in addr.values() if is_read(s.value)]


def _slots(loop: ForStmt, reads: list[AssignStmt]) -> int | None:
    """A static bound on the loop variable (it indexes the scratch's row blocks), or None."""
    start, stop, step = (as_int(e) for e in (loop.start, loop.stop, loop.step))
    if start is not None and stop is not None and step is not None and start >= 0 and step > 0:
        return stop
    for s in reads:
        t, idx = s.value.args[0], s.value.args[1]
        idx = idx.elements[0] if isinstance(idx, MakeTuple) and len(idx.elements) == 1 else idx
        if idx is loop.loop_var and isinstance(t.type, TensorType) and t.type.rank == 1:
            n = as_int(t.type.shape[0])
            if n is not None:
                return n
    return None


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


def _gatherable(s: Stmt, dependent: set[Var], addressable: set[Var], written: set[Var]) -> bool:
    """``t = pl.load(param, offsets, static shape[, valid])`` whose read-dependent values are offsets."""
    v = match(s, "tile.load") if isinstance(s, AssignStmt) else None
    if v is None or not isinstance(v.args[0], Var) or v.args[0] in written:
        return False
    shape = v.args[2]
    if not isinstance(shape, MakeTuple) or any(as_int(d) is None for d in shape.elements):
        return False
    rest = [v.args[0], shape, *v.args[3:]]
    return (all(u in addressable for u in used_vars(v.args[1]))
            and not any(u in dependent for u in used_vars(rest)))


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
    src, offsets, shape = load.args[0], load.args[1].elements, [as_int(d) for d in load.args[2].elements]
    valid = load.args[3] if len(load.args) > 3 else None
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


def _gather_kernel(f: Function, loop: ForStmt, addr: dict[Var, AssignStmt], load: AssignStmt, slots: int,
                   name: str) -> tuple[Function, tuple[Var, ...]]:
    """``for i in <loop's range>: <reads>; scratch[i*rows:...] = src[<offsets>]`` as an InCore kernel."""
    call = call_in(load)
    shape = [as_int(d) for d in call.args[2].elements]
    need = inputs_closure(addr, set(used_vars(call.args[1])))
    stmts = [s for v, s in addr.items() if v in need]
    scratch_t = TensorType((slots * shape[0], *shape[1:]), call.args[0].type.dtype)
    scratch = Var(f"{base_name(call.args[0].name)}_blocks", scratch_t, span=load.span)
    params = [p for p in f.params if p in set(used_vars([*stmts, call, loop.start, loop.stop, loop.step]))]
    it = IterArg(f"{scratch.name}_iter", scratch_t, span=load.span)
    body: list[Stmt] = list(stmts)
    current: Expr = it
    for k, (copy, at) in enumerate(_copies(call, _times(loop.loop_var, shape[0]))):
        tile = Var(f"{scratch.name}_tile_{k}", copy.result_type, span=load.span)
        stored = Var(f"{scratch.name}_{k}", scratch_t, span=load.span)
        body += [AssignStmt(tile, copy, span=load.span),
                 AssignStmt(stored, make_call("tile.store", [tile, at, current], span=load.span), span=load.span)]
        current = stored
    rv = Var(f"{scratch.name}_out", scratch_t, span=load.span)
    body.append(YieldStmt((current,), span=load.span))
    new_loop = ForStmt(loop.loop_var, loop.start, loop.stop, loop.step, seq(body, span=loop.span), (it,), (rv,),
                       loop.kind, {}, inits=(scratch,), span=loop.span)
    g = Function(name, (*params, scratch), (*(ParamDirection.In for _ in params), ParamDirection.Out),
                 (scratch_t,), seq([new_loop, ReturnStmt((rv,), span=f.span)], span=f.span),
                 f.func_type, attrs={}, span=f.span)
    return fresh_vars(g), tuple(params)


def _plan_loop(f: Function, loop: ForStmt, names: set[str]) -> tuple[dict[Var, AssignStmt], list[_Gather]] | None:
    """(the loop's address statements, one gather per read-addressed load), or None (not gatherable)."""
    found = _addressing(f, loop)
    if found is None or not found[1] or not _reads(found[0]):
        return None
    addr, loads = found
    slots = _slots(loop, _reads(addr))
    if slots is None:
        return None
    out = []
    for load in loads:
        name = unique_name(f"{f.name}_gather_{base_name(load.value.args[0].name)}", names)
        kernel, sources = _gather_kernel(f, loop, addr, load, slots, name)
        param = Var(kernel.params[-1].name, kernel.params[-1].var_type, span=load.span)
        out.append(_Gather(load, kernel, sources, param))
    return addr, out


def _rewrite_loop(loop: ForStmt, addr: dict[Var, AssignStmt], gathers: list[_Gather]) -> ForStmt:
    """The loop loading its blocks from the scratch parameters; address statements left unused go."""
    swap = {}
    for g in gathers:
        call = call_in(g.load)
        rows, *rest = (as_int(d) for d in elements(call.args[2]))
        assert rows is not None
        at = MakeTuple((_times(loop.loop_var, rows), *(ConstInt(0) for _ in rest)))
        swap[g.load] = dataclasses.replace(g.load, value=make_call("tile.load", [g.param, at, *call.args[2:]],
                                                                   call.kwargs, span=call.span, attrs=call.attrs))
    body = drop_unused([swap.get(s, s) for s in flatten(loop.body)], lambda s: s.var in addr)
    return dataclasses.replace(loop, body=seq(body, span=loop.body.span))


def _plan(f: Function, names: set[str]) -> tuple[Function, list[_Gather]] | None:
    """``f`` with every top-level tile-carrying read loop rewritten, and its gathers (None: none)."""
    stmts, gathers = [], []
    for s in flatten(f.body):
        plan = _plan_loop(f, s, names) if isinstance(s, ForStmt) and carried_values(s) else None
        if plan is None:
            stmts.append(s)
            continue
        stmts.append(_rewrite_loop(s, *plan))  # type: ignore[arg-type]
        gathers += plan[1]
    if not gathers:
        return None
    return with_scalar_params(f, [g.param for g in gathers], stmts), gathers


def _expand(call: Call, old: Function, gathers: list[_Gather]) -> tuple[list[Stmt], Call]:
    """The call of ``old`` filling its scratch tensors first: create, gather kernel call, per gather."""
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
    return pre, dataclasses.replace(call, args=(*call.args, *filled))


def gather_carried_reads(program: Program) -> Program:
    """Rewrite every orchestrated InCore kernel whose tile-carrying loop reads load addresses."""
    names = {f.name for f in program.functions}
    plans: dict[str, tuple[Function, list[_Gather]]] = {}
    for f in reading_kernels(program):
        plan = _plan(f, names)
        if plan is not None:
            plans[f.name] = plan
    if not plans:
        return program
    olds = {f.name: f for f in program.functions if f.name in plans}
    # each kernel, then its gathers (the order a printed dump reads back in)
    return replace_functions(program, {n: [k, *(g.kernel for g in gs)] for n, (k, gs) in plans.items()},
                             lambda f: f if f.is_incore else expand_calls(
                                 f, olds, lambda c, old: _expand(c, old, plans[old.name][1])))


@dataclass(frozen=True)
class GatherCarriedReads(Pass):
    """A tile-carrying kernel loop whose reads only address loads gets gather kernels (see the module doc);
    first, a kernel's ``pl.array`` becomes scalars (:mod:`._kernel_arrays`), and reads of loaded tiles become
    tensor reads and reads in kernel loops that only scale one-row tiles one-element loads (:mod:`._read_tiles`)."""

    name = "GatherCarriedReads"

    def run(self, program: Program) -> Program:
        program = cut_for_room(scalarize_kernel_arrays(program))
        return gather_carried_reads(reads_as_tiles(cut_tile_reads(program)))
