"""A loop choosing its accumulator on its first iteration (``if kb == 0: matmul else matmul_acc``) keeps the choice
through AutoTileMatmulL0, which K-tiles each branch's matmul in place (two-stage ``pl.pipeline(0, K, k)`` loops);
PeelFirstIterations peels the outer loop and the K loops' ``ko == 0`` choices afterwards."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir, passes
from pypto.ir import MemoryPlanner
from pypto.ir.enums import ForKind
from pypto.ir.expr import Call
from pypto.ir.stmt import AssignStmt, ForStmt, IfStmt, preorder

M, KC, N, CH = 32, 320, 128, 5  # a chunk's [320, 128] f16 block (80 KiB) exceeds L0B: K-tiled


def _source(kc: int = KC, chunks: int = CH) -> str:
    return f"""import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[{M}, {kc * chunks}], pl.FP16], b: pl.Tensor[[{kc * chunks}, {N}], pl.FP16],
             c: pl.Out[pl.Tensor[[{M}, {N}], pl.FP32]]) -> pl.Tensor[[{M}, {N}], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="chunks"):
            acc = pl.create_tensor([{M}, {N}], dtype=pl.FP32)
            for kb in pl.pipeline({chunks}, stage=2):
                k0 = kb * {kc}
                ta = a[:, k0:k0 + {kc}]
                tb = b[k0:k0 + {kc}, 0:{N}]
                if kb == 0:
                    acc = pl.matmul(ta, tb, out_dtype=pl.FP32)
                else:
                    acc = pl.matmul_acc(acc, ta, tb)
            c = pl.assemble(c, acc, [0, 0])
        return c
"""


_PREFIX = ("inline_functions", "unroll_loops", "ctrl_flow_transform", "convert_to_ssa", "simplify",
           "normalize_stmt_structure", "flatten_call_expr", "outline_incore_scopes", "outline_cluster_scopes",
           "convert_tensor_to_tile_ops", "lower_composite_ops", "flatten_tile_nd_to_2d", "auto_tile_matmul_l0")


def _run(program, names, planner=MemoryPlanner.PYPTO):
    with passes.PassContext([], memory_planner=planner):
        for name in names:
            program = getattr(passes, name)()(program)
    return program


def _kernel(program):
    return next(f for f in program.functions if f.is_incore)


def _k_block(program) -> int:
    """The K step of the K-tiled branch loops."""
    steps = {s.step.value for s in preorder(_kernel(program).body) if isinstance(s, ForStmt) and s.step.value > 1}
    (k,) = steps
    return k


@pytest.mark.parametrize("planner", [MemoryPlanner.PYPTO, MemoryPlanner.DSA_RP, MemoryPlanner.PTOAS])
def test_each_branch_gets_a_pipelined_k_loop_inside_the_outer_pipeline(planner):
    program = _run(pl.parse(_source()), _PREFIX, planner)
    printed = ir.python_print(program)
    k = _k_block(program)
    assert k < KC
    assert printed.count(f"pl.pipeline({CH}, stage=2") == 1
    inner = f"pl.pipeline(0, {KC}, {k}, stage=2"
    assert printed.count(inner) == 2
    lines = printed.splitlines()
    outer = next(i for i, ln in enumerate(lines) if f"pl.pipeline({CH}, stage=2" in ln)
    indent = len(lines[outer]) - len(lines[outer].lstrip())
    for i, ln in enumerate(lines):
        if inner in ln:
            assert i > outer and len(ln) - len(ln.lstrip()) > indent
    assert pl.parse(printed) is not None  # the K-tiled form round-trips
    kernel = _kernel(program)
    (choice,) = [s for s in preorder(kernel.body) if isinstance(s, IfStmt) and s.else_body is not None
                 and any(isinstance(x, ForStmt) for x in preorder(s.then_body))]
    # the fresh branch's K loop chooses on its own first block, the accumulating one does not
    assert any(isinstance(x, IfStmt) for x in preorder(choice.then_body))
    assert not any(isinstance(x, IfStmt) for x in preorder(choice.else_body))


def test_peel_first_iterations_runs_after_the_tiling():
    program = _run(pl.parse(_source()), (*_PREFIX, "peel_first_iterations"))
    kernel = _kernel(program)
    assert not [s for s in preorder(kernel.body) if isinstance(s, IfStmt)]
    creates = [s for s in preorder(kernel.body) if isinstance(s, AssignStmt) and isinstance(s.value, Call)
               and s.value.op == "tile.create"]
    assert not creates  # the placeholder accumulators are gone with their choices
    ops = [s.value.op for s in preorder(kernel.body) if isinstance(s, AssignStmt) and isinstance(s.value, Call)
           and s.value.op in ("tile.matmul", "tile.matmul_acc")]
    assert ops[0] == "tile.matmul" and ops.count("tile.matmul") == 1
    outer = [s for s in preorder(kernel.body) if isinstance(s, ForStmt) and s.start.value == 1]
    assert len(outer) == 1 and outer[0].kind is ForKind.Pipeline


def test_an_accumulator_that_fits_with_small_blocks_keeps_its_choice_untiled():
    program = _run(pl.parse(_source(kc=64)), _PREFIX)
    loops = [s for s in preorder(_kernel(program).body) if isinstance(s, ForStmt)]
    assert len(loops) == 1  # nothing to tile: only the outer loop, its choice left for the peel


def test_under_ptoas_blocks_that_cannot_sit_side_by_side_take_the_peeled_grid():
    # 384 / 128 gives three K blocks of 32 KiB per L0B copy: with the peeled first block and two stages ptoas
    # 0.1.1 would need 96 KiB, so the loop is peeled at once and tiled as a loop-carried accumulation
    program = _run(pl.parse(_source(kc=384)), _PREFIX, MemoryPlanner.PTOAS)
    body = _kernel(program).body
    assert not [s for s in preorder(body) if isinstance(s, IfStmt)]
    assert all(s.kind is ForKind.Sequential for s in preorder(body) if isinstance(s, ForStmt))
    shared = ir.python_print(_run(pl.parse(_source(kc=384)), _PREFIX, MemoryPlanner.PYPTO))
    assert shared.count("pl.pipeline(0, 384, ") == 2  # MemoryReuse shares the copies' blocks: K-tiled in place


def test_the_peel_pass_sits_right_after_auto_tile():
    from pypto.passes.pipelines import DEFAULT, OWN_SLOTS

    assert DEFAULT[DEFAULT.index("AutoTileMatmulL0") + 1] == "PeelFirstIterations"
    assert "PeelFirstIterations" in OWN_SLOTS


@pytest.mark.sim
@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
@pytest.mark.parametrize("planner", [MemoryPlanner.PYPTO, MemoryPlanner.DSA_RP, MemoryPlanner.PTOAS])
def test_k_tiled_branches_match_numpy(tmp_path, platform, planner):
    program = pl.parse(_source())
    rng = np.random.default_rng(7)
    a = rng.standard_normal((M, KC * CH)).astype(np.float16)
    b = rng.standard_normal((KC * CH, N)).astype(np.float16)
    c = np.zeros((M, N), np.float32)
    ir.compile(program, output_dir=str(tmp_path), platform=platform, memory_planner=planner)(a, b, c)
    np.testing.assert_allclose(c, a.astype(np.float32) @ b.astype(np.float32), rtol=1e-3, atol=1e-3)


_NESTED = """import pypto.language as pl

@pl.program
class N:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[64, 64], pl.FP32], out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        for i in pl.pipeline(4, stage=2):
            for j in pl.pipeline(2, stage=2):
                t = pl.load(x, [i * 16, j * 32], [16, 32])
                out = pl.store(t, [i * 16, j * 32], out)
        return out
"""


@pytest.mark.parametrize(("planner", "outer_copies"), [(MemoryPlanner.PTOAS, 1), (MemoryPlanner.PYPTO, 2)])
def test_under_ptoas_an_outer_pipeline_around_a_pipeline_keeps_one_stage(planner, outer_copies):
    from pypto.passes.lower_pipeline_loops import LowerPipelineLoops

    program = _run(pl.parse(_NESTED), ("convert_to_ssa", "convert_tensor_to_tile_ops"))
    with passes.PassContext([], memory_planner=planner):
        lowered = LowerPipelineLoops.from_context(passes.PassContext.current())(program)
    outer = next(s for s in preorder(_kernel(lowered).body) if isinstance(s, ForStmt))
    assert outer.attrs["pipeline_stages"] == 1 and outer.step.value == outer_copies
    inner = [s for s in preorder(outer.body) if isinstance(s, ForStmt)]
    assert len(inner) == outer_copies and all(s.step.value == 2 for s in inner)  # the inner loop keeps its stages
