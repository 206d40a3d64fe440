"""``with pl.cluster():`` groups its kernels without changing results; what a group cannot carry is rejected."""

from __future__ import annotations

import pytest

import pypto.language as pl
from pypto.errors import ParserSyntaxError
from pypto.ir.stmt import ClusterScopeStmt, preorder
from pypto.passes import get_pass
from pypto.runtime import run


@pl.program
class _Grouped:
    @pl.function(type=pl.FunctionType.InCore)
    def scale(self, a: pl.Tensor[[64, 16], pl.FP32], out: pl.Out[pl.Tensor[[64, 16], pl.FP32]],
              ) -> pl.Tensor[[64, 16], pl.FP32]:
        r = pl.tile.get_block_idx() * 16
        out = pl.store(pl.muls(pl.load(a, [r, 0], [16, 16]), 3.0), [r, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[64, 16], pl.FP32], out: pl.Out[pl.Tensor[[64, 16], pl.FP32]],
             ) -> pl.Tensor[[64, 16], pl.FP32]:
        with pl.cluster():
            with pl.spmd(core_num=4):
                out = self.scale(a, out)
        return out


def test_cluster_dissolves_into_its_statements() -> None:
    prog = _Grouped
    assert any(isinstance(s, ClusterScopeStmt) for f in prog.functions for s in preorder(f.body))
    for name in ("ConvertToSSA", "OutlineIncoreScopes", "OutlineClusterScopes"):
        prog = get_pass(name)().run(prog)
    assert not any(isinstance(s, ClusterScopeStmt) for f in prog.functions for s in preorder(f.body))


def test_spmd_dispatch_inside_a_cluster_matches_torch(torch) -> None:
    a, out = torch.randn(64, 16, generator=torch.Generator().manual_seed(6)), torch.zeros(64, 16)
    run(_Grouped, a, out)
    torch.testing.assert_close(out, a * 3.0, rtol=1e-6, atol=1e-6)


def _main(body: str) -> str:
    lines = "\n".join("        " + ln for ln in body.strip("\n").splitlines())
    return f'''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[64, 16], pl.FP32], out: pl.Out[pl.Tensor[[64, 16], pl.FP32]],
          ) -> pl.Tensor[[64, 16], pl.FP32]:
        r = pl.tile.get_block_idx() * 16
        out = pl.store(pl.load(a, [r, 0], [16, 16]), [r, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[64, 16], pl.FP32], out: pl.Out[pl.Tensor[[64, 16], pl.FP32]],
             ) -> pl.Tensor[[64, 16], pl.FP32]:
{lines}
        return out
'''


@pytest.mark.parametrize(("body", "line", "what"), [
    ("with pl.cluster():\n    with pl.spmd(4) as tid:\n        out = self.k(a, out)", 17, "as tid"),
    ("with pl.cluster():\n    with pl.spmd(4, allow_early_resolve=True):\n        out = self.k(a, out)", 17,
     "allow_early_resolve"),
    ("with pl.cluster():\n    n = 2 + 2\n    with pl.spmd(n):\n        out = self.k(a, out)", 18,
     "block count uses 'n'"),
    ("with pl.cluster():\n    with pl.cluster():\n        out = self.k(a, out)", 17, "cannot be nested"),
])
def test_what_a_cluster_cannot_carry_is_a_located_error(body: str, line: int, what: str) -> None:
    with pytest.raises(ParserSyntaxError) as err:
        pl.parse(_main(body))
    assert f":{line}:" in str(err.value) and what in str(err.value)
