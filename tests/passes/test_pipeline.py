"""PassManager, pipeline lists, planner handling, timings and the driver entry point."""

from __future__ import annotations

import pytest
from kernels import add_program, chunked_add_program, matmul_acc_program

from pypto.ir import FunctionType, MemoryPlanner, OptimizationStrategy, ParamDirection, VerificationLevel
from pypto.ir.stmt import RuntimeScopeStmt, flatten
from pypto.passes import REGISTRY, get_pass
from pypto.passes.context import PassContext
from pypto.passes.manager import PassManager, run_pipeline
from pypto.passes.pipelines import DEFAULT, OWN_SLOTS, pass_names


def test_default_pipeline_has_49_upstream_names_in_order_and_our_slots():
    assert len(DEFAULT) == 54 and OWN_SLOTS < set(DEFAULT)
    upstream = [n for n in DEFAULT if n not in OWN_SLOTS]
    assert len(upstream) == 49
    assert upstream[0] == "InlineFunctions" and upstream[3] == "ConvertToSSA"
    assert upstream[8] == "OutlineIncoreScopes" and upstream[21] == "ExpandMixedKernel"
    assert upstream[44] == "Simplify" and upstream[48] == "MaterializeValidShapeSymbols"
    assert DEFAULT[1] == "HoistScopeGathers"
    assert DEFAULT[9:13] == ("OutlineIncoreScopes", "GatherCarriedReads", "HoistKernelReads", "LiftReadLoops")
    assert DEFAULT[19:21] == ("AutoTileMatmulL0", "PeelFirstIterations")
    assert all(name in REGISTRY for name in DEFAULT)


@pytest.mark.parametrize(("planner", "count", "missing"), [
    (MemoryPlanner.PYPTO, 54, set()),
    (MemoryPlanner.DSA_RP, 53, {"MemoryReuse"}),
    (MemoryPlanner.PTOAS, 52, {"MemoryReuse", "AllocateMemoryAddr"}),
])
def test_pass_counts_per_planner(planner, count, missing):
    with PassContext(memory_planner=planner):
        pm = PassManager.get_strategy(OptimizationStrategy.Default)
    assert len(pm.passes) == count == len(pm.pass_names)
    assert missing.isdisjoint(pm.pass_names)
    assert "LowerPipelineToSlots" in pm.pass_names


def test_unknown_strategy_is_rejected():
    with pytest.raises(ValueError, match="Unsupported optimization strategy"):
        pass_names("Fast")  # type: ignore[arg-type]


def test_planner_mismatch_raises():
    with PassContext(memory_planner=MemoryPlanner.PTOAS):
        pm = PassManager.get_strategy()
    with PassContext(memory_planner=MemoryPlanner.PYPTO), pytest.raises(RuntimeError, match=(
            "PassManager was constructed under memory_planner=PTOAS but is being run under")):
        pm.run_passes(add_program())


def test_get_pass_accepts_snake_case():
    assert get_pass("convert_to_ssa") is get_pass("ConvertToSSA")
    with pytest.raises(KeyError, match="unknown pass"):
        get_pass("NoSuchPass")


def test_context_current_and_nesting():
    assert PassContext.current() is None
    with PassContext() as outer:
        with PassContext(memory_planner=MemoryPlanner.DSA_RP) as inner:
            assert PassContext.current() is inner
        assert PassContext.current() is outer
    assert PassContext.current() is None


def test_run_pipeline_add_shape():
    result = run_pipeline(add_program(), ctx=PassContext())
    kernel, orch = result.program.functions
    assert (kernel.name, kernel.func_type) == ("add_incore_0", FunctionType.AIV)
    assert kernel.param_directions == (ParamDirection.In, ParamDirection.In, ParamDirection.Out)
    assert orch.func_type is FunctionType.Orchestration and orch.attrs["auto_scope"] is False
    assert isinstance(flatten(orch.body)[0], RuntimeScopeStmt)
    assert [n for n, _ in result.pass_times] == list(DEFAULT)
    assert all(t >= 0 for _, t in result.pass_times)


@pytest.mark.parametrize("make", [add_program, chunked_add_program, matmul_acc_program])
@pytest.mark.parametrize("planner", list(MemoryPlanner))
def test_all_kernels_all_planners(make, planner):
    ctx = PassContext(memory_planner=planner, verification_level=VerificationLevel.BASIC)
    result = run_pipeline(make(), ctx=ctx)
    assert not any(f.func_type is FunctionType.InCore for f in result.program.functions)


def test_untouched_passes_return_same_object():
    prog = run_pipeline(add_program(), ctx=PassContext()).program
    for name in ("Simplify", "FlattenTileNdTo2D", "NormalizeStmtStructure", "ExpandMixedKernel"):
        assert get_pass(name)().run(prog) is prog


def test_pass_objects_are_built_once_per_set_of_options():
    from pypto.ir.options import BackendType
    from pypto.passes.context import PassContext
    from pypto.passes.manager import PassManager

    names = ("ConvertToSSA", "AllocateMemoryAddr")
    first = PassManager(names, PassContext())
    again = PassManager(names, PassContext())
    other = PassManager(names, PassContext(backend_type=BackendType.Ascend950))
    assert all(a is b for a, b in zip(first.passes, again.passes, strict=True))
    assert other.passes[1] is not first.passes[1] and other.passes[1].backend is BackendType.Ascend950
