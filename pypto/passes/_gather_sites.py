"""What the call sites of a gathering kernel tell :mod:`._read_gather`, and where its gathers run.

* A loop bound that is a kernel parameter (``for k in pl.range(1, n)``) has a static upper bound when
  every call passes a value the orchestration computes as ``pl.min(C, ...)`` (or a constant, or a sum
  of such values): the gather's scratch gets that many row blocks.
* The gather calls the orchestration makes in front of a kernel call move out of every enclosing loop
  whose iterations do not change their arguments (``for h in pl.parallel(H)`` around a kernel that
  gathers rows addressed by ``b`` only): the rows are copied once, and every iteration's kernel reads
  the same scratch (the runtime orders them after the copies through it).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from pypto.ir.expr import BinaryExpr, BinOp, Call, Expr, UnaryExpr, UnOp, Var, as_int
from pypto.ir.function import Function, Program
from pypto.ir.stmt import AssignStmt, ForStmt, Stmt, flatten, seq
from pypto.ir.types import ScalarType
from pypto.passes._rewrite import program_call
from pypto.passes._util import defined_vars, iter_stmts, map_blocks, used_vars

_DEPTH = 16  # definitions followed at most (a bound is a short chain: read, min, cast)


def upper_bound(e: Expr, defs: dict[Var, Expr], depth: int = _DEPTH) -> int | None:
    """A static upper bound of the integer scalar ``e`` (None: not known); ``defs`` holds the values of
    the scalar variables it may use."""
    if depth == 0:
        return None
    c = as_int(e)
    if c is not None:
        return c
    if isinstance(e, Var):
        return upper_bound(defs[e], defs, depth - 1) if e in defs else None
    if isinstance(e, UnaryExpr) and e.op is UnOp.Cast and e.dtype.is_int:
        return upper_bound(e.operand, defs, depth - 1)
    if not isinstance(e, BinaryExpr) or e.op not in (BinOp.Min, BinOp.Add):
        return None
    a, b = upper_bound(e.lhs, defs, depth - 1), upper_bound(e.rhs, defs, depth - 1)
    if e.op is BinOp.Add:
        return None if a is None or b is None else a + b
    return b if a is None else a if b is None else min(a, b)


def _scalar_defs(f: Function) -> dict[Var, Expr]:
    return {s.var: s.value for s in iter_stmts(f.body)
            if isinstance(s, AssignStmt) and isinstance(s.var.var_type, ScalarType) and not isinstance(s.value, Call)}


def call_site_bounds(program: Program, kernel: Function) -> dict[Var, int]:
    """The scalar parameters of ``kernel`` with a static upper bound at every one of its call sites."""
    bounds: dict[Var, int] = {}
    known = [p for p in kernel.params if isinstance(p.var_type, ScalarType)]
    for f in program.functions:
        if f.is_incore:
            continue
        defs = None
        for s in iter_stmts(f.body):
            found = program_call(s, (kernel.name,))
            if found is None:
                continue
            defs = _scalar_defs(f) if defs is None else defs
            args = dict(zip(kernel.params, found[0].args, strict=True))
            for p in list(known):
                b = upper_bound(args[p], defs)
                if b is None:
                    known.remove(p)
                    bounds.pop(p, None)
                else:
                    bounds[p] = max(b, bounds.get(p, b))
    return bounds


def _pull(loop: ForStmt, fills: Mapping[Var, Var]) -> tuple[list[Stmt], ForStmt]:
    """(the gather calls at the top level of ``loop``'s body that use nothing it defines but their scratch
    buffers, each after the creation of its buffer; the loop without them). A buffer moves only with its
    gather: one created outside a parallel loop would be shared by its iterations."""
    body = flatten(loop.body)
    inside = {loop.loop_var, *loop.iter_args, *defined_vars(loop.body)}
    creates = {s.var: s for s in body if isinstance(s, AssignStmt) and s.var in fills.values()}
    out: list[Stmt] = []
    for s in body:
        if not isinstance(s, AssignStmt) or s.var not in fills:
            continue
        buf = fills[s.var]
        if buf in creates and not any(u in inside and u != buf for u in used_vars(s.value)):
            out += [creates[buf], s]
            inside -= {s.var, buf}
    if not out:
        return [], loop
    kept = [s for s in body if not any(s is m for m in out)]
    return out, dataclasses.replace(loop, body=seq(kept, span=loop.body.span))


def hoist_out_of_loops(f: Function, fills: Mapping[Var, Var]) -> Function:
    """``f`` with the gather calls ``fills`` (result -> the scratch buffer it fills) and their buffers
    moved in front of every loop that does not change their arguments."""
    if not fills:
        return f

    def block(stmts: list[Stmt]) -> list[Stmt]:
        out: list[Stmt] = []
        for s in stmts:
            if isinstance(s, ForStmt):
                pre, s = _pull(s, fills)
                out += pre
            out.append(s)
        return out

    body = map_blocks(f.body, block)
    return f if body is f.body else f.with_(body=body)
