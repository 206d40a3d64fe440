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
from pypto.ir.stmt import ForStmt
from pypto.passes._util import iter_stmts
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
    return [s for s in iter_stmts(f.body) if isinstance(s, ForStmt)]


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
