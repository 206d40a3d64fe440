"""torch_codegen of atomic-add stores: ``pl.store`` / ``pl.assemble`` with ``atomic=pl.AtomicType.Add`` add
into their window, before the pass pipeline (the atomic op) and after it (a read-modify-write)."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto.debug import torch_codegen
from pypto.driver import lower

torch = pytest.importorskip("torch", reason="torch is not installed (pip install torch==2.13.0)")

PROGRAM = """
import pypto.language as pl

@pl.program
class Atomic:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[32, 32], pl.FP32], out: pl.Out[pl.Tensor[[32, 32], pl.FP32]],
             acc: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
        for i in pl.parallel(0, 2):
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="store_add"):
                t = pl.load(x, [i * 16, 0], [16, 32])
                out = pl.store(t, [8, 0], out, atomic=pl.AtomicType.Add)
        for j in pl.parallel(0, 2):
            with pl.at(level=pl.Level.CORE_GROUP, name_hint="assemble_add"):
                acc = pl.assemble(acc, pl.muls(x[j * 16 : j * 16 + 16, :], 2.0), [0, 0], atomic=pl.AtomicType.Add)
        return out
"""


@pytest.mark.parametrize("stage", ["frontend", "lowered"])
def test_atomic_adds_accumulate_onto_the_baseline(stage: str) -> None:
    program = pl.parse(PROGRAM)
    ns: dict = {}
    exec(torch_codegen(program if stage == "frontend" else lower(program), check_shapes=True), ns)  # noqa: S102
    x = np.random.default_rng(1).standard_normal((32, 32)).astype(np.float32)
    out, acc = torch.full((32, 32), 1.5), torch.full((16, 32), -1.0)
    ns["main"](torch.from_numpy(x), out, acc)
    want_out = np.full((32, 32), 1.5, np.float32)
    want_out[8:24] += x[0:16] + x[16:32]
    np.testing.assert_allclose(out.numpy(), want_out, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(acc.numpy(), -1.0 + 2 * (x[0:16] + x[16:32]), rtol=1e-6, atol=1e-6)
