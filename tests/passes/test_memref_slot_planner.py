"""Declared multi-slot buffers through the pipeline: LowerPipelineLoops resolves ``buf[i % N]`` to constant
slots, refuses an index that leaves the buffer, and under memory_planner=PTOAS refuses two slots of one
buffer taken in one loop iteration (upstream's rule), with a located error and a way out."""

from __future__ import annotations

import pytest

import pypto.language as pl
from pypto import ir
from pypto.driver import lower
from pypto.errors import PartialCodegenError, UnsupportedFeatureError, UserError
from pypto.ir import MemoryPlanner
from pypto.ir.stmt import AssignStmt, ForStmt, preorder

H = "import pypto.language as pl\nBUF = pl.MemRef(slots=2)\nOTHER = pl.MemRef(slots=2)\n"
V = "pl.Tensor[[128, 32], pl.FP32]"


def _prog(body: str) -> str:
    return H + f"""
@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: {V}, b: {V}, out: pl.Out[{V}]) -> {V}:
{body}
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: {V}, b: {V}, out: pl.Out[{V}]) -> {V}:
        out = self.k(a, b, out)
        return out
"""


def _tile(name: str, slot: str, src: str = "a", row: str = "i * 32") -> str:
    return (f"{name}: pl.Tile[[32, 32], pl.FP32, {slot}, pl.Mem.Vec] = "
            f"pl.load({src}, [{row}, 0], [32, 32], target_memory=pl.Mem.Vec)")


COLIVE = _prog(f"""        for i in pl.range(4):
            {_tile("lo", "BUF[i % 2]")}
            {_tile("hi", "BUF[(i + 1) % 2]", "b")}
            out = pl.store(pl.add(lo, hi), [i * 32, 0], out)""")

ONE_PER_ITERATION = _prog(f"""        for i in pl.range(4):
            {_tile("t", "BUF[i % 2]")}
            out = pl.store(pl.exp(t), [i * 32, 0], out)""")

SIBLING_LOOPS = _prog(f"""        for i in pl.range(2):
            {_tile("t", "BUF[i % 2]")}
            out = pl.store(pl.exp(t), [i * 32, 0], out)
        for j in pl.range(2, 4):
            {_tile("u", "BUF[j % 2]", row="j * 32")}
            out = pl.store(pl.neg(u), [j * 32, 0], out)""")

TWO_BUFFERS = _prog(f"""        for i in pl.range(4):
            {_tile("lo", "BUF[i % 2]")}
            {_tile("hi", "OTHER[i % 2]", "b")}
            out = pl.store(pl.add(lo, hi), [i * 32, 0], out)""")

STRAIGHT_CONSTANT = _prog(f"""        i = 0
        {_tile("lo", "BUF[0]")}
        {_tile("hi", "BUF[1]", "b")}
        out = pl.store(pl.sub(lo, hi), [0, 0], out)""")


def _kernel(prog):
    return next(f for f in prog.functions if f.name == "k")


def _slots(func) -> list[tuple[str, int]]:
    return [(s.var.name.split("__")[0], s.var.var_type.memref.slot) for s in preorder(func.body)
            if isinstance(s, AssignStmt) and getattr(s.var.var_type, "memref", None) is not None
            and s.var.var_type.memref.slots > 1]


def test_ptoas_refuses_two_slots_of_one_buffer_in_one_iteration(tmp_path):
    with pytest.raises(PartialCodegenError) as ei:
        ir.compile(pl.parse(COLIVE), memory_planner=MemoryPlanner.PTOAS, skip_ptoas=True, output_dir=tmp_path / "o")
    err = ei.value.user_error
    assert isinstance(err, UnsupportedFeatureError) and ei.value.files == {}
    assert err.message.startswith("'lo' and 'hi' take two slots of pl.MemRef 'BUF' in one iteration of a loop "
                                  "(line 9); under memory_planner=PTOAS")
    assert "pto.alloc_multi_tile, not in ptoas 0.1.1" in err.message and "ptoas 0.54" in err.message
    assert (err.span.line, err.span.col) == (11, 13)  # hi, the second slot taken
    assert "memory_planner=MemoryPlanner.PYPTO" in err.hint and "'hi' a pl.MemRef(slots=N)" in err.hint
    assert "error: 'lo' and 'hi'" in str(ei.value)


@pytest.mark.parametrize("planner", [MemoryPlanner.PYPTO, MemoryPlanner.DSA_RP])
def test_the_pypto_planners_take_co_live_slots_and_unroll_them_apart(planner):
    k = _kernel(lower(pl.parse(COLIVE), memory_planner=planner))
    assert _slots(k) == [("lo", 0), ("hi", 1), ("lo", 1), ("hi", 0)]  # i = 0 and i = 1 of each pair
    loop = next(s for s in preorder(k.body) if isinstance(s, ForStmt))
    assert loop.step.value == 2


@pytest.mark.parametrize("src", [ONE_PER_ITERATION, SIBLING_LOOPS, TWO_BUFFERS, STRAIGHT_CONSTANT],
                         ids=["one_per_iteration", "sibling_loops", "two_buffers", "straight_constant"])
def test_ptoas_takes_one_slot_per_iteration(src):
    k = _kernel(lower(pl.parse(src), memory_planner=MemoryPlanner.PTOAS))
    assert all(isinstance(slot, int) for _, slot in _slots(k))


def test_dynamic_slot_leaving_the_buffer_is_a_located_error():
    src = ONE_PER_ITERATION.replace("BUF[i % 2]", "BUF[i % 3]")
    with pytest.raises(UserError, match=r"the slot index of 't' reaches 2 \(at i = 2\), out of range for its "
                                        r"pl.MemRef of 2 slots") as ei:
        lower(pl.parse(src))
    assert (ei.value.span.line, ei.value.span.col) == (10, 13)
    assert "0..1" in ei.value.hint


def test_ptoas_compiles_its_own_lowered_form_again(tmp_path):
    """The unrolled loop holds two constant slots of BUF; compiling the lowered program must not refuse it."""
    lowered = lower(pl.parse(ONE_PER_ITERATION), memory_planner=MemoryPlanner.PTOAS)
    assert len(_slots(_kernel(lowered))) == 2
    ir.compile(lowered, memory_planner=MemoryPlanner.PTOAS, skip_ptoas=True, output_dir=tmp_path / "o")


def test_ptoas_refuses_a_constant_and_a_rotating_slot_in_one_iteration(tmp_path):
    src = COLIVE.replace("BUF[(i + 1) % 2]", "BUF[0]")
    with pytest.raises(PartialCodegenError, match="'lo' and 'hi' take two slots of pl.MemRef 'BUF'"):
        ir.compile(pl.parse(src), memory_planner=MemoryPlanner.PTOAS, skip_ptoas=True, output_dir=tmp_path / "o")
