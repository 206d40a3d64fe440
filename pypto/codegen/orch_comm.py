"""Orchestration C++ for ``comm.*`` ops (built-in comm tasks, ``pto_comm_api.h``) and ``tensor.write``.

Every comm task is ordered against all tensors the orchestration holds (ordering-only INOUT extras):
within a rank, kernels and comm tasks then run in program order, which is what a kernel written as
one sequence of tile and comm statements means ("store, notify; wait, load" included).
"""

from __future__ import annotations

from typing import Any

from pypto.ir.expr import Call, Var
from pypto.ir.types import TensorType

COMM_HEADER = '#include "pto_comm_api.h"\n'


def uses_comm(ops: set[str]) -> bool:
    return any(o.startswith("comm.") for o in ops)


def _cells(cg: Any, e: Any) -> str:
    return "{" + ", ".join(f"(uint32_t)({x})" for x in cg._list(e)) + "}"


def _order(cg: Any, operands: list[str]) -> str:
    """``CommOrder{{}, {every other tensor}}``: this task runs after, and before, every task on the
    function's tensor parameters and created tensors (views of them overlap them)."""
    roots = set(cg.func.params) | _created(cg.func)
    names = []
    for var, name in cg.env.items():
        if var in roots and isinstance(var.type, TensorType) and name not in operands and name not in names:
            names.append(name)
    return "CommOrder{{}, {" + ", ".join(names) + "}}"


def _created(func: Any) -> set[Var]:
    from pypto.ir.stmt import AssignStmt
    from pypto.passes._util import iter_stmts

    return {s.var for s in iter_stmts(func.body) if isinstance(s, AssignStmt) and isinstance(s.value, Call)
            and s.value.op == "tensor.create"}


_ATOMIC = {0: "NONE", 1: "ADD", 2: "MAX", 3: "MIN", 4: "MUL"}  # comm.copy's atomic= (pto_comm_api.h)


def _bind_same(cg: Any, var: Var | None, name: str) -> None:
    if var is not None:
        cg.env[var] = name


def notify(cg: Any, c: Call, var: Var | None) -> None:
    sig = cg.expr(c.args[0])
    op = "CommNotifyOp::ATOMIC_ADD" if int(c.kwargs.get("op", 1)) == 1 else "CommNotifyOp::SET"
    cg.em.line(f"rt_comm_notify({sig}, (int32_t)({cg.expr(c.args[1])}), {_cells(cg, c.args[2])}, "
               f"(int32_t)({cg.expr(c.args[3])}), {op}, {_order(cg, [sig])});")
    _bind_same(cg, var, sig)


def wait(cg: Any, c: Call, var: Var | None) -> None:
    sig = cg.expr(c.args[0])
    cmp = "CommWaitCmp::GE" if int(c.kwargs.get("cmp", 1)) == 1 else "CommWaitCmp::EQ"
    cg.em.line(f"rt_comm_wait({sig}, {_cells(cg, c.args[1])}, (int32_t)({cg.expr(c.args[2])}), {cmp}, "
               f"{_order(cg, [sig])});")
    _bind_same(cg, var, sig)


def copy(cg: Any, c: Call, var: Var | None) -> None:
    dst, src = cg.expr(c.args[0]), cg.expr(c.args[2])
    atomic = "CommAtomic::" + _ATOMIC[int(c.kwargs.get("atomic", 0))]
    cg.em.line(f"rt_comm_copy({dst}, (int32_t)({cg.expr(c.args[1])}), {src}, (int32_t)({cg.expr(c.args[3])}), "
               f"{atomic}, {_order(cg, [dst, src])});")
    _bind_same(cg, var, dst)


def barrier(cg: Any, c: Call, var: Var | None) -> None:
    sig = cg.expr(c.args[0])
    cg.em.line(f"rt_comm_barrier({sig}, {_order(cg, [sig])});")
    _bind_same(cg, var, sig)


def rank(cg: Any, c: Call, var: Var | None) -> None:
    cg._bind(var, "(int64_t)rt_comm_rank()", "int64_t")


def nranks(cg: Any, c: Call, var: Var | None) -> None:
    cg._bind(var, "(int64_t)rt_comm_nranks()", "int64_t")


def tensor_write(cg: Any, c: Call, var: Var | None) -> None:
    """``pl.write(t, idx, v)`` in an orchestration: ``set_tensor_data`` (waits for the tasks on ``t``)."""
    t = c.args[0].type
    ctype = t.dtype.ctype if isinstance(t, TensorType) else "float"
    dst = cg.expr(c.args[0])
    idx = cg._list(c.args[1])
    name = cg.em.unique("widx")
    cg.em.line(f"uint32_t {name}[{len(idx)}] = {{{', '.join(idx)}}};")
    cg.em.line(f"set_tensor_data({dst}, {len(idx)}, {name}, ({ctype})({cg.expr(c.args[2])}));")
    _bind_same(cg, var, dst)


OPS = {"comm.notify": notify, "comm.wait": wait, "comm.copy": copy, "comm.barrier": barrier, "comm.rank": rank,
       "comm.nranks": nranks, "tensor.write": tensor_write}
