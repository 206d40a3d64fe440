"""Names bound only inside a loop in each branch of an if are not results of the if."""

from __future__ import annotations

import pypto.language as pl
from pypto.ir.stmt import IfStmt, preorder
from pypto.runtime import run


@pl.program
class _LoopsInBranches:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[32, 16], pl.FP32], out: pl.Out[pl.Tensor[[32, 16], pl.FP32]],
          flag: pl.Scalar[pl.INDEX]) -> pl.Tensor[[32, 16], pl.FP32]:
        if flag != 0:
            for b in pl.range(2):
                t = pl.load(a, [b * 16, 0], [16, 16])
                out = pl.store(pl.adds(t, 1.0), [b * 16, 0], out)
        else:
            for b in pl.range(2):
                t = pl.load(a, [b * 16, 0], [16, 16])
                out = pl.store(pl.muls(t, 2.0), [b * 16, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[32, 16], pl.FP32], out: pl.Out[pl.Tensor[[32, 16], pl.FP32]],
             ) -> pl.Tensor[[32, 16], pl.FP32]:
        out = self.k(a, out, 0)
        return out


def test_only_names_bound_outside_the_loops_merge() -> None:
    k = next(f for f in _LoopsInBranches.functions if f.name == "k")
    if_ = next(s for s in preorder(k.body) if isinstance(s, IfStmt))
    assert not {"b", "t"} & {rv.name for rv in if_.return_vars}


def test_loops_in_both_branches_run(torch) -> None:
    a, out = torch.randn(32, 16, generator=torch.Generator().manual_seed(8)), torch.zeros(32, 16)
    run(_LoopsInBranches, a, out)
    torch.testing.assert_close(out, a * 2.0, rtol=1e-6, atol=1e-6)


def test_run_without_tensors_only_compiles_and_returns_a_callable(torch) -> None:
    compiled = run(_LoopsInBranches)
    a, out = torch.randn(32, 16, generator=torch.Generator().manual_seed(9)), torch.zeros(32, 16)
    compiled(a, out)
    torch.testing.assert_close(out, a * 2.0, rtol=1e-6, atol=1e-6)
