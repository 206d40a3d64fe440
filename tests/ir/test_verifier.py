"""The IR verifier: each checked property reports violations with rule, code and span."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "passes"))
from kernels import IN, OUT, add_program, orch, tensor  # noqa: E402

from pypto.errors import VerificationError  # noqa: E402
from pypto.ir import (  # noqa: E402
    AssignStmt,
    BreakStmt,
    ConstInt,
    DataType,
    ForStmt,
    FunctionType,
    IterArg,
    Program,
    RuntimeScopeStmt,
    SeqStmts,
    Span,
    TensorType,
    Var,
    YieldStmt,
)
from pypto.ir.ops.registry import make_call  # noqa: E402
from pypto.ir.properties import STRUCTURAL, VERIFIED, IRProperty  # noqa: E402
from pypto.ir.verifier import CHECKERS, verify, verify_or_raise  # noqa: E402
from pypto.passes.context import PassContext  # noqa: E402
from pypto.passes.manager import run_pipeline  # noqa: E402


def test_every_verified_property_has_a_checker():
    assert VERIFIED <= set(CHECKERS)
    assert len(IRProperty) == 41


def test_lowered_program_satisfies_all_verified_properties():
    prog = run_pipeline(add_program(), ctx=PassContext()).program
    assert verify(prog, VERIFIED) == []


def test_input_program_is_structurally_valid():
    assert verify(add_program(), STRUCTURAL) == []


def test_multiple_assignment_is_ssa_error_code_1():
    a = tensor("a", 4, 4)
    x = Var("x", a.var_type)
    span = Span("k.py", 3, 5)
    prog = Program("p", (orch("f", [a], [IN], [AssignStmt(x, a), AssignStmt(x, a, span=span)], x),))
    [d] = verify(prog, {IRProperty.SSAForm})
    assert (d.rule, d.code, d.span) == ("SSAForm", 1, span)
    with pytest.raises(VerificationError, match=r"\[SSAForm #1\] variable 'x' is assigned more than once") as ei:
        verify_or_raise(prog, {IRProperty.SSAForm})
    assert ei.value.diagnostics[0].code == 1


def test_use_before_def_code_401():
    a = tensor("a", 4, 4)
    ghost = Var("ghost", a.var_type)
    x = Var("x", a.var_type)
    prog = Program("p", (orch("f", [a], [IN], [AssignStmt(x, make_call("tensor.add", [a, ghost]))], x),))
    [d] = verify(prog, {IRProperty.UseAfterDef})
    assert d.code == 401 and "ghost" in d.message


def _scoped_carry_loop(with_yield: bool) -> Program:
    """``for i in range(4): x = a + x`` whose body (yield included) sits in a runtime scope, the
    shape MaterializeRuntimeScopes gives an orchestration loop that a re-lowering then re-verifies."""
    a = tensor("a", 4, 4)
    acc = IterArg("x__iter", a.var_type)
    x, out = Var("x", a.var_type), Var("x__rv", a.var_type)
    body = [AssignStmt(x, make_call("tensor.add", [a, acc]))] + ([YieldStmt((x,))] if with_yield else [])
    loop = ForStmt(Var("i", ConstInt(0).type), ConstInt(0), ConstInt(4), ConstInt(1),
                   RuntimeScopeStmt(SeqStmts(tuple(body))), iter_args=(acc,), inits=(a,), return_vars=(out,))
    return Program("p", (orch("f", [a], [IN], [loop], out),))


def test_yield_at_the_end_of_a_runtime_scope_ends_the_loop_body():
    assert verify(_scoped_carry_loop(with_yield=True), {IRProperty.SSAForm}) == []
    [d] = verify(_scoped_carry_loop(with_yield=False), {IRProperty.SSAForm})
    assert (d.rule, d.code) == ("SSAForm", 3)


def test_type_mismatch_code_101():
    a = tensor("a", 4, 4)
    x = Var("x", TensorType((4, 4), DataType.FP16))
    prog = Program("p", (orch("f", [a], [IN], [AssignStmt(x, a)], x),))
    [d] = verify(prog, {IRProperty.TypeChecked})
    assert d.code == 101


def test_break_outside_loop():
    a = tensor("a", 4, 4)
    prog = Program("p", (orch("f", [a], [IN], [BreakStmt()], a),))
    [d] = verify(prog, {IRProperty.BreakContinueValid})
    assert "outside a loop" in d.message


def test_nested_block_is_redundant():
    a = tensor("a", 4, 4)
    x = Var("x", a.var_type)
    prog = Program("p", (orch("f", [a], [IN], [SeqStmts((AssignStmt(x, a),))], x),))
    assert [d.rule for d in verify(prog, {IRProperty.NoRedundantBlocks})] == ["NoRedundantBlocks"]


def test_missing_call_directions_and_runtime_scopes():
    prog = run_pipeline(add_program(), ctx=PassContext()).program
    from pypto.passes import get_pass

    assert get_pass("DeriveCallDirections")().run(prog) is prog
    raw = add_program()
    from pypto.passes.pipelines import DEFAULT

    for name in DEFAULT[:DEFAULT.index("AllocateMemoryAddr") + 1]:
        raw = get_pass(name)().run(raw)
    rules = {d.rule for d in verify(raw, {IRProperty.CallDirectionsResolved, IRProperty.RuntimeScopesMaterialized})}
    assert rules == {"CallDirectionsResolved", "RuntimeScopesMaterialized"}


def test_incore_left_over_breaks_mixed_kernel_expanded():
    prog = run_pipeline(add_program(), ctx=PassContext()).program
    kernel = prog.functions[0].with_(func_type=FunctionType.InCore)
    bad = prog.with_functions([kernel, prog.functions[1]])
    assert [d.code for d in verify(bad, {IRProperty.MixedKernelExpanded})] == [601]


def test_unchanged_functions_are_checked_once_and_new_ones_always(monkeypatch: pytest.MonkeyPatch):
    """Per-function checkers run once per Function object (the IR is immutable); a new one is checked."""
    import pypto.ir.verifier as verifier

    a = tensor("a", 4, 4)
    x = Var("x", a.var_type)
    good = orch("f", [a], [IN], [AssignStmt(x, a)], x)
    seen: list[object] = []
    real = verifier.defined_by  # read by the SSA checker for every statement it checks

    def counting(stmt):
        seen.append(stmt)
        return real(stmt)

    monkeypatch.setattr(verifier, "defined_by", counting)
    prog = Program("p", (good,))
    assert verify(prog, {IRProperty.SSAForm, IRProperty.ReturnParamsExplicit}) == []
    checked = len(seen)
    assert checked > 0
    assert verify(Program("p", (good,)), {IRProperty.SSAForm}) == []  # another Program, the same function
    assert len(seen) == checked  # not checked again
    bad = orch("f", [a], [IN], [AssignStmt(x, a), AssignStmt(x, a)], x)
    [d] = verify(Program("p", (bad,)), {IRProperty.SSAForm})
    assert d.code == 1 and len(seen) > checked


def test_a_caller_is_checked_again_when_a_callee_signature_changes():
    """TypeChecked and InOutUseValid remember each caller's findings, keyed by its callees' arity and
    directions: the same caller object next to a changed callee is checked again."""
    from pypto.ir import Call, GlobalVar

    a, o = tensor("a", 4, 4), tensor("o", 4, 4)
    y, z = Var("y", a.var_type), Var("z", a.var_type)
    call = Call(GlobalVar("g"), (a, o), result_type=a.var_type)
    caller = orch("f", [a, o], [IN, OUT], [AssignStmt(y, call), AssignStmt(z, o)], z)
    g_in = orch("g", [a, o], [IN, IN], [], o)
    g_out = orch("g", [a, o], [IN, OUT], [], o)
    g_one = orch("g", [a], [IN], [], a)
    props = {IRProperty.TypeChecked, IRProperty.InOutUseValid}
    assert verify(Program("p", (g_in, caller)), props) == []
    [d] = verify(Program("p", (g_out, caller)), props)  # o read after it was passed as Out
    assert d.rule == "InOutUseValid"
    [d] = verify(Program("p", (g_one, caller)), props)  # g now takes one argument
    assert d.rule == "TypeChecked" and d.code == 102
    assert verify(Program("p", (g_in, caller)), props) == []
    [d] = verify(Program("p", (caller,)), {IRProperty.TypeChecked})  # g gone
    assert "unknown function 'g'" in d.message
