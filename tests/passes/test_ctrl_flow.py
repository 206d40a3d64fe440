"""CtrlFlowTransform: break/continue become if-structured bodies (+ a loop-carried break flag)."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest
from filecheck import filecheck

import pypto.language as pl
from pypto.errors import UnsupportedFeatureError
from pypto.ir import ForKind, ForStmt, YieldStmt
from pypto.ir.properties import IRProperty
from pypto.ir.stmt import flatten
from pypto.ir.structural import assert_structural_equal
from pypto.ir.verifier import verify
from pypto.passes import get_pass

HEADER = """
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.Orchestration)
    def f(self, n: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
"""


def _prog(body: str) -> pl.Program:
    return pl.parse(HEADER + textwrap.indent(textwrap.dedent(body), " " * 8))


def _sum_loop(skip: str | None = None, stop: str | None = None) -> pl.Program:
    """``s`` sums ``i`` over ``pl.range(8)``; ``skip``: the condition of a ``continue`` before the add,
    ``stop``: the condition of a ``break`` after it."""
    lines = ["s: pl.Scalar[pl.INDEX] = 0", "for i in pl.range(8):"]
    if skip is not None:
        lines += [f"    if {skip}:", "        continue"]
    lines.append("    s = s + i")
    if stop is not None:
        lines += [f"    if {stop}:", "        break"]
    return _prog("\n".join([*lines, "return s"]))


def _transform(prog):
    return get_pass("CtrlFlowTransform")().run(prog)


def _ssa(prog):
    """Before SSA a rebound name is resolved by name, so compare programs after ConvertToSSA."""
    return get_pass("ConvertToSSA")().run(prog)


def test_continue_moves_the_rest_into_the_fall_through_branch():
    before = _sum_loop(skip="i == n")
    expected = _prog("""
        s: pl.Scalar[pl.INDEX] = 0
        for i in pl.range(8):
            if i == n:
                pass
            else:
                s = s + i
        return s
    """)
    assert_structural_equal(_ssa(_transform(before)), _ssa(expected))


def test_break_sets_a_flag_that_guards_the_body():
    before = _prog("""
        s: pl.Scalar[pl.INDEX] = 0
        for i in pl.range(8):
            s = s + i
            if i == n:
                break
            s = s + 1
        return s
    """)
    expected = _prog("""
        s: pl.Scalar[pl.INDEX] = 0
        broke: pl.Scalar[pl.BOOL] = False
        for i in pl.range(8):
            if not broke:
                s = s + i
                if i == n:
                    broke = True
                else:
                    s = s + 1
        return s
    """)
    assert_structural_equal(_ssa(_transform(before)), _ssa(expected))


def test_nested_loops_get_their_own_flags():
    prog = _transform(_prog("""
        s: pl.Scalar[pl.INDEX] = 0
        for i in pl.range(4):
            for j in pl.range(4):
                if j == n:
                    break
                s = s + j
            if i == n:
                break
        return s
    """))
    text = prog.as_python()
    assert "broke: pl.Scalar[pl.BOOL] = False" in text and "broke_1: pl.Scalar[pl.BOOL] = False" in text
    assert "break" not in text and "continue" not in text


def test_break_and_continue_with_init_values_convert_to_ssa():
    prog = _transform(_prog("""
        for i, (acc,) in pl.range(8, init_values=(0,)):
            if i == 3:
                continue
            if i == n:
                break
            acc2: pl.Scalar[pl.INDEX] = acc + i
            r = pl.yield_(acc2)
        return r
    """))
    loop = next(s for s in flatten(prog.functions[0].body) if isinstance(s, ForStmt))
    assert isinstance(flatten(loop.body)[-1], YieldStmt)
    ssa = get_pass("ConvertToSSA")().run(prog)
    assert verify(ssa, {IRProperty.SSAForm, IRProperty.UseAfterDef}) == []
    loop = next(s for s in flatten(ssa.functions[0].body) if isinstance(s, ForStmt))
    assert [ia.name.split("__")[0] for ia in loop.iter_args] == ["acc", "broke"]


def test_break_in_while_joins_the_condition():
    prog = _transform(_prog("""
        for (k,) in pl.while_(init_values=(0,)):
            pl.cond(k < 10)
            if k == n:
                break
            k2: pl.Scalar[pl.INDEX] = k + 1
            r = pl.yield_(k2)
        return r
    """))
    assert "pl.cond(k < 10 and not broke)" in prog.as_python().replace("(k < 10) and", "k < 10 and")
    ssa = get_pass("ConvertToSSA")().run(prog)
    assert verify(ssa, {IRProperty.SSAForm, IRProperty.UseAfterDef}) == []


def test_break_in_parallel_loop_is_rejected_with_span():
    prog = _prog("""
        s: pl.Scalar[pl.INDEX] = 0
        for i in pl.parallel(8):
            if i == n:
                break
        return s
    """)
    loop = next(s for s in flatten(prog.functions[0].body) if isinstance(s, ForStmt))
    assert loop.kind is ForKind.Parallel
    with pytest.raises(UnsupportedFeatureError, match="'break' inside a pl.parallel loop") as exc:
        _transform(prog)
    assert exc.value.span.line > 0


def test_only_the_loop_a_jump_leaves_gets_a_flag():
    # the inner break belongs to the inner loop only (an if without else holds it); the outer loop, with
    # no jump of its own, keeps its body; a loop left by continue alone needs no flag
    prog = _transform(_prog("""
        s: pl.Scalar[pl.INDEX] = 0
        for i in pl.range(4):
            for j in pl.range(4):
                if j == n:
                    break
                s = s + j
            s = s + i
        for k in pl.range(4):
            if k == n:
                continue
            s = s + k
        return s
    """))
    text = prog.as_python()
    filecheck(text, """
        CHECK: for i in pl.range(4):
        CHECK-NEXT: broke: pl.Scalar[pl.BOOL] = False
        CHECK-NEXT: for j in pl.range(4):
        CHECK-NEXT: if not broke:
        CHECK: s: pl.Scalar[pl.INDEX] = s + i
        CHECK-NEXT: for k in pl.range(4):
        CHECK-NEXT: if k == n:
        CHECK-NEXT: pass
        CHECK-NOT: broke
        CHECK: return s
    """)
    assert text.count("broke: pl.Scalar[pl.BOOL] = False") == 1 and "broke_1" not in text


def test_the_flag_takes_a_name_the_function_does_not_bind():
    prog = _transform(_prog("""
        broke: pl.Scalar[pl.INDEX] = 1
        broke_1: pl.Scalar[pl.INDEX] = 2
        s: pl.Scalar[pl.INDEX] = broke + broke_1
        for i in pl.range(4):
            if i == n:
                break
            s = s + i
        return s
    """))
    text = prog.as_python()
    filecheck(text, """
        CHECK: broke_2: pl.Scalar[pl.BOOL] = False
        CHECK-NEXT: for i in pl.range(4):
        CHECK-NEXT: if not broke_2:
        CHECK: broke_2: pl.Scalar[pl.BOOL] = True
    """)
    assert "broke_3" not in text


def test_program_without_jumps_is_returned_unchanged():
    prog = _sum_loop()
    assert _transform(prog) is prog


@pl.jit
def _skip_chunk(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]):
    for i in pl.range(4):
        if i == 2:
            continue
        r = i * 16
        with pl.at(level=pl.Level.CORE_GROUP):
            out[r:r + 16, :] = a[r:r + 16, :] + b[r:r + 16, :]
    return out


@pl.jit
def _stop_early(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]):
    for i in pl.range(4):
        r = i * 16
        with pl.at(level=pl.Level.CORE_GROUP):
            out[r:r + 16, :] = a[r:r + 16, :] * b[r:r + 16, :]
        if i == 1:
            break
    return out


@pytest.mark.sim
@pytest.mark.ptoas
@pytest.mark.parametrize("kernel", ["continue", "break"])
def test_orchestration_loop_with_jump_runs_on_a2a3sim(kernel, tmp_path):
    from pypto.runtime import RunConfig

    rng = np.random.default_rng(7)
    a, b = (rng.standard_normal((64, 64)).astype(np.float32) for _ in range(2))
    out = np.zeros_like(a)
    cfg = RunConfig(platform="a2a3sim", save_kernels_dir=str(tmp_path / "build"))
    if kernel == "continue":
        _skip_chunk(a, b, out, config=cfg)
        want = a + b
        want[32:48] = 0
    else:
        _stop_early(a, b, out, config=cfg)
        want = a * b
        want[32:] = 0
    np.testing.assert_allclose(out, want, rtol=1e-6, atol=1e-6)


def test_transformed_program_reparses_identically():
    prog = _transform(_sum_loop(skip="i == 2", stop="i == n"))
    assert_structural_equal(pl.parse(prog.as_python()), prog)
