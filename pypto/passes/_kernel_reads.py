"""Scalar reads at the top of an InCore function move to its call sites (the value arrives as a scalar).

ptoas 0.1.1 has no scalar load from GM. ``x = pl.read(t, idx)`` at the top level of a kernel, of a
tensor the kernel does not write, at indices computed from its parameters, reads the same value
wherever the kernel would do it; the orchestration that calls the kernel reads it instead (with the
scalar arithmetic that feeds or follows the read) and passes it as a new ``pl.Scalar`` parameter.
A read whose value is only written (``pl.write(t, idx, x)``) stays: ConvertTensorToTileOps loads it
as a one-element tile (a task takes at most 16 scalars, and the copy needs no scalar).
Kernels called from another kernel keep their reads (and their located error).

:func:`expand_calls` is the call-site rewrite shared with :mod:`._read_gather`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import TypeGuard

from pypto.errors import UserError
from pypto.ir.enums import ParamDirection
from pypto.ir.expr import Call, Expr, GlobalVar, IterArg, MakeTuple, Var
from pypto.ir.function import Function, Program
from pypto.ir.ops.registry import op_of, written_index
from pypto.ir.stmt import AssignStmt, ForStmt, Stmt, flatten, stmt_value
from pypto.ir.types import ScalarType, TensorType
from pypto.passes._rewrite import clone, expand_stmts, program_call, replace_functions, with_scalar_params
from pypto.passes._util import iter_stmts, used_vars, var_use_counts
from pypto.passes.base import Pass
from pypto.passes.simplify import Simplify
from pypto.toolchain.platforms import TASK_MAX_SCALARS

READ = "tensor.read"

# (call, kernel) -> (statements to put before the call, the call to make instead)
Expand = Callable[[Call, Function], tuple[list[Stmt], Call]]


def is_read(v: object) -> TypeGuard[Call]:
    return isinstance(v, Call) and v.op == READ


def listed_index(s: Stmt) -> Stmt:
    """``pl.read(t, i)`` -> ``pl.read(t, [i])``: the orchestration form takes an index list."""
    v = s.value if isinstance(s, AssignStmt) else None
    if not is_read(v) or isinstance(v.args[1], MakeTuple):
        return s
    t, *idx = v.args
    return dataclasses.replace(s, value=dataclasses.replace(v, args=(t, MakeTuple(tuple(idx), span=v.span))))


def carried_values(loop: ForStmt) -> list[IterArg]:
    """The iter args of ``loop`` that carry something other than a tensor (a tile, a scalar)."""
    return [ia for ia in loop.iter_args if not isinstance(ia.var_type, TensorType)]


def write_values(body: Stmt) -> set[Var]:
    """The scalars ``body`` uses only as the value a ``pl.write`` stores (each use is ``args[2]`` of a
    ``tensor.write`` / ``tile.write``): the kernel copies them through a one-element tile load instead."""
    as_value: dict[Var, int] = {}
    for s in iter_stmts(body):
        v = stmt_value(s)
        op = op_of(v) if isinstance(v, Call) else None
        if op is not None and op.short == "write" and isinstance(v.args[2], Var):
            as_value[v.args[2]] = as_value.get(v.args[2], 0) + 1
    uses = var_use_counts(body)
    return {v for v, n in as_value.items() if uses[v] == n + 1}  # + its definition


def written_tensors(f: Function) -> set[Var]:
    """The parameters a function may write (Out/InOut, or the target of a store-like op)."""
    out = {p for p, d in zip(f.params, f.param_directions, strict=True) if d is not ParamDirection.In}
    for s in iter_stmts(f.body):
        v = stmt_value(s)
        index = written_index(v) if isinstance(v, Call) else None
        if isinstance(v, Call) and index is not None and isinstance(a := v.args[index], Var):
            out.add(a)
    return out


def kernel_call_sites(program: Program) -> dict[str, list[Function]]:
    """Kernel name -> the functions that call it."""
    sites: dict[str, list[Function]] = {}
    for f in program.functions:
        for s in iter_stmts(f.body):
            call = stmt_value(s)
            if isinstance(call, Call) and isinstance(call.op, GlobalVar):
                sites.setdefault(call.op.name, []).append(f)
    return sites


def reads_in(stmt: Stmt) -> list[AssignStmt]:
    """The ``x = pl.read(...)`` statements anywhere in ``stmt`` (a statement-level scan: calls are
    flattened into assignments before OutlineIncoreScopes)."""
    return [s for s in iter_stmts(stmt) if isinstance(s, AssignStmt) and is_read(s.value)]


def reading_kernels(program: Program) -> list[Function]:
    """The InCore functions that read a tensor scalar and whose callers are all non-kernel functions."""
    readers = [f for f in program.functions if f.is_incore and reads_in(f.body)]
    if not readers:
        return []
    sites = kernel_call_sites(program)
    return [f for f in readers if sites.get(f.name) and not any(c.is_incore for c in sites[f.name])]


def expand_calls(f: Function, kernels: dict[str, Function], expand: Expand) -> Function:
    """``f`` with every call of a kernel in ``kernels`` replaced by ``expand``'s statements and call."""

    def one(s: Stmt) -> list[Stmt] | None:
        found = program_call(s, kernels)
        if found is None:
            return None
        pre, new = expand(found[0], kernels[found[1]])
        return [*pre, dataclasses.replace(s, value=new) if isinstance(s, AssignStmt) else dataclasses.replace(s, expr=new)]

    body = expand_stmts(f.body, one)
    if body is f.body:
        return f
    # arguments substituted into the moved statements fold as the parser folds them (``3 - 3`` -> 0)
    return Simplify().run_function(f.with_(body=body), None)  # type: ignore[arg-type]


def movable(s: Stmt, known: Callable[[Var], bool], written: Collection[Expr]) -> TypeGuard[AssignStmt]:
    """``s`` is scalar work the orchestration can do on ``known`` values: a read of a tensor not in
    ``written``, or non-call scalar arithmetic."""
    if not isinstance(s, AssignStmt) or not all(known(u) for u in used_vars(s.value)):
        return False
    v = s.value
    if is_read(v):
        return isinstance(v.args[0], Var) and v.args[0] not in written
    return isinstance(s.var.var_type, ScalarType) and not isinstance(v, Call)


def address_statements(stmts: list[Stmt], known: set[Var], written: set[Var]) -> dict[Var, AssignStmt]:
    """Of ``stmts``, the :func:`movable` ones on ``known`` values or earlier ones of these (in program order)."""
    ready: dict[Var, AssignStmt] = {}
    for s in stmts:
        if movable(s, lambda u: u in known or u in ready, written):
            ready[s.var] = s
    return ready


def inputs_closure(stmts: dict[Var, AssignStmt], seeds: set[Var]) -> set[Var]:
    """``seeds`` and the results of every statement of ``stmts`` (in program order) they are computed from."""
    need = set(seeds)
    for v, s in reversed(stmts.items()):
        if v in need:
            need.update(u for u in used_vars(s.value) if u in stmts)
    return need


def users_closure(stmts: dict[Var, AssignStmt], seeds: set[Var]) -> set[Var]:
    """``seeds`` and the results of every statement of ``stmts`` (in program order) computed from them."""
    out = set(seeds)
    for v, s in stmts.items():
        if any(u in out for u in used_vars(s.value)):
            out.add(v)
    return out


def _hoistable(f: Function) -> tuple[list[AssignStmt], set[Var]]:
    """The top-level statements that move out (reads, their index arithmetic, arithmetic on them)."""
    ready = address_statements(flatten(f.body), set(f.params), written_tensors(f))
    for v in write_values(f.body):  # read in the kernel (ConvertTensorToTileOps)
        if v in ready and is_read(ready[v].value):
            del ready[v]
    reads = {v for v, s in ready.items() if is_read(s.value)}
    # what a read's index needs, then scalar arithmetic on those
    needed = users_closure(ready, inputs_closure(ready, reads))
    return [s for v, s in ready.items() if v in needed], reads


def _check_scalar_room(f: Function, extra: tuple[Var, ...], defs: dict[Var, AssignStmt]) -> None:
    """A located error when the moved values would give ``f`` more scalars than a task takes."""
    have = sum(isinstance(p.type, ScalarType) for p in f.params)
    if have + len(extra) <= TASK_MAX_SCALARS:
        return
    first = defs[extra[max(TASK_MAX_SCALARS - have, 0)]]
    raise UserError(
        f"kernel '{f.name}' would take {have + len(extra)} scalars: its {len(extra)} values read at its top level "
        f"(pl.read) arrive from the orchestration as scalar parameters, and a task takes at most "
        f"{TASK_MAX_SCALARS} scalars ({have} are its own); this is the first value that does not fit",
        first.span, hint=f"split the kernel so that each part reads at most {TASK_MAX_SCALARS - have} values, or "
                         "read fewer values (e.g. one base index with constant offsets added in the kernel)")


def hoist_kernel_reads(program: Program) -> Program:
    """Move the top-level tensor reads of every orchestrated InCore function to its call sites."""
    plans: dict[str, tuple[Function, list[AssignStmt], tuple[Var, ...]]] = {}
    for f in reading_kernels(program):
        hoisted, reads = _hoistable(f)
        if not reads:
            continue
        moved = {s.var for s in hoisted}
        kept = [s for s in flatten(f.body) if not (isinstance(s, AssignStmt) and s.var in moved)]
        extra = tuple(v for v in used_vars(kept) if v in moved)
        _check_scalar_room(f, extra, {s.var: s for s in hoisted})
        plans[f.name] = (with_scalar_params(f, extra, kept), hoisted, extra)
    if not plans:
        return program

    def expand(call: Call, old: Function) -> tuple[list[Stmt], Call]:
        _, hoisted, extra = plans[old.name]
        mapping: dict[Var, Expr] = dict(zip(old.params, call.args, strict=True))
        pre = [listed_index(s) for s in clone(list(hoisted), mapping)]
        return pre, dataclasses.replace(call, args=(*call.args, *(mapping[v] for v in extra)))

    olds = {f.name: f for f in program.functions if f.name in plans}
    return replace_functions(program, {n: [p[0]] for n, p in plans.items()}, lambda f: expand_calls(f, olds, expand))


@dataclass(frozen=True)
class HoistKernelReads(Pass):
    """Top-level scalar reads of a kernel move to its call sites (see the module doc)."""

    name = "HoistKernelReads"

    def run(self, program: Program) -> Program:
        return hoist_kernel_reads(program)
