"""IRVisitor / IRMutator: walk plans from field annotations, per-class dispatch, sharing of untouched nodes."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import pypto.language as pl
from pypto.ir.dtypes import DataType
from pypto.ir.expr import BinaryExpr, BinOp, Call, ConstInt, Expr, GlobalVar, IterArg, Var
from pypto.ir.stmt import AssignStmt, ForStmt, IfStmt, SeqStmts, Stmt, WhileStmt
from pypto.ir.visitor import ANY, ATTRS, MANY, ONE, IRMutator, IRVisitor, rebuild, substitute, walk_plan


@pl.program
class Loop:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[64, 64], pl.FP32], out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) \
            -> pl.Tensor[[64, 64], pl.FP32]:
        for i in pl.range(2):
            t: pl.Tile[[32, 64], pl.FP32] = pl.load(a, [i * 32 + 0, 0], [32, 64])
            out = pl.store(pl.add(t, t), [i * 32, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[64, 64], pl.FP32], out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) \
            -> pl.Tensor[[64, 64], pl.FP32]:
        out = self.k(a, out)
        return out


def _reference_walk(node, seen):
    """The plain walk: every dataclass field (but span/comments/uid/name, types, kwargs), every node in it."""
    seen.append(node)
    for f in dataclasses.fields(node):
        if f.name in {"span", "comments", "uid", "name", "kwargs", "var_type", "result_type"}:
            continue
        value = getattr(node, f.name)
        items = value.values() if isinstance(value, dict) else (value,)
        for item in items:
            for x in item if isinstance(item, tuple) else (item,):
                if isinstance(x, (Expr, Stmt)):
                    _reference_walk(x, seen)


class _All(IRVisitor):
    def __init__(self):
        self.seen = []

    def visit(self, node):
        self.seen.append(node)
        super().visit(node)


class _Generic(IRVisitor):
    """Records nodes from generic_visit: children go through the dispatch table, not ``visit``."""

    def __init__(self):
        self.seen = []

    def generic_visit(self, node):
        self.seen.append(node)
        super().generic_visit(node)


def test_walk_plans_come_from_the_annotations():
    assert walk_plan(Call) == (("op", ONE), ("args", MANY), ("attrs", ATTRS))
    assert walk_plan(ConstInt) == ()
    assert walk_plan(Var) == ()
    assert walk_plan(IterArg) == ()
    assert dict(walk_plan(ForStmt))["inits"] == MANY and dict(walk_plan(WhileStmt))["inits"] == MANY
    assert walk_plan(BinaryExpr) == (("lhs", ONE), ("rhs", ONE))
    assert dict(walk_plan(IfStmt)) == {"cond": ONE, "then_body": ONE, "else_body": ONE, "return_vars": MANY}
    assert dict(walk_plan(ForStmt))["attrs"] == ATTRS and "kind" not in dict(walk_plan(ForStmt))


def test_unresolvable_annotation_walks_the_value():
    @dataclass(frozen=True, slots=True, eq=False)
    class Odd(Expr):
        inner: NoSuchType  # noqa: F821 - deliberately unresolvable

    x = Var("x")
    assert walk_plan(Odd) == (("inner", ANY),)
    v = _All()
    v.visit(Odd(x))
    assert v.seen[-1] is x
    y = Var("y")
    odd = Odd((x, ConstInt(1)))  # a tuple in an `any` field: the mutator rewrites its nodes too
    new = substitute(odd, {x: y})
    assert type(new) is Odd and new.inner[0] is y and new.inner[1] is odd.inner[1]
    assert substitute(odd, {Var("z"): y}) is odd


def test_visitor_reaches_every_node_the_plain_walk_reaches():
    for func in Loop.functions:
        want: list = []
        _reference_walk(func.body, want)
        for v in (_All(), _Generic()):
            v.visit(func.body)
            assert [id(n) for n in v.seen] == [id(n) for n in want]


def test_handlers_are_per_class_and_fall_back_to_generic_visit():
    class Calls(IRVisitor):
        def __init__(self):
            self.ops = []

        def visit_Call(self, c):  # noqa: N802
            self.ops.append(c.op_name)
            self.generic_visit(c)

    class NoCalls(Calls):
        def visit_Call(self, c):  # noqa: N802
            return None

    body = Loop.get_function("k").body
    found = Calls()
    found.visit(body)
    assert "tile.load" in found.ops and "tile.store" in found.ops
    quiet = NoCalls()
    quiet.visit(body)
    assert quiet.ops == []
    assert Calls._dispatch is not NoCalls._dispatch is not IRVisitor._dispatch


def test_mutator_shares_untouched_nodes_and_rebuilds_the_changed_path():
    x, y = Var("x", uid=7001), Var("y")
    keep = AssignStmt(Var("k"), ConstInt(1))
    e = BinaryExpr(BinOp.Add, x, ConstInt(2), DataType.INDEX)
    body = SeqStmts((keep, AssignStmt(Var("r"), e)))
    assert IRMutator().visit(body) is body
    new = substitute(body, {x: y})
    assert new is not body and new.stmts[0] is keep
    assert new.stmts[1].value.lhs is y and new.stmts[1].value.rhs is e.rhs
    assert new.stmts[1].var is body.stmts[1].var


def test_mutator_rewrites_exprs_inside_attrs_and_program_calls():
    i, j = Var("i"), Var("j")
    c = Call(GlobalVar("f"), (i,), attrs={"deps": (i,), "mode": "x"})
    new = substitute(c, {i: j})
    assert new.args == (j,) and new.attrs == {"deps": (j,), "mode": "x"} and new.op is c.op
    assert substitute(c, {Var("z"): j}) is c


def test_rebuild_equals_dataclasses_replace():
    v = Var("v", uid=4242)
    a = AssignStmt(v, ConstInt(3), comments=("note",))
    got = rebuild(a, {"value": ConstInt(4)})
    want = dataclasses.replace(a, value=got.value)
    assert (got.var, got.value, got.comments, got.span) == (want.var, want.value, want.comments, want.span)
    assert rebuild(v, {"name": "w"}).uid == 4242


def _reference_stmts(s, out):
    if s is None:
        return out
    out.append(s)
    kids = s.stmts if isinstance(s, SeqStmts) else (s.then_body, s.else_body) if isinstance(s, IfStmt) else \
        (s.body,) if hasattr(s, "body") else ()
    for k in kids:
        _reference_stmts(k, out)
    return out


def test_statement_walks_are_pre_order():
    from pypto.ir.expr import ConstBool
    from pypto.ir.stmt import EvalStmt, preorder
    from pypto.ir.verifier import walk

    a, b, c = (EvalStmt(ConstInt(i)) for i in range(3))
    nested = SeqStmts((a, IfStmt(ConstBool(True), SeqStmts((b, c)), a), Loop.get_function("k").body))
    for root in (nested, Loop.get_function("main").body, None):
        want = [id(s) for s in _reference_stmts(root, [])]
        assert [id(s) for s in preorder(root)] == want
        assert [id(s) for s in walk(root)] == want


def test_preorder_is_remembered_per_statement_object():
    from pypto.ir.stmt import EvalStmt, preorder

    a, b = EvalStmt(ConstInt(1)), EvalStmt(ConstInt(2))
    body = SeqStmts((a, b))
    first = preorder(body)
    assert first == (body, a, b) and preorder(body) is first  # walked once
    other = SeqStmts((b, a))  # an equal-looking new body is its own entry
    assert preorder(other) == (other, b, a) and preorder(None) == ()
