"""``i % c`` and ``i // c`` on a kernel loop index: the loop is strip-mined (ptoas 0.1.1 has no remsi).

``for i in range(s, e, st)`` becomes ``for q: for r:`` with ``i = s + q * c + r * st``; ``i % c`` is
``r * st`` and ``i // c`` is ``s // c + q``. A loop that breaks is left alone (a located error remains).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.errors import UserError
from pypto.ir.stmt import ForStmt, preorder
from pypto.passes.unroll_loops import UnrollLoops

KERNEL = """import pypto.language as pl

@pl.program
class Mod:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[128, 64], pl.FP32], c: pl.InOut[pl.Tensor[[128, 64], pl.FP32]],
          d: pl.InOut[pl.Tensor[[128, 64], pl.FP32]]) -> pl.Tensor[[128, 64], pl.FP32]:
        for i in pl.range(8):
            if i % 2 != 0:
                continue
            t = pl.load(a, [i * 16, 0], [16, 64])
            c = pl.store(pl.add(t, 1.0), [i * 16, 0], c)
        for j in pl.range(4, 12, 2):
            t2 = pl.load(a, [(j // 4) * 16, 0], [16, 64])
            d = pl.store(pl.muls(t2, 2.0), [(j % 4) * 16 + (j // 4) * 32, 0], d)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[128, 64], pl.FP32], c: pl.InOut[pl.Tensor[[128, 64], pl.FP32]],
             d: pl.InOut[pl.Tensor[[128, 64], pl.FP32]]) -> pl.Tensor[[128, 64], pl.FP32]:
        c = self.k(a, c, d)
        return c
"""


def _loops(prog, name: str) -> list[ForStmt]:
    f = next(f for f in prog.functions if f.name == name)
    return [s for s in preorder(f.body) if isinstance(s, ForStmt)]


def test_the_loops_become_nested_loops_without_modulo() -> None:
    prog = UnrollLoops()(pl.parse(KERNEL))
    loops = _loops(prog, "k")
    assert len(loops) == 4
    text = prog.as_python()
    assert " % " not in text and " // " not in text


@pytest.mark.sim
@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_results_match_numpy(platform: str, tmp_path: Path) -> None:
    compiled = ir.compile(pl.parse(KERNEL), output_dir=str(tmp_path), platform=platform)
    a = np.random.default_rng(51).standard_normal((128, 64)).astype(np.float32)
    c, d = np.full((128, 64), 5.0, np.float32), np.full((128, 64), 5.0, np.float32)
    compiled(a, c, d)
    want_c = np.full((128, 64), 5.0, np.float32)
    for i in range(0, 8, 2):
        want_c[i * 16:(i + 1) * 16] = a[i * 16:(i + 1) * 16] + 1
    want_d = np.full((128, 64), 5.0, np.float32)
    for j in range(4, 12, 2):
        row = (j % 4) * 16 + (j // 4) * 32
        want_d[row:row + 16] = a[(j // 4) * 16:(j // 4) * 16 + 16] * 2
    np.testing.assert_allclose(c, want_c, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(d, want_d, rtol=1e-6, atol=1e-6)


def test_a_region_of_an_orchestration_is_strip_mined_too() -> None:
    src = """import pypto.language as pl

@pl.program
class Region:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[64, 64], pl.FP32], c: pl.InOut[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        for n in pl.range(3):
            m = n % 2
        with pl.at(level=pl.Level.CORE_GROUP):
            for i in pl.range(4):
                t = pl.load(a, [(i % 2) * 32, 0], [16, 64])
                c = pl.store(t, [i * 16, 0], c)
        return c
"""
    text = UnrollLoops()(pl.parse(src)).as_python()
    assert "n % 2" in text  # orchestration code keeps its %: C++ has it
    assert "i % 2" not in text


def test_a_loop_that_breaks_keeps_the_located_error(tmp_path: Path) -> None:
    src = KERNEL.replace("""            if i % 2 != 0:
                continue""", """            if i % 2 != 0:
                break""")
    with pytest.raises(UserError) as ei:
        ir.compile(pl.parse(src), output_dir=str(tmp_path), skip_ptoas=True)
    assert "not supported in kernels by the ptoas 0.1.1 codegen" in ei.value.message  # break's flag
    assert ei.value.span.line == 8


UNALIGNED = """import pypto.language as pl

@pl.program
class Unaligned:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[64, 64], pl.FP32], c: pl.InOut[pl.Tensor[[160, 64], pl.FP32]],
          d: pl.InOut[pl.Tensor[[128, 64], pl.FP32]]) -> pl.Tensor[[160, 64], pl.FP32]:
        for i in pl.pipeline(1, 10, stage=2):
            blk = i // 4
            c = pl.store(pl.adds(pl.load(a, [blk * 16, 0], [16, 64]), 1.0), [(i % 4) * 40 + blk * 8, 0], c)
        for ki in pl.range(4):
            col = ki * 32
            for qi in pl.range(2):
                row = (ki * 2 + qi) * 16
                half = row // 32
                d = pl.store(pl.muls(pl.load(a, [half * 16, 0], [16, 64]), 2.0), [col // 64 * 64 + qi * 16 + ki % 2 * 32, 0], d)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[64, 64], pl.FP32], c: pl.InOut[pl.Tensor[[160, 64], pl.FP32]],
             d: pl.InOut[pl.Tensor[[128, 64], pl.FP32]]) -> pl.Tensor[[160, 64], pl.FP32]:
        c = self.k(a, c, d)
        return c
"""


def _unaligned_want(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    c, d = np.full((160, 64), 5.0, np.float32), np.full((128, 64), 5.0, np.float32)
    for i in range(1, 10):
        row = (i % 4) * 40 + (i // 4) * 8
        c[row:row + 16] = a[(i // 4) * 16:(i // 4) * 16 + 16] + 1
    for ki in range(4):
        for qi in range(2):
            half = (ki * 2 + qi) * 16 // 32
            row = ki * 32 // 64 * 64 + qi * 16 + ki % 2 * 32
            d[row:row + 16] = a[half * 16:half * 16 + 16] * 2
    return c, d


def test_unaligned_bounds_are_peeled_and_affine_divisions_split() -> None:
    prog = UnrollLoops()(pl.parse(UNALIGNED))
    text = prog.as_python()
    assert " % " not in text and " // " not in text
    loops = _loops(prog, "k")
    kinds = [(lp.loop_var.name, lp.kind.name, int(lp.start.value), int(lp.stop.value)) for lp in loops]
    assert kinds[:4] == [("i_head", "Pipeline", 1, 4), ("i_q", "Sequential", 0, 1), ("i_r", "Pipeline", 0, 4),
                         ("i_tail", "Pipeline", 8, 10)]


@pytest.mark.sim
@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_unaligned_results_match_numpy(platform: str, tmp_path: Path) -> None:
    compiled = ir.compile(pl.parse(UNALIGNED), output_dir=str(tmp_path), platform=platform)
    a = np.random.default_rng(52).standard_normal((64, 64)).astype(np.float32)
    c, d = np.full((160, 64), 5.0, np.float32), np.full((128, 64), 5.0, np.float32)
    compiled(a, c, d)
    want_c, want_d = _unaligned_want(a)
    np.testing.assert_allclose(c, want_c, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(d, want_d, rtol=1e-6, atol=1e-6)


def _ix(op, a, b):
    from pypto.ir.expr import BinaryExpr, ConstInt

    b = ConstInt(b, pl.INDEX) if isinstance(b, int) else b
    return BinaryExpr(op, a, b, pl.INDEX)


@pytest.mark.parametrize("case", ["coeff_not_dividing", "const_not_multiple", "two_left", "negative"])
def test_divisions_that_do_not_split_are_left_alone(case: str) -> None:
    from pypto.ir.expr import BinOp, Var
    from pypto.ir.types import ScalarType
    from pypto.passes._div_affine import split_div

    i, j = Var("i", ScalarType(pl.INDEX)), Var("j", ScalarType(pl.INDEX))
    lhs, c = {"coeff_not_dividing": (_ix(BinOp.Mul, i, 3), 4),                        # (i * 3) // 4
              "const_not_multiple": (_ix(BinOp.Add, _ix(BinOp.Mul, i, 4), 2), 8),     # (i * 4 + 2) // 8
              "two_left": (_ix(BinOp.Add, i, j), 2),                                  # (i + j) // 2
              "negative": (_ix(BinOp.Mul, i, -2), 4)}[case]                           # (i * -2) // 4
    assert split_div(_ix(BinOp.FloorDiv, lhs, c), {}, set()) is None
    assert split_div(_ix(BinOp.FloorDiv, i, 4), {}, set()) is None  # already a plain index


def test_a_name_reassigned_after_it_was_used_is_not_seen_through() -> None:
    from pypto.ir.expr import BinOp, Var
    from pypto.ir.types import ScalarType
    from pypto.passes._div_affine import split_div

    n, x = Var("n", ScalarType(pl.INDEX)), Var("x", ScalarType(pl.INDEX))
    e = _ix(BinOp.FloorDiv, x, 4)
    assert split_div(e, {x: _ix(BinOp.Mul, n, 8)}, {n}) is None   # n changes: x's definition is stale
    assert str(split_div(e, {x: _ix(BinOp.Mul, n, 8)}, set())) == str(_ix(BinOp.Mul, n, 2))
