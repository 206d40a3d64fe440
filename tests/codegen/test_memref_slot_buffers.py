"""``pl.MemRef(slots=N)`` buffers on both CPU simulators, under the PYPTO and PTOAS planners, against numpy.

ptoas 0.1.1 has no multi-buffer region, so each tile definition on a declared buffer gets an
``alloc_tile`` of its own and a rotating ``buf[i % N]`` is unrolled N ways: slots that are live together
never share bytes. Each program reads its inputs in an order where a collapsed, swapped or stale slot
gives a visibly wrong result (distinct values per element, a non-commutative combine).
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.ir import MemoryPlanner
from pypto.ir.options import VerificationLevel

PLATFORMS = ["a2a3sim", "a5sim"]
PLANNERS = [MemoryPlanner.PYPTO, MemoryPlanner.PTOAS]
H = "import pypto.language as pl\nBUF = pl.MemRef(slots=2)\nACC = pl.MemRef(slots=2)\n"
V = "pl.Tensor[[160, 32], pl.FP32]"
W = "pl.Tensor[[32, 32], pl.FP32]"


@pytest.fixture(autouse=True)
def _cwd(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


def _ramp(rows: int, cols: int, scale: float, bias: float) -> np.ndarray:
    return ((np.arange(rows * cols, dtype=np.float32).reshape(rows, cols) * scale + bias) / (rows * cols))


def _run(src: str, platform: str, planner: MemoryPlanner, *arrays: np.ndarray) -> str:
    """Compile (every pass dump printed and parsed back), run, and return the kernel's .pto text."""
    compiled = ir.compile(pl.parse(src), platform=platform, memory_planner=planner,
                          verification_level=VerificationLevel.ROUNDTRIP)
    compiled(*arrays)
    return next(p for p in Path(compiled.output_dir).glob("ptoas/*.pto") if "orch" not in p.name).read_text()


def _prog(params: str, ret: str, body: str, args: str) -> str:
    return H + f"""
@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, {params}, out: pl.Out[{ret}]) -> {ret}:
{body}
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, {params}, out: pl.Out[{ret}]) -> {ret}:
        out = self.k({args}, out)
        return out
"""


CONSTANT = _prog(f"a: {W}, b: {W}", W, """\
        lo: pl.Tile[[32, 32], pl.FP32, BUF[0], pl.Mem.Vec] = pl.load(a, [0, 0], [32, 32], target_memory=pl.Mem.Vec)
        hi: pl.Tile[[32, 32], pl.FP32, BUF[1], pl.Mem.Vec] = pl.load(b, [0, 0], [32, 32], target_memory=pl.Mem.Vec)
        out = pl.store(pl.sub(pl.muls(lo, 2.0), hi), [0, 0], out)""", "a, b")

ROTATING = _prog(f"a: {V}", W, """\
        first: pl.Tile[[32, 32], pl.FP32, pl.Mem.Vec] = pl.load(a, [0, 0], [32, 32], target_memory=pl.Mem.Vec)
        for i, (acc,) in pl.range(1, 5, init_values=(first,)):
            t: pl.Tile[[32, 32], pl.FP32, BUF[i % 2], pl.Mem.Vec] = pl.load(a, [i * 32, 0], [32, 32],
                                                                            target_memory=pl.Mem.Vec)
            nxt: pl.Tile[[32, 32], pl.FP32, pl.Mem.Vec] = pl.sub(pl.muls(acc, 0.5), t)
            r = pl.yield_(nxt)
        out = pl.store(r, [0, 0], out)""", "a")

COLIVE = _prog(f"a: {V}, b: {V}", V, """\
        for i in pl.range(5):
            lo: pl.Tile[[32, 32], pl.FP32, BUF[i % 2], pl.Mem.Vec] = pl.load(a, [i * 32, 0], [32, 32],
                                                                             target_memory=pl.Mem.Vec)
            hi: pl.Tile[[32, 32], pl.FP32, BUF[(i + 1) % 2], pl.Mem.Vec] = pl.load(b, [i * 32, 0], [32, 32],
                                                                                   target_memory=pl.Mem.Vec)
            out = pl.store(pl.sub(lo, hi), [i * 32, 0], out)""", "a, b")

ACC_ROTATING = _prog(f"a: {W}, b: pl.Tensor[[32, 128], pl.FP32]", "pl.Tensor[[32, 128], pl.FP32]", """\
        la: pl.Tile[[32, 32], pl.FP32, pl.Mem.Mat] = pl.load(a, [0, 0], [32, 32], target_memory=pl.Mem.Mat)
        for j in pl.range(4):
            lb: pl.Tile[[32, 32], pl.FP32, pl.Mem.Mat] = pl.load(b, [0, j * 32], [32, 32], target_memory=pl.Mem.Mat)
            c: pl.Tile[[32, 32], pl.FP32, ACC[j % 2], pl.Mem.Acc] = pl.tile.matmul(la, lb)
            out = pl.store(c, [0, j * 32], out)""", "a, b")


@pytest.mark.parametrize("planner", PLANNERS, ids=lambda p: p.name)
@pytest.mark.parametrize("platform", PLATFORMS)
def test_constant_slots_live_together_keep_apart(platform, planner):
    a, b = _ramp(32, 32, 1.0, 0.0), _ramp(32, 32, -3.0, 7.0)
    out = np.zeros((32, 32), np.float32)
    pto = _run(CONSTANT, platform, planner, a, b, out)
    np.testing.assert_allclose(out, 2 * a - b, rtol=1e-6, atol=1e-6)
    assert "%lo = pto.alloc_tile" in pto and "%hi = pto.alloc_tile" in pto


@pytest.mark.parametrize("planner", PLANNERS, ids=lambda p: p.name)
@pytest.mark.parametrize("platform", PLATFORMS)
def test_rotating_slot_one_per_iteration(platform, planner):
    a = _ramp(160, 32, 1.0, 0.5)
    out = np.zeros((32, 32), np.float32)
    pto = _run(ROTATING, platform, planner, a, out)
    want = a[:32].copy()
    for i in range(1, 5):
        want = want * 0.5 - a[i * 32:(i + 1) * 32]
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-6)
    # i % 2 is resolved by unrolling the loop 2 ways: each slot is a tile of its own
    loop = pto[pto.index("scf.for"):]
    assert "step %c2" in loop.splitlines()[0] and "arith.remsi" not in pto
    loads = re.findall(r"pto\.tload ins\([^)]*\) outs\(%(t(?:_\d+)?) :", loop)
    assert len(loads) == 2 and loads[0] != loads[1]


@pytest.mark.parametrize("platform", PLATFORMS)
def test_two_slots_live_in_one_iteration_under_pypto(platform):
    a, b = _ramp(160, 32, 1.0, 0.0), _ramp(160, 32, -2.0, 3.0)
    out = np.zeros((160, 32), np.float32)
    _run(COLIVE, platform, MemoryPlanner.PYPTO, a, b, out)
    np.testing.assert_allclose(out, a - b, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("planner", PLANNERS, ids=lambda p: p.name)
@pytest.mark.parametrize("platform", PLATFORMS)
def test_acc_slots_rotate_matmul_results(platform, planner):
    a, b = _ramp(32, 32, 1.0, 0.0), _ramp(32, 128, 2.0, -1.0)
    out = np.zeros((32, 128), np.float32)
    _run(ACC_ROTATING, platform, planner, a, b, out)
    np.testing.assert_allclose(out, a @ b, rtol=1e-4, atol=1e-4)
