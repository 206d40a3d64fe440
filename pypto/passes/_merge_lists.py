"""A merge of separate sorted lists in a kernel becomes one merge of a row the lists fill, through GM.

``pl.mrgsort(a, b[, c[, d]])`` merges 2 to 4 sorted (value, index) lists (upstream's 'format2'
tmrgsort). ptoas 0.1.1's ``pto.tmrgsort`` merges the runs of one row only, and 0.1.1 cannot place tiles
side by side on chip (no ``tinsert`` or ``tconcat``). At the top level of a kernel, ``m = pl.mrgsort(a, b)``
of ``k`` lists of ``L`` slots each (``L`` a multiple of 64) becomes::

    row = pl.full([1, 4 * L], LOWEST)           # the runs no list fills sort after every list
    row = pl.assemble(row, a, [0, 0]); row = pl.assemble(row, b, [0, L]); ...
    pl.system.syncall(core_type="aiv_only")
    m = pl.mrgsort(row, block_len=L)[:, 0:k * L]

The barrier makes ExpandMixedKernel cut the kernel in two tasks, so ``row`` crosses through a GM temp:
the first task stores the lists side by side, the second loads the row and merges it (as do tiles the rest
of the kernel still uses). ``tmrgsort`` keeps the earlier run first on equal values, so the lists keep
their order on ties and the filler runs (``LOWEST``, the lowest finite f32) come after every list entry
but -inf. A multi-list merge anywhere else (in a loop or an if of a kernel) stays a located error.
"""

from __future__ import annotations

import dataclasses

from pypto.errors import UserError
from pypto.ir.dtypes import DataType
from pypto.ir.expr import Call, ConstFloat
from pypto.ir.function import Function
from pypto.ir.ops.registry import make_call
from pypto.ir.ops.sort_ops import MULTI_LIST, MULTI_LIST_HINT
from pypto.ir.stmt import AssignStmt, EvalStmt, Stmt, flatten
from pypto.passes._rewrite import emit, expand_stmts, ints, match, shaped
from pypto.passes._util import base_name, iter_stmts

LOWEST = -3.4028234663852886e38  # the lowest finite f32
OP = "tensor.mrgsort"


def _lists(s: Stmt) -> Call | None:
    v = match(s, OP)
    return v if v is not None and len(v.args) > 1 else None


def _expand(s: Stmt, call: Call) -> list[Stmt]:
    if not isinstance(s, AssignStmt):
        return []  # a merge nobody reads
    k, width, sp = len(call.args), shaped(call.args[0]).shape[1], call.span
    assert isinstance(width, int)  # the registry takes equal [1, L] rows only
    name = base_name(s.var.name)
    fill = make_call("tensor.full", [ints([1, 4 * width]), ConstFloat(LOWEST)], {"dtype": DataType.FP32}, span=sp)
    out: list[Stmt] = []
    row = emit(out, f"{name}_lists", fill, sp)
    for i, part in enumerate(call.args):
        row = emit(out, f"{name}_lists", make_call("tensor.assemble", [row, part, ints([0, i * width])], span=sp), sp)
    out.append(EvalStmt(make_call("system.syncall", [], {"core_type": "aiv_only"}, span=sp), span=sp))
    merged = emit(out, f"{name}_merged", make_call(OP, [row], {"block_len": width}, span=sp), sp)
    head = make_call("tensor.slice", [merged, ints([1, k * width]), ints([0, 0])], span=sp)
    return [*out, dataclasses.replace(s, value=head)]


def merge_lists(func: Function) -> Function:
    """Each top-level multi-list merge of kernel ``func`` as one merge through GM (see the module doc)."""
    top = flatten(func.body)
    at_top = {id(s) for s in top}
    for s in iter_stmts(func.body):
        if (call := _lists(s)) is not None and id(s) not in at_top:
            where = ("inside a loop or an if of a kernel is not supported with ptoas 0.1.1 (pypto merges "
                     "separate lists through GM between two tasks, at the top level only)")
            raise UserError(MULTI_LIST.format(name=OP, k=len(call.args), where=where), call.span,
                            hint=MULTI_LIST_HINT)
    swap = {id(s): _expand(s, call) for s in top if (call := _lists(s)) is not None}
    if not swap:
        return func
    return dataclasses.replace(func, body=expand_stmts(func.body, lambda s: swap.get(id(s))))


__all__ = ["merge_lists"]
