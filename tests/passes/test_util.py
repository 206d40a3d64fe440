"""passes/_util.py and passes/_rewrite.py: the shared use/def collectors and dead-definition removal (the jump
search and the unique names are checked through CtrlFlowTransform in test_ctrl_flow.py)."""

from __future__ import annotations

from pypto.ir.dtypes import DataType
from pypto.ir.expr import BinaryExpr, BinOp, Call, ConstBool, ConstInt, GlobalVar, IterArg, TupleGetItem, Var
from pypto.ir.stmt import (
    AssignStmt,
    ForStmt,
    IfStmt,
    ReturnStmt,
    SeqStmts,
    YieldStmt,
    merge_sources,
)
from pypto.ir.types import ScalarType, TupleType
from pypto.passes._rewrite import drop_unused, splice_calls
from pypto.passes._util import bound_vars, free_vars, used_vars, var_use_counts

IDX = ScalarType(DataType.INDEX)


def _add(a, b):
    return BinaryExpr(BinOp.Add, a, b, DataType.INDEX)


def _assign(name, value):
    return AssignStmt(Var(name, IDX), value)


def test_used_vars_in_first_use_order_and_counts_of_plain_vars():
    a, b = Var("a", IDX), Var("b", IDX)
    it = IterArg("acc", IDX)
    s = AssignStmt(Var("x", IDX), _add(_add(b, a), _add(b, it)))
    assert used_vars(s) == [s.var, b, a, it]
    assert used_vars([None, s.value]) == [b, a, it]
    counts = var_use_counts(s)
    assert counts[b] == 2 and counts[a] == 1 and it not in counts


def test_free_and_bound_vars():
    n, i, acc = Var("n", IDX), Var("i", IDX), IterArg("acc", IDX)
    rv = Var("acc_out", IDX)
    step = _assign("t", _add(acc, i))
    loop = ForStmt(i, ConstInt(0), n, ConstInt(1), SeqStmts((step, YieldStmt((step.var,)))), (acc,),
                   inits=(ConstInt(0),), return_vars=(rv,))
    assert free_vars(loop) == [n]
    assert bound_vars(loop) == [rv] and bound_vars(step) == [step.var] and bound_vars(ReturnStmt(())) == []


def test_merge_sources_pair_each_merged_var_with_its_incoming_value():
    n, i, acc = Var("n", IDX), Var("i", IDX), IterArg("acc", IDX)
    rv, init = Var("acc_out", IDX), ConstInt(0)
    step = _assign("t", _add(acc, i))
    loop = ForStmt(i, ConstInt(0), n, ConstInt(1), SeqStmts((step, YieldStmt((step.var,)))), (acc,),
                   inits=(init,), return_vars=(rv,))
    assert merge_sources(loop) == [(acc, init), (rv, acc)]
    a, b, phi = Var("a", IDX), Var("b", IDX), Var("phi", IDX)
    branch = IfStmt(ConstBool(True), SeqStmts((YieldStmt((a,)),)), SeqStmts((YieldStmt((b,)),)), (phi,))
    assert merge_sources(branch) == [(phi, a)]  # the then-branch's value
    assert merge_sources(IfStmt(ConstBool(True), SeqStmts((step,)))) == [] and merge_sources(step) == []


def test_drop_unused_removes_a_whole_chain_of_removable_definitions():
    i = Var("i", IDX)
    j = _assign("j", _add(i, i))
    k = _assign("k", _add(j.var, i))
    m = _assign("m", _add(k.var, i))
    kept = _assign("u", _add(i, i))
    used = _assign("v", _add(i, ConstInt(1)))
    ret = ReturnStmt((used.var,))
    # j <- k <- m: nothing reads m, so the chain goes; u is not removable; v is read
    assert drop_unused([j, k, m, kept, used, ret], lambda s: s is not kept) == [kept, used, ret]
    chain = _assign("w", _add(m.var, i))
    out = drop_unused([j, k, m, chain, ReturnStmt((chain.var,))], lambda s: True)
    assert out[:4] == [j, k, m, chain]


def test_splice_calls_renames_a_result_and_the_items_of_a_tuple_result():
    a = Var("a", IDX)
    one = AssignStmt(Var("r1", IDX), Call(GlobalVar("k1"), (a,), result_type=IDX))
    tup = AssignStmt(Var("r2", TupleType((IDX, IDX))), Call(GlobalVar("k2"), (a,), result_type=TupleType((IDX, IDX))))
    x, y = _assign("x", TupleGetItem(tup.var, 0)), _assign("y", TupleGetItem(tup.var, 1))
    use = _assign("z", _add(_add(x.var, y.var), one.var))
    marker = ReturnStmt(())
    items = {"k1": [ConstInt(1)], "k2": [ConstInt(2), ConstInt(3)]}

    def expand(s):
        return ([marker], items[s.value.op.name]) if s in (one, tup) else None

    out, renames = splice_calls([one, tup, x, y, use], expand)
    assert out[:2] == [marker, marker] and len(out) == 3
    assert renames == {one.var: items["k1"][0], x.var: items["k2"][0], y.var: items["k2"][1]}
    assert used_vars(out[2].value) == []  # z = (2 + 3) + 1
