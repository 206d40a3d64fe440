"""``pl.tile.matmul_acc(acc, a, b, init_cond=...)``: a plain matmul where the condition holds.

``init_cond`` is an operand of ``tile.matmul_acc`` (so SSA renaming reaches the loop variable in it). A
loop whose condition is its first iteration (``k == start``) is peeled: the first iteration runs
``tile.matmul``, the rest ``tile.matmul_acc``. A constant picks one of the two; any other condition is
a located error (an Acc tile cannot be chosen between branches in ptoas 0.1.1).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.errors import UserError
from pypto.ir.expr import Call
from pypto.ir.options import VerificationLevel
from pypto.ir.stmt import ForStmt, flatten
from pypto.passes.convert_tensor_to_tile_ops import ConvertTensorToTileOps
from pypto.passes.convert_to_ssa import ConvertToSSA
from pypto.passes.peel_first_iterations import PeelFirstIterations

SRC = """import pypto.language as pl

@pl.program
class SplitK:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[32, 128], pl.FP32], b: pl.Tensor[[128, 64], pl.FP32],
          c: pl.Out[pl.Tensor[[32, 64], pl.FP32]]) -> pl.Tensor[[32, 64], pl.FP32]:
        acc = pl.tile.create([32, 64], pl.FP32, target_memory=pl.MemorySpace.Acc)
        for k0 in pl.range(0, 128, 32):
            a_l1 = pl.load(a, [0, k0], [32, 32], target_memory=pl.MemorySpace.Mat)
            b_l1 = pl.load(b, [k0, 0], [32, 64], target_memory=pl.MemorySpace.Mat)
            a_l0 = pl.move(a_l1, target_memory=pl.MemorySpace.Left)
            b_l0 = pl.move(b_l1, target_memory=pl.MemorySpace.Right)
            acc = pl.tile.matmul_acc(acc, a_l0, b_l0, init_cond=(k0 == 0))
        c = pl.store(acc, offsets=[0, 0], output_tensor=c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[32, 128], pl.FP32], b: pl.Tensor[[128, 64], pl.FP32],
             c: pl.Out[pl.Tensor[[32, 64], pl.FP32]]) -> pl.Tensor[[32, 64], pl.FP32]:
        c = self.k(a, b, c)
        return c
"""


def _kernel(prog):
    return next(f for f in prog.functions.values() if f.name == "k")


def test_init_cond_is_an_operand_that_prints_and_parses_back() -> None:
    prog = pl.parse(SRC)
    text = prog.as_python()
    assert "pl.tile.matmul_acc(acc, a_l0, b_l0, k0 == 0)" in text
    again = pl.parse(pl.parse(text).as_python())
    assert "pl.tile.matmul_acc(acc, a_l0, b_l0, k0 == 0)" in again.as_python()
    ir.assert_structural_equal(pl.parse(again.as_python()), again)


def test_a_first_iteration_condition_peels_the_loop() -> None:
    converted = ConvertTensorToTileOps()(ConvertToSSA()(pl.parse(SRC)))
    assert converted.as_python() == ConvertToSSA()(pl.parse(SRC)).as_python()  # the choice is kept up to the peel
    prog = PeelFirstIterations()(converted)
    body = flatten(_kernel(prog).body)
    ops = [s.value.op for s in body if isinstance(getattr(s, "value", None), Call)]
    assert "tile.matmul" in ops  # the peeled first iteration
    loop = next(s for s in body if isinstance(s, ForStmt))
    assert loop.start.value == 32  # type: ignore[attr-defined]
    inner = [s.value for s in flatten(loop.body) if isinstance(getattr(s, "value", None), Call)]
    acc = [c for c in inner if c.op == "tile.matmul_acc"]
    assert len(acc) == 1 and len(acc[0].args) == 3


@pytest.mark.sim
@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_split_k_with_init_cond_matches_numpy(platform: str, tmp_path: Path) -> None:
    compiled = ir.compile(pl.parse(SRC), output_dir=str(tmp_path), platform=platform,
                          verification_level=VerificationLevel.ROUNDTRIP)
    rng = np.random.default_rng(21)
    a = rng.standard_normal((32, 128)).astype(np.float32)
    b = rng.standard_normal((128, 64)).astype(np.float32)
    c = np.full((32, 64), 9.0, np.float32)
    compiled(a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)


@pytest.mark.sim
def test_a_constant_init_cond_picks_matmul_or_matmul_acc(tmp_path: Path) -> None:
    src = SRC.replace("for k0 in pl.range(0, 128, 32):", "for k0 in pl.range(0, 32, 32):").replace(
        "init_cond=(k0 == 0)", "init_cond=True")
    compiled = ir.compile(pl.parse(src), output_dir=str(tmp_path), platform="a2a3sim")
    assert "pto.tmatmul.acc" not in next(Path(compiled.output_dir).glob("ptoas/*.pto")).read_text()
    rng = np.random.default_rng(22)
    a = rng.standard_normal((32, 128)).astype(np.float32)
    b = rng.standard_normal((128, 64)).astype(np.float32)
    c = np.zeros((32, 64), np.float32)
    compiled(a, b, c)
    np.testing.assert_allclose(c, a[:, :32] @ b[:32], rtol=1e-4, atol=1e-4)


def test_a_condition_other_than_the_first_iteration_is_a_located_error(tmp_path: Path) -> None:
    src = SRC.replace("init_cond=(k0 == 0)", "init_cond=(k0 == 64)")
    with pytest.raises(UserError) as ei:
        ir.compile(pl.parse(src), output_dir=str(tmp_path), skip_ptoas=True)
    assert "init_cond that is not the first iteration of its loop" in ei.value.message
    assert ei.value.span.line == 14


def test_an_init_cond_that_is_not_a_scalar_is_a_located_error() -> None:
    with pytest.raises(UserError) as ei:
        pl.parse(SRC.replace("init_cond=(k0 == 0)", "init_cond=a_l0"))
    assert "init_cond must be a boolean scalar" in ei.value.message


def test_a_window_of_an_acc_tile_accumulated_onto_its_old_content_is_a_located_error(tmp_path: Path) -> None:
    # without init_cond the window would accumulate onto the Acc tile's content, which pypto never builds
    # (windows with init_cond carry accumulators of their own: tests/passes/test_acc_windows.py)
    src = SRC.replace("acc = pl.tile.matmul_acc(acc, a_l0, b_l0, init_cond=(k0 == 0))",
                      "win = pl.tile.slice(acc, [32, 32], [0, 0])\n"
                      "            win = pl.tile.matmul_acc(win, a_l0, b_l0[:, 0:32])")
    with pytest.raises(UserError) as ei:
        ir.compile(pl.parse(src), output_dir=str(tmp_path), skip_ptoas=True)
    assert "tile.slice of an Acc tile cannot be lowered" in ei.value.message
    assert "store it at the window's offset" in (ei.value.hint or "")


def test_a_k_split_keeps_init_cond_on_its_first_block() -> None:
    """A matmul_acc whose Mat operands L0 cannot hold is chained over K: its first block carries the
    init_cond (overwrite where it holds), the later blocks accumulate onto it; PeelFirstIterations then
    turns the first iteration's first block into a plain matmul."""
    from pypto.ir.enums import MemorySpace
    from pypto.passes._matmul_ksplit import split_matmuls_k

    src = SRC.replace("            a_l0 = pl.move(a_l1, target_memory=pl.MemorySpace.Left)\n"
                      "            b_l0 = pl.move(b_l1, target_memory=pl.MemorySpace.Right)\n", "")
    src = src.replace("matmul_acc(acc, a_l0, b_l0,", "matmul_acc(acc, a_l1, b_l1,")
    prog = ConvertTensorToTileOps()(ConvertToSSA()(pl.parse(src)))
    kernel = _kernel(prog)
    # L0A / L0B halves of 2 KiB / 4 KiB: the [32, 32] x [32, 64] FP32 blocks run as two K=16 blocks
    split = split_matmuls_k(kernel, {MemorySpace.Left: 4096, MemorySpace.Right: 8192, MemorySpace.Acc: 65536})
    loop = next(s for s in flatten(split.body) if isinstance(s, ForStmt))
    accs = [s.value for s in flatten(loop.body) if isinstance(getattr(s, "value", None), Call)
            and s.value.op == "tile.matmul_acc"]
    assert [len(c.args) for c in accs] == [4, 3]
    before = next(s for s in flatten(kernel.body) if isinstance(s, ForStmt))
    (orig,) = [s.value for s in flatten(before.body) if isinstance(getattr(s, "value", None), Call)
               and s.value.op == "tile.matmul_acc"]
    assert accs[0].args[3] is orig.args[3]  # the user's k0 == 0
    peeled = PeelFirstIterations()(prog.with_functions([split if f is kernel else f for f in prog.functions]))
    body = flatten(_kernel(peeled).body)
    first = [s.value.op for s in body if isinstance(getattr(s, "value", None), Call)]
    assert first.count("tile.matmul") == 1 and first.count("tile.matmul_acc") == 1
