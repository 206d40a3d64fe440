"""``high_precision=`` of div, log, recip and rsqrt: kept in the IR, same code with ptoas 0.1.1.

ptoas 0.1.1 has one mode per instruction and the simulators compute these in IEEE arithmetic, so the
flag changes nothing in the generated code; the program still says what its author asked for.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir


def _program(high: bool):
    @pl.program
    class Precise:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, a: pl.Tensor[[16, 32], pl.FP32], b: pl.Tensor[[16, 32], pl.FP32],
              c: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
            x = pl.load(a, [0, 0], [16, 32])
            y = pl.load(b, [0, 0], [16, 32])
            r = pl.tile.log(pl.tile.div(x, y, high_precision=high), high_precision=high)
            r = pl.tile.rsqrt(pl.tile.recip(r, high_precision=high), high_precision=high)
            c = pl.store(r, [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[16, 32], pl.FP32], b: pl.Tensor[[16, 32], pl.FP32],
                 c: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
            c = self.k(a, b, c)
            return c
    return Precise


def test_the_flag_prints_and_parses_back() -> None:
    prog = _program(True)
    text = prog.as_python()
    assert text.count("high_precision=True") == 4
    ir.assert_structural_equal(pl.parse(text), prog)


def test_the_generated_kernel_is_the_same_either_way(tmp_path: Path) -> None:
    texts = []
    for high in (False, True):
        out = tmp_path / str(high)
        ir.compile(_program(high), output_dir=str(out), skip_ptoas=True, dump_passes=False)
        texts.append((out / "kernels" / "aiv" / "k.pto").read_text())
    assert texts[0] == texts[1]


@pytest.mark.sim
@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_results_match_numpy(tmp_path: Path, platform: str) -> None:
    c = ir.compile(_program(True), output_dir=str(tmp_path), platform=platform)
    rng = np.random.default_rng(7)
    a = rng.uniform(2.0, 4.0, (16, 32)).astype(np.float32)
    b = rng.uniform(0.5, 1.0, (16, 32)).astype(np.float32)
    out = np.zeros_like(a)
    c(a, b, out)
    np.testing.assert_allclose(out, 1.0 / np.sqrt(1.0 / np.log(a / b)), rtol=1e-5, atol=1e-6)
