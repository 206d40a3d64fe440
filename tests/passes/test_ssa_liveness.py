"""ConvertToSSA: carries/merges only names read later; accepts already-lowered programs."""

from __future__ import annotations

import re

import pytest
from kernels import IN, OUT, ints, orch, tensor

import pypto.language as pl
from pypto.errors import UserError
from pypto.ir import AssignStmt, Call, ForStmt, IfStmt, Program, ScalarType, Var
from pypto.ir.dtypes import DataType
from pypto.ir.expr import ConstInt
from pypto.ir.ops.registry import make_call
from pypto.ir.stmt import EvalStmt, flatten, preorder
from pypto.passes import get_pass

SSA = get_pass("ConvertToSSA")()
T = "pl.Tensor[[64, 64], pl.FP32]"


def _ssa(body: str) -> Program:
    text = f"@pl.program\nclass P:\n    @pl.function(type=pl.FunctionType.Orchestration)\n" \
           f"    def f(self, a: {T}, n: pl.Scalar[pl.INDEX], out: pl.Out[{T}]) -> {T}:\n{body}"
    return SSA.run(pl.parse(text))


def _loops(p: Program) -> list[ForStmt]:
    return [s for s in preorder(p.functions[0].body) if isinstance(s, ForStmt)]


def test_overwritten_and_unread_name_is_not_carried():
    p = _ssa("        t = pl.add(a, a)\n        for i in pl.range(4):\n            t = pl.mul(a, 2.0)\n"
             "            out = pl.add(t, out)\n        return out\n")
    (loop,) = _loops(p)
    assert [ia.name.split("__")[0] for ia in loop.iter_args] == ["out"]


def test_name_read_after_the_loop_or_by_the_next_iteration_is_carried():
    after = _ssa("        t = pl.add(a, a)\n        for i in pl.range(4):\n            t = pl.mul(a, 2.0)\n"
                 "        out = pl.add(t, out)\n        return out\n")
    assert [ia.name.split("__")[0] for ia in _loops(after)[0].iter_args] == ["t"]
    nxt = _ssa("        t = pl.add(a, a)\n        for i in pl.range(4):\n            out = pl.add(t, out)\n"
               "            t = pl.mul(a, 2.0)\n        return out\n")
    assert sorted(ia.name.split("__")[0] for ia in _loops(nxt)[0].iter_args) == ["out", "t"]


def test_inner_loop_carries_what_the_outer_loop_needs():
    p = _ssa("        t = pl.add(a, a)\n        for i in pl.range(2):\n            out = pl.add(t, out)\n"
             "            for j in pl.range(2):\n                t = pl.mul(a, 2.0)\n        return out\n")
    outer, inner = _loops(p)
    assert sorted(ia.name.split("__")[0] for ia in outer.iter_args) == ["out", "t"]
    assert [ia.name.split("__")[0] for ia in inner.iter_args] == ["t"]


def test_a_later_loop_that_binds_a_name_before_reading_it_does_not_keep_an_earlier_loops_value():
    """The later loop's reads of ``k`` and ``i`` are its own (bound first in the body, or by its header),
    so the first loop carries neither out (a region around it would otherwise leak a scalar)."""
    p = _ssa("        for i in pl.range(2):\n            k = i * 2\n            out = pl.adds(out, k)\n"
             "        for i in pl.range(3):\n            k = i * 3\n            out = pl.adds(out, k)\n"
             "        return out\n")
    first, second = _loops(p)
    assert [rv.name.split("__")[0] for rv in first.return_vars] == ["out"]
    assert [rv.name.split("__")[0] for rv in second.return_vars] == ["out"]


def test_if_merges_only_names_read_later():
    dead = _ssa("        t = pl.add(a, a)\n        if n < 2:\n            t = pl.mul(a, 2.0)\n"
                "        else:\n            t = pl.mul(a, 3.0)\n        return out\n")
    (branch,) = [s for s in preorder(dead.functions[0].body) if isinstance(s, IfStmt)]
    assert branch.return_vars == ()
    live = _ssa("        t = pl.add(a, a)\n        if n < 2:\n            t = pl.mul(a, 2.0)\n"
                "        out = pl.add(t, out)\n        return out\n")
    (branch,) = [s for s in preorder(live.functions[0].body) if isinstance(s, IfStmt)]
    assert [rv.name.split("__")[0] for rv in branch.return_vars] == ["t"]


def test_same_named_vars_of_a_lowered_program_stay_distinct():
    """Pipeline output may give several Vars one name; uses must keep pointing at their own Var."""
    a, out = tensor("a", 16, 16), tensor("out", 16, 16)
    t1, t2, t3 = (Var("t__tile", a.var_type) for _ in range(3))
    body = [AssignStmt(t1, make_call("tensor.add", [a, a])), AssignStmt(t2, make_call("tensor.mul", [a, a])),
            AssignStmt(t3, make_call("tensor.sub", [t1, t2]))]
    prog = SSA.run(Program("p", (orch("f", [a, out], [IN, OUT], body, t3),)))
    s1, s2, s3, ret = flatten(prog.functions[0].body)
    assert s3.value.args[0] is s1.var and s3.value.args[1] is s2.var
    assert len({s1.var.name, s2.var.name, s3.var.name}) == 3
    assert ret.values[0] is s3.var


def test_task_ids_in_call_attributes_follow_the_renaming():
    a, out = tensor("a", 16, 16), tensor("out", 16, 16)
    tid = Var("tid", ScalarType(DataType.TASK_ID))
    first = AssignStmt(tid, make_call("tensor.add", [a, a]))
    call = Call("tensor.mul", (a, a), {}, {"manual_dep_edges": (tid,)}, a.var_type)
    prog = SSA.run(Program("p", (orch("f", [a, out], [IN, OUT], [first, EvalStmt(call)], out),)))
    s1, s2, _ = flatten(prog.functions[0].body)
    assert s2.expr.attrs["manual_dep_edges"][0] is s1.var and s1.var is not tid


def test_buffer_bindings_keep_their_vars():
    from pypto.ir.types import MemRef, PtrType, TileType

    a, out = tensor("a", 16, 16), tensor("out", 16, 16)
    ptr = Var("mem_vec_0", PtrType())
    alloc = AssignStmt(ptr, make_call("tile.alloc", [], {"memory_space": pl.Mem.Vec, "size": 1024}))
    tile = Var("x", TileType((16, 16), DataType.FP32, MemRef(ptr, 0, 1024), memory_space=pl.Mem.Vec))
    load = AssignStmt(tile, make_call("tile.load", [a, ints(0, 0), ints(16, 16)], {"target_memory": pl.Mem.Vec}))
    prog = SSA.run(Program("p", (orch("f", [a, out], [IN, OUT], [alloc, load], out),)))
    s1, s2, _ = flatten(prog.functions[0].body)
    assert s1.var is ptr and s2.var.var_type.memref.base is ptr


def test_name_reassigned_before_its_next_read_is_not_carried():
    p = _ssa("        t = pl.add(a, a)\n        for i in pl.range(4):\n            t = pl.mul(a, 2.0)\n"
             "            out = pl.add(t, out)\n        t = pl.sub(a, a)\n        out = pl.add(t, out)\n"
             "        return out\n")
    (loop,) = _loops(p)
    assert [ia.name.split("__")[0] for ia in loop.iter_args] == ["out"]


def _ifs(p: Program) -> list[IfStmt]:
    return [s for s in preorder(p.functions[0].body) if isinstance(s, IfStmt)]


def _reads_after(p: Program, op: str) -> Call:
    return next(s.value for s in preorder(p.functions[0].body)
                if isinstance(s, AssignStmt) and isinstance(s.value, Call) and s.value.op == op)


def test_name_bound_before_and_rebound_in_both_branches_is_the_ifs_result():
    """The read after the if used to keep the Var from before the if (silently wrong code)."""
    p = _ssa("        t = pl.add(a, a)\n        if n < 2:\n            t = pl.mul(a, 2.0)\n"
             "        else:\n            t = pl.mul(a, 3.0)\n        out = pl.sub(t, out)\n        return out\n")
    (branch,) = _ifs(p)
    assert [rv.name.split("__")[0] for rv in branch.return_vars] == ["t"]
    assert _reads_after(p, "tensor.sub").args[0] is branch.return_vars[0]


def test_name_of_an_earlier_loop_rebound_in_both_branches_in_a_later_loop():
    p = _ssa("        for i in pl.range(2):\n            t = pl.mul(a, 2.0)\n            out = pl.add(t, out)\n"
             "        for j in pl.range(2):\n            if j == 0:\n                t = pl.mul(a, 3.0)\n"
             "            else:\n                t = pl.mul(a, 4.0)\n            out = pl.sub(t, out)\n"
             "        return out\n")
    (branch,) = _ifs(p)
    assert _reads_after(p, "tensor.sub").args[0] is branch.return_vars[0]


def test_while_loop_reads_the_ifs_result():
    p = _ssa("        t = pl.add(a, a)\n        for (k,) in pl.while_(init_values=(0,)):\n"
             "            pl.cond(k < n)\n            if k == 0:\n                t = pl.mul(a, 2.0)\n"
             "            else:\n                t = pl.mul(a, 3.0)\n            out = pl.sub(t, out)\n"
             "            k2: pl.Scalar[pl.INDEX] = k + 1\n            r = pl.yield_(k2)\n        return out\n")
    (branch,) = _ifs(p)
    assert _reads_after(p, "tensor.sub").args[0] is branch.return_vars[0]


def test_scalar_rebound_in_both_branches_is_the_ifs_result():
    p = _ssa("        m = n + 1\n        if n < 2:\n            m = n + 2\n        else:\n            m = n + 3\n"
             "        out = pl.adds(out, m)\n        return out\n")
    (branch,) = _ifs(p)
    assert _reads_after(p, "tensor.adds").args[1] is branch.return_vars[0]


def test_while_local_read_after_the_loop_is_a_located_error():
    with pytest.raises(UserError, match="'u' is read here but is first bound inside the loop at <string>:5:9") as info:
        _ssa("        for (k,) in pl.while_(init_values=(0,)):\n            pl.cond(k < n)\n"
             "            u = pl.mul(a, 2.0)\n            k2: pl.Scalar[pl.INDEX] = k + 1\n"
             "            r = pl.yield_(k2)\n        out = pl.add(u, out)\n        return out\n")
    assert (info.value.span.line, info.value.span.col) == (10, 9)


@pytest.mark.parametrize("body", [
    "            m = i * 2\n",
    "            if i < n:\n                m = i * 2\n            else:\n                m = i * 3\n",
])
def test_scalar_first_bound_in_a_loop_that_runs_is_carried_from_an_unobserved_zero(body):
    p = _ssa(f"        for i in pl.range(3):\n{body}        out = pl.adds(out, m)\n        return out\n")
    (loop,) = _loops(p)
    (init,) = loop.inits
    assert isinstance(init, ConstInt) and init.value == 0 and init.dtype is DataType.INDEX
    assert _reads_after(p, "tensor.adds").args[1] is loop.return_vars[0]


@pytest.mark.parametrize("loop", [
    "for i in pl.range(n):\n            m = i * 2\n",                                 # may run zero times
    "for i in pl.parallel(3):\n            m = i * 2\n",                              # no last iteration
    "for i in pl.range(3):\n            if i == n:\n                break\n            m = i * 2\n",
    "for i in pl.range(3):\n            t = pl.mul(a, 2.0)\n            m = i * 2\n",  # t: a tensor
])
def test_no_start_for_a_value_python_may_not_have_is_a_located_error(loop):
    read = "t" if "pl.mul" in loop else "m"
    body = f"        {loop}        out = pl.adds(out, m)\n" if read == "m" else \
        f"        {loop}        out = pl.add(out, t)\n"
    with pytest.raises(UserError, match=f"'{read}' is read here but is (first bound inside|bound in only one)"):
        _ssa(body + "        return out\n")


@pytest.mark.parametrize("loop", ["for i in pl.range(4):\n",
                                  "for (k,) in pl.while_(init_values=(0,)):\n            pl.cond(k < n)\n"])
def test_name_both_branches_rebind_before_any_read_is_not_carried(loop):
    """The if kills it (and a name its branches bind and read inside is not live before it)."""
    tail = "            k2: pl.Scalar[pl.INDEX] = k + 1\n            r = pl.yield_(k2)\n" if "while" in loop else ""
    p = _ssa(f"        t = pl.add(a, a)\n        {loop}            if n < 2:\n                t = pl.mul(a, 2.0)\n"
             "            else:\n                t = pl.mul(a, 3.0)\n            out = pl.sub(t, out)\n"
             f"{tail}        return out\n")
    body = p.functions[0].body
    loop_stmt = next(s for s in preorder(body) if hasattr(s, "iter_args") and s.iter_args)
    assert "t" not in {ia.name.split("__")[0] for ia in loop_stmt.iter_args}


@pytest.mark.parametrize("code, where", [
    ("        m = n + 1\n        if n < 2:\n            m = n + 2\n        else:\n            m = 2.5\n",
     "at the end of the then-branch but pl.Scalar[pl.FP32] at the end of the else-branch"),
    ("        m = n + 1\n        for i in pl.range(4):\n            out = pl.adds(out, m)\n            m = 2.5\n",
     "when it enters the loop but pl.Scalar[pl.FP32] at the end of the loop body"),
])
def test_merging_values_of_different_kinds_is_a_located_error(code, where):
    with pytest.raises(UserError, match=r"'m' is pl\.Scalar\[pl\.INDEX\] " + re.escape(where)) as info:
        _ssa(code + "        out = pl.adds(out, m)\n        return out\n")
    assert info.value.span.line == 6 and "same kind, shape and dtype" in info.value.hint
