"""Matmul column blocks assembled into a ``pl.full`` accumulator carried by a kernel loop (decode_front's
latent-to-V projection): the carried value stays an on-chip tile the blocks are assembled into."""

from __future__ import annotations

import pytest

import pypto.language as pl
from pypto.ir.stmt import AssignStmt, preorder
from pypto.passes import get_pass
from pypto.runtime import RunConfig, run

VPROJ = '''
import pypto.language as pl

@pl.program
class VProj:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 128], pl.BF16], w: pl.Tensor[[128, 128], pl.BF16],
             out: pl.Out[pl.Tensor[[1, 128], pl.FP32]]) -> pl.Tensor[[1, 128], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            xb = x[:, :]
        with pl.at(level=pl.Level.CORE_GROUP):
            acc = pl.full([16, 128], dtype=pl.FP32, value=0.0)
            for v0 in pl.range(0, 128, 32):
                part = pl.matmul(xb, w[:, v0 : v0 + 32], out_dtype=pl.FP32)
                acc = pl.assemble(acc, part, [0, v0])
        with pl.at(level=pl.Level.CORE_GROUP):
            out[:, :] = acc[0:1, :]
        return out
'''

FRONT = ("InlineFunctions", "UnrollLoops", "CtrlFlowTransform", "ConvertToSSA", "Simplify",
         "NormalizeStmtStructure", "FlattenCallExpr", "OutlineHierarchyScopes", "OutlineIncoreScopes",
         "GatherCarriedReads", "HoistKernelReads", "LiftReadLoops", "OutlineClusterScopes",
         "ConvertTensorToTileOps")


def test_the_blocks_are_assembled_into_the_carried_tile_not_stored() -> None:
    prog = pl.parse_program(VPROJ)
    for name in FRONT:
        prog = get_pass(name)().run(prog)
    ops = [s.value.op for f in prog.functions if f.is_incore for s in preorder(f.body)
           if isinstance(s, AssignStmt) and hasattr(s.value, "op") and isinstance(s.value.op, str)]
    assert "tile.assemble" in ops
    stores = [s for f in prog.functions if f.is_incore for s in preorder(f.body) if isinstance(s, AssignStmt)
              and getattr(s.value, "op", None) == "tile.store" and "acc__iter" in s.value.args[2].name]
    assert not stores  # before: each block was stored into the on-chip accumulator as if it were GM


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_the_projection_matches_torch(platform: str, torch) -> None:
    gen = torch.Generator().manual_seed(3)
    x = (torch.randn(16, 128, generator=gen) * 0.1).to(torch.bfloat16)
    w = (torch.randn(128, 128, generator=gen) * 0.1).to(torch.bfloat16)
    out = torch.zeros(1, 128)
    run(pl.parse_program(VPROJ), x, w, out, config=RunConfig(platform=platform))
    torch.testing.assert_close(out, (x.float() @ w.float())[0:1], rtol=1e-3, atol=1e-3)
