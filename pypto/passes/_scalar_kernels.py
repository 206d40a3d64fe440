"""A kernel of scalar work only runs in the orchestration: its call becomes its body.

ptoas 0.1.1 has no scalar load from GM. An InCore kernel that does no tile work at all -- its body is
reads of tensors (``pl.read``), scalar arithmetic, ``pl.write`` of scalars into its tensors, and loops
and ``if``s of those, carrying scalars (a work-list builder: ``for b in pl.range(n): k = pl.read(lens,
[b]); ... pl.write(table, [cursor + i], ...); cursor = cursor + k``) -- needs no core: the orchestration
runs the body in place of the call (``pl.read`` there waits for the tensor's producer, ``pl.write`` for
the tasks on the tensor). Only kernels that still read a tensor scalar are taken (the others compile as
they are); an SPMD launch or a kernel called from another kernel keeps its kernel and its located error.
"""

from __future__ import annotations

from pypto.ir.expr import Call, Expr, Var
from pypto.ir.function import Function, Program
from pypto.ir.ops.common import SPMD_IDS
from pypto.ir.ops.registry import op_of
from pypto.ir.stmt import (
    AssignStmt,
    EvalStmt,
    ForStmt,
    IfStmt,
    ReturnStmt,
    SeqStmts,
    Stmt,
    YieldStmt,
    flatten,
)
from pypto.ir.types import ScalarType, TensorType, TileType
from pypto.ir.verifier import calls
from pypto.ir.visitor import substitute
from pypto.passes._kernel_reads import listed_index, reads_in
from pypto.passes._rewrite import clone, program_call, splice_calls
from pypto.passes._util import iter_stmts, map_blocks


def _scalar_call(c: Call) -> bool:
    """``pl.read`` / ``pl.write`` / ``tensor.dim`` of a tensor (the registry's tensor access ops), or scalar
    arithmetic that is no block index."""
    od = op_of(c)
    if od is not None and od.namespace == "tensor" and od.category == "access":
        return True
    op = c.op if isinstance(c.op, str) else ""
    return (isinstance(c.result_type, ScalarType) and op.rsplit(".", 1)[-1] not in SPMD_IDS
            and not any(isinstance(getattr(a, "type", None), (TensorType, TileType)) for a in c.args))


def _scalar_stmt(s: Stmt) -> bool:
    if isinstance(s, AssignStmt):
        return isinstance(s.var.var_type, ScalarType)
    if isinstance(s, EvalStmt):
        return isinstance(s.expr, Call) and s.expr.op == "tensor.write"
    if isinstance(s, (ForStmt, IfStmt)):
        return all(isinstance(v.var_type, ScalarType) for v in s.return_vars)
    return isinstance(s, (SeqStmts, YieldStmt, ReturnStmt))


def scalar_kernel(f: Function) -> bool:
    """``f`` is an InCore kernel of scalar work only that reads a tensor scalar and returns its params."""
    if not f.is_incore or not reads_in(f.body):
        return False
    stmts = flatten(f.body)
    if not stmts or not isinstance(ret := stmts[-1], ReturnStmt) or any(v not in f.params for v in ret.values):
        return False
    return all(_scalar_stmt(s) for s in iter_stmts(f.body)) and all(
        isinstance(c.op, str) and _scalar_call(c) for c in calls(f.body))


def _inline(call: Call, f: Function) -> tuple[list[Stmt], list[Expr]]:
    """The kernel's body with its params bound to the call's arguments; the results are those arguments."""
    *body, ret = flatten(f.body)
    mapping: dict[Var, Expr] = dict(zip(f.params, call.args, strict=True))
    stmts = [map_blocks(s, lambda ss: [listed_index(x) for x in ss]) for s in clone(body, mapping)]  # all levels
    return stmts, [mapping[v] for v in ret.values]  # type: ignore[index]


def _called_well(program: Program, name: str) -> bool:
    """Every call of ``name`` is a plain (not SPMD) call from a non-kernel function."""
    sites = [(f, found[0]) for f in program.functions for s in iter_stmts(f.body)
             if (found := program_call(s, (name,))) is not None]
    return bool(sites) and all(not f.is_incore and "block_num" not in c.attrs for f, c in sites)


def inline_scalar_kernels(program: Program) -> Program:
    """Replace the calls of every kernel of scalar work only by its body (see the module doc)."""
    kernels = {f.name: f for f in program.functions if scalar_kernel(f) and _called_well(program, f.name)}
    if not kernels:
        return program

    def expand(s: Stmt) -> tuple[list[Stmt], list[Expr]] | None:
        found = program_call(s, kernels)
        return None if found is None else _inline(found[0], kernels[found[1]])

    def function(f: Function) -> Function:
        renames: dict[Var, Expr] = {}

        def block(stmts: list[Stmt]) -> list[Stmt]:
            out, more = splice_calls(stmts, expand)
            renames.update(more)
            return out

        return f.with_(body=substitute(map_blocks(f.body, block), renames))

    return program.with_functions([function(f) for f in program.functions if f.name not in kernels])
