"""What ConvertTensorToTileOps reads off a kernel before converting it: which tensors load into Mat,
which windows name GM bytes or stay windows of a tile, which creates start an accumulator."""

from __future__ import annotations

import dataclasses
from collections import Counter

from pypto.ir.expr import Var, as_int
from pypto.ir.function import Function
from pypto.ir.ops.registry import op_of
from pypto.ir.stmt import ForStmt
from pypto.ir.visitor import substitute
from pypto.passes._peel import peelable
from pypto.passes._rewrite import assigns_of, drop_defs, shaped
from pypto.passes._util import calls_in, iter_stmts, var_use_counts


def drop_full_validshapes(func: Function) -> Function:
    """``v = tensor.set_validshape(x, R, C)`` with ``[R, C]`` the static shape of ``x`` changes nothing:
    ``v`` becomes ``x`` (so a slice fed through it into a matmul still loads into Mat)."""
    full = {v: c.args[0] for v, c in assigns_of(func.body, "tensor.set_validshape").items()
            if [as_int(n) for n in c.args[1:3]] == list(shaped(c.args[0]).shape)}
    if not full:
        return func
    return dataclasses.replace(func, body=substitute(drop_defs(func.body, full), full))


def cube_only_operands(func: Function) -> set[Var]:
    """Tensors whose every use is as a ``tensor.matmul*`` operand: their slices load into Mat, not Vec."""
    cube: set[Var] = set()
    other: set[Var] = set()
    for c in calls_in(func.body):
        op = op_of(c)
        is_mm = op is not None and op.namespace == "tensor" and op.core == "cube"
        for a in c.args:
            if isinstance(a, Var):
                (cube if is_mm else other).add(a)
    return cube - other


def first_iteration_accumulators(func: Function) -> set[Var]:
    """The initial values of loops that choose their accumulator on their first iteration (``if k == 0: acc =
    matmul(...) else: acc = matmul_acc(acc, ...)``): placeholders for an accumulator, an Acc tile like the
    branches' (the loop is peeled after AutoTileMatmulL0)."""
    found: set[Var] = set()
    for s in iter_stmts(func.body):
        if isinstance(s, ForStmt) and peelable(s, cube=True):
            acc_args = {c.args[0] for c in calls_in(s.body) if c.op in ("tensor.matmul_acc", "tile.matmul_acc")}
            found.update(v for ia, v in zip(s.iter_args, s.inits, strict=True) if ia in acc_args and isinstance(v, Var))
    return found


def gather_only(func: Function) -> set[Var]:
    """Vars whose every use is as the source of a mask-pattern ``tensor.gather`` (one by index copies)."""
    gathered = Counter(c.args[0] for c in calls_in(func.body) if c.op == "tensor.gather" and len(c.args) == 1)
    uses = var_use_counts(func.body)
    return {v for v, n in gathered.items() if isinstance(v, Var) and uses[v] == n + 1}  # + its definition


def gm_views(func: Function) -> set[Var]:
    """Tensors that name GM bytes as they are: the parameters and their windows (a window of one of them
    is a load, not a window of a computed tile). A reshape is computed on the loaded tile."""
    views: set[Var] = set(func.params)
    for v, c in assigns_of(func.body, "tensor.slice").items():  # in program order: windows of windows too
        if c.args and c.args[0] in views:
            views.add(v)
    return views
