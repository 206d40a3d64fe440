"""Kernel loops that read tensor scalars become orchestration loops (one kernel task per iteration).

ptoas 0.1.1 has no scalar load from GM. In an InCore function whose body is one loop over tensors it
stores into (no tile or scalar carried from one iteration to the next), the reads at the top of the
loop body, or under an ``if`` there, and the scalar arithmetic they need move out with the loop: the
orchestration runs the loop (a guarded read under the same ``if``, 0 on the other side) and calls the
kernel once per iteration with the loop variable and the values as scalar arguments; the kernel keeps
the rest of the body. An SPMD kernel's stride loop ``for b in pl.range(block_idx, n, block_num)``
visits every ``b`` once over all blocks, so it becomes ``range(n)`` of single-block tasks; so does
``pl.range(block_idx, n, S)`` with a constant stride ``S`` when every call launches ``S`` blocks. The runtime
orders the tasks through the tensors they write (DeriveCallDirections passes them as ``inout`` inside
a sequential loop). A loop that carries a tile cannot run as separate tasks: when its reads only address
loads, :mod:`._read_gather` has already rewritten it into a gather kernel of this kind; any other read
there is a located error. A loop whose body computes an integer ``//`` or ``%`` that UnrollLoops could not
rewrite (``node = (b + shift) % n``, ``shift`` a kernel parameter) moves out the same way: 0.1.1 lowers only
integer ``+``, ``-``, ``*``, ``min``/``max`` and comparisons in a kernel.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from pypto.errors import UnsupportedFeatureError
from pypto.ir.enums import ForKind
from pypto.ir.expr import (
    BinaryExpr,
    BinOp,
    Call,
    ConstInt,
    Expr,
    GlobalVar,
    MakeTuple,
    TupleGetItem,
    UnaryExpr,
    Var,
    as_int,
)
from pypto.ir.function import Function, Program
from pypto.ir.stmt import (
    AssignStmt,
    ForStmt,
    IfStmt,
    ReturnStmt,
    Stmt,
    YieldStmt,
    flatten,
    initial_values,
    seq,
    stmt_value,
)
from pypto.ir.types import ScalarType
from pypto.ir.visitor import substitute
from pypto.passes._kernel_reads import carried_values, listed_index, movable, reads_in
from pypto.passes._rewrite import (
    LAUNCH_ATTRS,
    assign_of,
    clone,
    program_call,
    replace_functions,
    splice_calls,
    with_scalar_params,
)
from pypto.passes._scalar_kernels import inline_scalar_kernels
from pypto.passes._util import base_name, bound_vars, iter_stmts, map_blocks, scalar_dtype, used_vars
from pypto.passes.base import Pass

_BLOCK_IDS = tuple(f"{ns}.{op}" for ns in ("tile", "tensor") for op in ("get_block_idx", "get_block_num"))


@dataclass(frozen=True)
class _Plan:
    """How one kernel was split: its loop, the statements that moved out and the new parameters."""

    loop: ForStmt
    hoisted: tuple[Stmt, ...]
    extra: tuple[Var, ...]  # loop var, then the moved scalars the kernel still uses
    returns: tuple[Expr, ...]  # the original return values (loop return vars or params)
    arg_of: dict[Var, Var]  # kernel scalar parameter -> the hoisted value passed for it
    spmd: bool  # the loop strode over the blocks of an SPMD launch
    stride: int | None = None  # its constant step: every call must launch that many blocks


class _Splitter:
    """Splits a loop body into the scalar work the orchestration can do and the kernel's rest."""

    def __init__(self, known: set[Var], written: set[Expr]):
        self.known, self.written = known, written
        self.moved: set[Var] = set()
        self.arg_of: dict[Var, Var] = {}  # kernel parameter -> the hoisted value passed for it

    def ready(self, e: object) -> bool:
        return all(u in self.known or u in self.moved for u in used_vars(e))

    def split(self, stmts: list[Stmt]) -> tuple[list[Stmt], list[Stmt]]:
        hoisted: list[Stmt] = []
        kept: list[Stmt] = []
        for s in stmts:
            if isinstance(s, IfStmt) and reads_in(s) and self.ready(s.cond):
                h, k = self._branch(s)
                hoisted += h
                kept.append(k)
                continue
            if movable(s, lambda u: u in self.known or u in self.moved, self.written):
                hoisted.append(s)
                self.moved.add(s.var)
                self.arg_of[s.var] = s.var
            else:
                kept.append(s)
        return hoisted, kept

    def _branch(self, s: IfStmt) -> tuple[list[Stmt], Stmt]:
        """A guarded read: the orchestration runs the same ``if`` and passes zeros on the other side."""
        then_h, then_k = self.split(flatten(s.then_body))
        else_h, else_k = self.split(flatten(s.else_body)) if s.else_body is not None else ([], [])
        kept = dataclasses.replace(s, then_body=seq(then_k, span=s.then_body.span),
                                   else_body=seq(else_k, span=s.span) if s.else_body is not None else None)
        outs = [v for h in then_h + else_h for v in bound_vars(h)]
        if not outs or any(not isinstance(v.var_type, ScalarType) or not v.var_type.dtype.is_int for v in outs):
            return [], s
        rvs = tuple(Var(v.name, v.var_type, span=v.span) for v in outs)
        branches = []
        for h in (then_h, else_h):
            mine = {v for x in h for v in bound_vars(x)}
            vals = tuple(v if v in mine else ConstInt(0, v.var_type.dtype) for v in outs)  # type: ignore[attr-defined]
            branches.append(seq([*h, YieldStmt(vals, span=s.span)], span=s.span))
        remap = dict(zip(outs, rvs, strict=True))
        self.arg_of = {p: remap.get(a, a) for p, a in self.arg_of.items()}
        return [IfStmt(s.cond, branches[0], branches[1], rvs, span=s.span)], kept


def _split_body(f: Function, loop: ForStmt) -> tuple[list[Stmt], list[Stmt], dict[Var, Var]] | None:
    """(hoisted, kept, arg_of) for the loop body, or None when a read must stay in the kernel."""
    sp = _Splitter(set(f.params) | {loop.loop_var}, set(loop.inits))
    hoisted, kept = sp.split(flatten(loop.body))
    if any(reads_in(s) for s in kept):
        return None
    return hoisted, kept, sp.arg_of


_DIVISIONS = frozenset({BinOp.FloorDiv, BinOp.FloorMod})


def _divides(e: object) -> bool:
    if isinstance(e, BinaryExpr):
        return (e.op in _DIVISIONS and e.dtype.is_int) or _divides(e.lhs) or _divides(e.rhs)
    if isinstance(e, UnaryExpr):
        return _divides(e.operand)
    if isinstance(e, Call):
        return any(_divides(a) for a in e.args)
    return isinstance(e, MakeTuple) and any(_divides(x) for x in e.elements)


def _integer_divisions(body: Stmt | list[Stmt]) -> bool:
    """Whether ``body`` computes an integer ``//`` or ``%``: UnrollLoops has rewritten those of loop indices
    it can, and ptoas 0.1.1 lowers no other in a kernel, so they move out with the loop, like the reads."""
    stmts = [body] if isinstance(body, Stmt) else body
    return any(isinstance(t, AssignStmt) and _divides(t.value) for s in stmts for t in iter_stmts(s))


def _check_carries(f: Function) -> None:
    """A kernel loop that reads tensor scalars and carries a tile or scalar cannot be split into tasks."""
    for loop in iter_stmts(f.body):
        if not isinstance(loop, ForStmt) or not reads_in(loop.body):
            continue
        carried = carried_values(loop)
        if not carried:
            continue
        raise UnsupportedFeatureError(
            f"scalar read of a tensor inside a loop of kernel '{f.name}' that carries "
            f"'{base_name(carried[0].name)}' from one iteration to the next: ptoas 0.1.1 has no scalar load "
            "from GM, and pypto can move such a loop into the orchestration (one kernel task per iteration) "
            "only when it carries nothing but the tensors it stores into", reads_in(loop.body)[0].span,
            hint="carry the value through a tensor instead (store it at the end of an iteration, load it at "
                 "the start of the next), or do the reads in the orchestration and pass pl.Scalar arguments")


def _plan(f: Function, blocks: int | None) -> _Plan | None:
    """``blocks``: the constant block count every SPMD launch of ``f`` asks for (None: not known)."""
    _check_carries(f)
    stmts = flatten(f.body)
    ids = {m[0]: m[1].op for s in stmts if (m := assign_of(s, ("tile.get_block_idx", "tile.get_block_num")))}
    rest = [s for s in stmts if not (isinstance(s, AssignStmt) and s.var in ids)]
    if len(rest) != 2 or not isinstance(rest[0], ForStmt) or not isinstance(rest[1], ReturnStmt):
        return None
    loop, ret = rest
    if not (reads_in(loop.body) or _integer_divisions(loop.body)) or any(e not in f.params for e in loop.inits):
        return None
    spmd, stride = bool(ids), None
    if spmd:
        over = _over_blocks(loop, ids, blocks)
        if over is None:
            return None
        loop, stride = over
    split = _split_body(f, loop)
    if split is None or any(_uses_block_ids(s) for s in split[1]) or _integer_divisions(split[1]):
        return None
    hoisted, kept, arg_of = split
    used = set(used_vars(kept))
    extra = (loop.loop_var, *(p for p in arg_of if p in used))
    returns = tuple(_escaped_store(v, f, loop, kept) for v in ret.values)
    return _Plan(dataclasses.replace(loop, body=seq(kept, span=loop.body.span)), tuple(hoisted), extra, returns,
                 arg_of, spmd, stride)


def _over_blocks(loop: ForStmt, ids: dict[Var, str], blocks: int | None) -> tuple[ForStmt, int | None] | None:
    """An SPMD kernel's loop as one loop over every iteration of every block, and the block count the
    launches must ask for (None: any, the loop reads it); None when the blocks do not split the work.

    ``for b in pl.range(block_idx, n, block_num)`` (or a constant stride ``S``) visits every ``b`` once
    over all blocks: ``range(n)``. ``for i in pl.range(k)`` in each of ``B`` blocks, ``block_idx`` read in
    the body: ``range(B * k)``, with ``i = w // B`` and ``block_idx = w % B`` (a sequential loop of tasks)."""
    start, step = ids.get(loop.start), as_int(loop.step)
    if start == "tile.get_block_idx":
        if ids.get(loop.step) == "tile.get_block_num":
            return dataclasses.replace(loop, start=ConstInt(0), step=ConstInt(1)), None
        if step is not None and step > 0:
            return dataclasses.replace(loop, start=ConstInt(0), step=ConstInt(1)), step
        return None
    if blocks is None or as_int(loop.start) != 0 or step != 1 or any(
            v in ids for v in used_vars([loop.start, loop.stop, loop.step])):
        return None
    return _flat_blocks(loop, ids, blocks), blocks


def _flat_blocks(loop: ForStmt, ids: dict[Var, str], blocks: int) -> ForStmt:
    sp, dt = loop.span, scalar_dtype(loop.loop_var)
    w = Var(f"{base_name(loop.loop_var.name)}_w", loop.loop_var.var_type, span=loop.loop_var.span)
    it = Var(loop.loop_var.name, loop.loop_var.var_type, span=loop.loop_var.span)
    n = ConstInt(blocks, dt)
    head = [AssignStmt(it, BinaryExpr(BinOp.FloorDiv, w, n, dt, span=sp), span=sp)]
    mapping: dict[Var, Expr] = {loop.loop_var: it}
    for v, op in ids.items():
        if op == "tile.get_block_num":
            mapping[v] = ConstInt(blocks, scalar_dtype(v))
        else:
            blk = Var(base_name(v.name), v.var_type, span=v.span)
            head.append(AssignStmt(blk, BinaryExpr(BinOp.FloorMod, w, n, dt, span=sp), span=sp))
            mapping[v] = blk
    stop = BinaryExpr(BinOp.Mul, loop.stop, n, dt, span=sp)
    body = seq([*head, *flatten(substitute(loop.body, mapping))], span=loop.body.span)
    return dataclasses.replace(loop, loop_var=w, start=ConstInt(0, dt), stop=stop, step=ConstInt(1, dt), body=body,
                               kind=ForKind.Sequential, attrs={})


def _escaped_store(v: Expr, f: Function, loop: ForStmt, kept: list[Stmt]) -> Expr:
    """A returned name stored inside the loop (``t_new = pl.store(..., t)``) without being carried:
    the store's result in the kernel, which is the tensor parameter it writes."""
    if not isinstance(v, Var) or v in f.params or v in loop.return_vars:
        return v
    for s in kept:
        store = assign_of(s, "tile.store")
        if store is not None and base_name(store[0].name) == base_name(v.name) and store[1].args[2] in f.params:
            return store[0]
    raise UnsupportedFeatureError(f"kernel '{f.name}' returns '{base_name(v.name)}', which its loop neither "
                                  "carries nor stores into a tensor parameter", f.span)


def _uses_block_ids(s: Stmt) -> bool:
    return any(assign_of(x, _BLOCK_IDS) for x in iter_stmts(s))


def _kernel(f: Function, plan: _Plan) -> Function:
    """The loop body as the kernel: iter args read the tensor params, the yield becomes the return."""
    loop = plan.loop
    entry = initial_values(loop)
    body = flatten(substitute(loop.body, entry))
    yielded = body[-1].values if body and isinstance(body[-1], YieldStmt) else ()
    by_rv = dict(zip(loop.return_vars, yielded, strict=False))
    values = tuple(substitute(by_rv.get(v, v), entry) for v in plan.returns)
    stmts = [*(body[:-1] if yielded else body), ReturnStmt(values, span=f.span)]
    return with_scalar_params(f, plan.extra, stmts)


class _CallSites:
    """Rewrites ``r = self.k(args)`` of a planned kernel into the orchestration loop."""

    def __init__(self, plans: dict[str, tuple[Function, _Plan]]):
        self.plans = plans
        self.renames: dict[Var, Expr] = {}  # call results -> loop results, for uses after a with-scope too

    def function(self, f: Function) -> Function:
        self.renames = {}
        body = map_blocks(f.body, self.block)
        return f.with_(body=substitute(body, self.renames))

    def block(self, stmts: list[Stmt]) -> list[Stmt]:
        out, renames = splice_calls(stmts, self._expand)
        self.renames.update(renames)
        return out

    def _expand(self, s: Stmt) -> tuple[list[Stmt], list[Expr]] | None:
        found = program_call(s, self.plans)
        if found is None or ("block_num" in found[0].attrs) != self.plans[found[1]][1].spmd:
            return None
        loop_stmt, results = self._loop(found[0], *self.plans[found[1]])
        return [loop_stmt], results

    def _loop(self, call: Call, f: Function, plan: _Plan) -> tuple[ForStmt, list[Expr]]:
        """The orchestration loop: the hoisted statements, then the kernel call with the loop's tensors
        (its iter args) and the moved scalars; cloned with the call's arguments for the kernel params."""
        loop = plan.loop
        tensor_of = dict(zip(loop.inits, loop.iter_args, strict=True))
        call_args = [tensor_of.get(p, a) for p, a in zip(f.params, call.args, strict=True)]
        call_args += [plan.arg_of.get(v, v) for v in plan.extra]
        # one single-block task per iteration
        attrs = {k: v for k, v in call.attrs.items() if k not in LAUNCH_ATTRS}
        new_call = dataclasses.replace(call, args=tuple(call_args), attrs=attrs)
        res = Var(f"{f.name}_out", call.result_type, span=call.span)
        yields = [self._element(res, plan.returns.index(rv), len(plan.returns)) if rv in plan.returns else it
                  for rv, it in zip(loop.return_vars, loop.iter_args, strict=True)]
        body = [*plan.hoisted, AssignStmt(res, new_call, span=call.span), YieldStmt(tuple(yields), span=call.span)]
        args: dict[Var, Expr] = dict(zip(f.params, call.args, strict=True))
        mapping = dict(args)
        [new_loop] = clone([dataclasses.replace(loop, body=seq(body, span=call.span), span=call.span)], mapping)
        new_loop = dataclasses.replace(new_loop, body=map_blocks(new_loop.body, lambda ss: [listed_index(x) for x in ss]))
        stored = {s.var: s.value.args[2] for s in flatten(loop.body) if isinstance(s, AssignStmt)  # type: ignore[attr-defined]
                  and s.var in plan.returns}
        results = [mapping.get(v) if v in loop.return_vars else substitute(stored.get(v, v), args)
                   for v in plan.returns]
        return new_loop, results

    @staticmethod
    def _element(res: Var, i: int, n: int) -> Expr:
        return res if n == 1 else TupleGetItem(res, i, span=res.span)


def _mismatched_calls(program: Program, plans: dict[str, tuple[Function, _Plan]]) -> set[str]:
    """Kernels called from a kernel, or launched as SPMD when the loop is not strided (or vice versa), or
    on another number of blocks than the loop's constant stride."""
    bad: set[str] = set()
    for f in program.functions:
        for s in iter_stmts(f.body):
            found = program_call(s, plans)
            if found is None:
                continue
            plan, blocks = plans[found[1]][1], found[0].attrs.get("block_num")
            if f.is_incore or (blocks is not None) != plan.spmd or (
                    plan.stride is not None and as_int(blocks) != plan.stride):
                bad.add(found[1])
    return bad


def _launch_blocks(program: Program) -> dict[str, int]:
    """Kernel name -> the constant block count of its SPMD launches, when they all ask for the same."""
    seen: dict[str, set[int | None]] = {}
    for f in program.functions:
        for s in iter_stmts(f.body):
            call = stmt_value(s)
            if isinstance(call, Call) and isinstance(call.op, GlobalVar) and "block_num" in call.attrs:
                seen.setdefault(call.op.name, set()).add(as_int(call.attrs["block_num"]))
    return {name: n for name, ns in seen.items() if len(ns) == 1 and (n := next(iter(ns))) is not None}


def lift_read_loops(program: Program) -> Program:
    """Split every InCore kernel whose loop reads tensor scalars; rewrite its call sites. A kernel of
    scalar work only runs in the orchestration instead (:mod:`._scalar_kernels`)."""
    program = inline_scalar_kernels(program)
    launches = _launch_blocks(program)
    plans: dict[str, tuple[Function, _Plan]] = {}
    for f in program.functions:
        plan = _plan(f, launches.get(f.name)) if f.is_incore else None
        if plan is not None:
            plans[f.name] = (f, plan)
    for name in _mismatched_calls(program, plans):
        del plans[name]  # its read stays in the kernel and is reported there
    if not plans:
        return program
    sites = _CallSites(plans)
    return replace_functions(program, {n: [_kernel(f, plan)] for n, (f, plan) in plans.items()},
                             lambda f: f if f.is_incore else sites.function(f))


@dataclass(frozen=True)
class LiftReadLoops(Pass):
    """A kernel loop that reads tensor scalars becomes an orchestration loop (see the module doc)."""

    name = "LiftReadLoops"

    def run(self, program: Program) -> Program:
        return lift_read_loops(program)
