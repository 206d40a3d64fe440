"""ConvertToSSA (loop-carried values, if phis), UnrollLoops, FlattenCallExpr, CtrlFlowTransform, guards."""

from __future__ import annotations

import dataclasses

from kernels import FP32, IN, OUT, add_program, ints, orch, tensor

from pypto.ir import (
    AssignStmt,
    BreakStmt,
    ConstInt,
    DataType,
    ForKind,
    ForStmt,
    IfStmt,
    Program,
    ScalarType,
    SeqStmts,
    TensorType,
    Var,
    YieldStmt,
)
from pypto.ir.expr import BinaryExpr, BinOp
from pypto.ir.ops.registry import make_call
from pypto.ir.properties import IRProperty
from pypto.ir.stmt import flatten
from pypto.ir.verifier import verify
from pypto.passes import get_pass


def _loop_program(kind: ForKind = ForKind.Sequential) -> Program:
    """acc = a; for i in range(3): acc = acc + a; return acc  (acc rebound by name in the loop)."""
    a, out = tensor("a", 16, 16), tensor("out", 16, 16)
    acc0 = Var("acc", a.var_type)
    acc1 = Var("acc", a.var_type)
    i = Var("i", ScalarType(DataType.INDEX))
    body = AssignStmt(acc1, make_call("tensor.add", [acc0, a]))
    loop = ForStmt(i, ConstInt(0), ConstInt(3), ConstInt(1), body, kind=kind)
    return Program("p", (orch("f", [a, out], [IN, OUT], [AssignStmt(acc0, a), loop], acc1),))


def test_loop_carried_name_becomes_iter_arg():
    prog = get_pass("ConvertToSSA")().run(_loop_program())
    stmts = flatten(prog.functions[0].body)
    loop = stmts[1]
    assert isinstance(loop, ForStmt)
    assert [ia.name for ia in loop.iter_args] == ["acc__iter_v0"]
    assert loop.inits[0] is stmts[0].var
    assert loop.loop_var.name == "i__idx_v0"
    last = flatten(loop.body)[-1]
    assert isinstance(last, YieldStmt) and last.values[0] is flatten(loop.body)[0].var
    assert stmts[-1].values[0] is loop.return_vars[0]
    assert verify(prog, {IRProperty.SSAForm, IRProperty.UseAfterDef}) == []


def test_if_assignments_become_phis():
    a, out = tensor("a", 16, 16), tensor("out", 16, 16)
    x0, x1, x2 = (Var("x", a.var_type) for _ in range(3))
    n = Var("n", ScalarType(DataType.INDEX))
    cond = BinaryExpr(BinOp.Lt, n, ConstInt(4), DataType.BOOL)
    branch = IfStmt(cond, AssignStmt(x1, make_call("tensor.add", [x0, a])), AssignStmt(x2, make_call("tensor.mul", [x0, a])))
    prog = Program("p", (orch("f", [a, n, out], [IN, IN, OUT], [AssignStmt(x0, a), branch], x2),))
    prog = get_pass("ConvertToSSA")().run(prog)
    stmts = flatten(prog.functions[0].body)
    ifs = stmts[1]
    assert len(ifs.return_vars) == 1
    assert isinstance(flatten(ifs.then_body)[-1], YieldStmt) and isinstance(flatten(ifs.else_body)[-1], YieldStmt)
    assert stmts[-1].values[0] is ifs.return_vars[0]
    assert verify(prog, {IRProperty.SSAForm}) == []


def test_unroll_expands_with_constants():
    prog = get_pass("UnrollLoops")().run(_loop_program(ForKind.Unroll))
    stmts = flatten(prog.functions[0].body)
    assert not any(isinstance(s, ForStmt) for s in stmts)
    assert sum(isinstance(s, AssignStmt) for s in stmts) == 4


def test_flatten_call_expr_creates_tmp():
    prog = get_pass("ConvertToSSA")().run(add_program())
    prog = get_pass("FlattenCallExpr")().run(prog)
    scope = flatten(prog.functions[0].body)[0]
    first, second = flatten(scope.body)
    assert first.var.name == "t__tmp_v0" and first.value.op == "tensor.add"
    assert second.value.args[1] is first.var


def test_break_becomes_a_guard_flag():
    a, out = tensor("a", 16, 16), tensor("out", 16, 16)
    i = Var("i", ScalarType(DataType.INDEX))
    loop = ForStmt(i, ConstInt(0), ConstInt(3), ConstInt(1), SeqStmts((BreakStmt(),)))
    prog = Program("p", (orch("f", [a, out], [IN, OUT], [loop], out),))
    text = get_pass("CtrlFlowTransform")().run(prog).as_python()
    assert "broke: pl.Scalar[pl.BOOL] = False" in text and "if not broke:" in text and "break" not in text


def test_pipeline_loops_are_lowered_to_stage_copies_once():
    prog = _loop_program(ForKind.Pipeline)
    loop = flatten(prog.functions[0].body)[1]
    prog = Program("p", (prog.functions[0].with_(body=SeqStmts((flatten(prog.functions[0].body)[0],
        dataclasses.replace(loop, attrs={"pipeline_stages": 3})))),))
    lowered = get_pass("LowerPipelineLoops")().run(get_pass("ConvertToSSA")().run(prog))
    new = [s for s in flatten(lowered.functions[0].body) if isinstance(s, ForStmt)]
    assert len(new) == 1 and new[0].attrs["pipeline_stages"] == 1 and new[0].step.value == 3
    assert len([s for s in flatten(new[0].body) if isinstance(s, AssignStmt)]) == 3  # one copy per stage
    assert get_pass("LowerPipelineLoops")().run(lowered) is lowered  # a second run changes nothing


def test_nd_tiles_with_constant_leading_dims_flatten_to_2d():
    t = tensor("t", 2, 16, 16)
    tile = make_call("tile.load", [t, ints(0, 0, 0), ints(2, 16, 16), ints(2, 16, 16)])
    v = Var("x", tile.result_type)
    prog = Program("p", (orch("f", [t], [IN], [AssignStmt(v, tile)], t),))
    out = get_pass("FlattenTileNdTo2D")().run(prog)
    (stmt,) = [s for s in flatten(out.functions[0].body) if isinstance(s, AssignStmt)]
    assert tuple(stmt.var.var_type.shape) == (32, 16)  # row-major: [2, 16, 16] -> [2 * 16, 16]


def test_fp32_tensor_type_helper():
    assert tensor("z", 4, 4).var_type == TensorType((4, 4), FP32)
