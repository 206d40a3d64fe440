"""A tile-carrying ``pl.at`` loop with a run-time trip count gathers its rows once per outer iteration.

The loop's stop is a kernel parameter bounded where the orchestration computes it (``pl.min``); its reads
address rows at ``base + k``; the rows do not depend on the inner parallel loop around the region, so the
gathers run in front of that loop, not once per iteration of it.
"""

from __future__ import annotations

import pytest

import pypto.language as pl
from pypto.errors import UnsupportedFeatureError
from pypto.ir.dtypes import DataType
from pypto.ir.expr import BinaryExpr, BinOp, Call, ConstInt, GlobalVar, UnaryExpr, UnOp, Var
from pypto.ir.properties import IRProperty
from pypto.ir.stmt import AssignStmt, ForStmt, flatten, preorder
from pypto.ir.types import ScalarType
from pypto.ir.verifier import verify
from pypto.passes import get_pass
from pypto.passes._gather_sites import upper_bound

FRONT = ("InlineFunctions", "HoistScopeGathers", "UnrollLoops", "CtrlFlowTransform", "ConvertToSSA", "Simplify",
         "NormalizeStmtStructure", "FlattenCallExpr", "OutlineHierarchyScopes", "OutlineIncoreScopes",
         "GatherCarriedReads", "HoistKernelReads", "LiftReadLoops")

SRC = '''
import pypto.language as pl

@pl.program
class SparseRows:
    @pl.function(type=pl.FunctionType.Opaque)
    def main(self, q: pl.Tensor[[4, 64], pl.FP32], lens: pl.Tensor[[2], pl.INT32], picks: pl.Tensor[[2, 8], pl.INT32],
             rows: pl.Tensor[[32, 64], pl.BF16], tails: pl.Tensor[[32, 16], pl.BF16],
             out: pl.InOut[pl.Tensor[[8, 64], pl.FP32]]) -> pl.Tensor[[8, 64], pl.FP32]:
        flat = pl.reshape(picks, [16])
        for b in pl.parallel(2):
            n = {stop}
            base = b * 8
            for h in pl.parallel(4):
                with pl.at(level=pl.Level.CORE_GROUP, name_hint="pick"):
                    first = b * 16 + pl.read(flat, [base])
                    acc = pl.cast(rows[first:first + 1, 0:64], target_type=pl.FP32)
                    qh = q[h:h + 1, 0:64]
                    for k in pl.range(1, n):
                        r = b * 16 + pl.read(flat, [{index}])
                        row = pl.cast(rows[r:r + 1, 0:64], target_type=pl.FP32)
                        tail = pl.cast(tails[r:r + 1, 0:16], target_type=pl.FP32)
                        acc = pl.add(acc, pl.row_expand_mul(pl.mul(row, qh), pl.row_sum(tail)))
                    out = pl.assemble(out, acc, [b * 4 + h, 0])
        return out
'''

BOUNDED = "pl.min(8, pl.read(lens, [b]))"


def _outline(src: str):
    prog = pl.parse(src, filename="sparse_rows.py")
    for name in FRONT:
        prog = get_pass(name)().run(prog)
    return prog


def _calls(stmts) -> list[str]:
    return [s.value.op.name for s in stmts if isinstance(s, AssignStmt) and isinstance(s.value, Call)
            and isinstance(s.value.op, GlobalVar)]


def test_a_bounded_run_time_loop_gathers_its_rows_once_per_outer_iteration() -> None:
    prog = _outline(SRC.format(stop=BOUNDED, index="base + k"))
    assert verify(prog, {IRProperty.UseAfterDef}) == []
    pick = prog.functions["pick"]
    assert not [s for s in preorder(pick.body) if isinstance(s, AssignStmt) and isinstance(s.value, Call)
                and s.value.op == "tensor.read"]
    scratch = {p.name: p.var_type.shape for p in pick.params if p.name.endswith("_blocks")}
    assert scratch == {"rows_blocks": (8, 64), "tails_blocks": (8, 16)}  # TOP rows: the bound pl.min gives
    [outer] = [s for s in flatten(prog.functions["main"].body) if isinstance(s, ForStmt)]
    loops = [s for s in flatten(outer.body) if isinstance(s, ForStmt)]
    # two gather loops (one task per row, the read in the orchestration), then the head loop
    assert [_calls(preorder(s.body)) for s in loops] == [["pick_gather_rows"], ["pick_gather_tails"], ["pick"]]
    creates = [s for s in flatten(outer.body) if isinstance(s, AssignStmt) and isinstance(s.value, Call)
               and s.value.op == "tensor.create"]
    assert len(creates) == 2  # one scratch per batch row: created inside its parallel loop, never shared
    gather = prog.functions["pick_gather_rows"]
    loads = [s for s in preorder(gather.body) if isinstance(s, AssignStmt) and isinstance(s.value, Call)
             and s.value.op == "tile.load"]
    assert len(loads) == 7  # the 7 rows of k in [1, 8) in one task: their addresses arrive as 7 scalars
    assert sum(p.name.startswith("r") for p in gather.params if isinstance(p.var_type, ScalarType)) == 7


def test_an_unbounded_run_time_loop_is_a_located_error_naming_the_rewrite() -> None:
    with pytest.raises(UnsupportedFeatureError) as err:
        _outline(SRC.format(stop="pl.read(lens, [b])", index="base + k"))
    msg = str(err.value)
    assert "sparse_rows.py:20:38:" in msg and "carries 'acc" in msg and "ptoas 0.1.1 has no scalar load" in msg, msg
    assert "n = pl.min(<most iterations>, n)" in msg, msg


def _v(name: str) -> Var:
    return Var(name, ScalarType(DataType.INDEX))


def test_upper_bounds_follow_min_add_and_casts() -> None:
    x, n, m, s = _v("x"), _v("n"), _v("m"), _v("s")
    idx = DataType.INDEX
    defs = {n: BinaryExpr(BinOp.Min, ConstInt(8, idx), x, idx),
            m: UnaryExpr(UnOp.Cast, n, DataType.INT32),
            s: BinaryExpr(BinOp.Add, m, ConstInt(2, idx), idx)}
    assert upper_bound(n, defs) == 8 and upper_bound(m, defs) == 8 and upper_bound(s, defs) == 10
    assert upper_bound(x, defs) is None
    assert upper_bound(BinaryExpr(BinOp.Mul, n, ConstInt(2, idx), idx), defs) is None  # only min and +


def test_rows_that_depend_on_the_inner_loop_are_gathered_inside_it() -> None:
    prog = _outline(SRC.format(stop=BOUNDED, index="h + k"))
    assert verify(prog, {IRProperty.UseAfterDef}) == []
    [outer] = [s for s in flatten(prog.functions["main"].body) if isinstance(s, ForStmt)]
    [heads] = [s for s in flatten(outer.body) if isinstance(s, ForStmt)]
    inner = [s for s in flatten(heads.body) if isinstance(s, ForStmt)]
    assert [_calls(preorder(s.body)) for s in inner] == [["pick_gather_rows"], ["pick_gather_tails"]]
