"""ConvertToSSA: a name first bound in a loop by a store and read after the loop is a loop result."""

from __future__ import annotations

import pytest

import pypto.language as pl
from pypto import ir
from pypto.errors import UserError
from pypto.ir import VerificationLevel
from pypto.ir.stmt import ForStmt, ReturnStmt, preorder
from pypto.passes.convert_to_ssa import ConvertToSSA


@pl.program
class _StoredInLoop:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, src: pl.Tensor[[32, 16], pl.FP32], lo: pl.Out[pl.Tensor[[32, 16], pl.FP32]],
          n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[32, 16], pl.FP32]:
        for b in pl.range(n):
            t = pl.load(src, [b * 16, 0], [16, 16])
            lo_new = pl.store(pl.adds(t, 1.0), [b * 16, 0], lo)
        return lo_new

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, src: pl.Tensor[[32, 16], pl.FP32],
             lo: pl.Out[pl.Tensor[[32, 16], pl.FP32]]) -> pl.Tensor[[32, 16], pl.FP32]:
        lo = self.k(src, lo, 2)
        return lo


def _make_computed_in_loop():
    """Built on demand (tests/roundtrip collects module-level programs; this one cannot round-trip yet)."""

    @pl.program
    class _ComputedInLoop:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, src: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
              n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[16, 16], pl.FP32]:
            for _b in pl.range(n):
                t = pl.adds(pl.load(src, [0, 0], [16, 16]), 1.0)  # not a store: no value for zero trips
            return pl.store(t, [0, 0], out)

    return _ComputedInLoop


def _loop_and_return(fn):
    loop = next(s for s in preorder(fn.body) if isinstance(s, ForStmt))
    ret = next(s for s in preorder(fn.body) if isinstance(s, ReturnStmt))
    return loop, ret


def test_a_store_result_read_after_the_loop_is_carried_from_its_target():
    k = next(f for f in ConvertToSSA().run(_StoredInLoop).functions if f.name == "k")
    loop, ret = _loop_and_return(k)
    assert loop.inits == (k.params[1],)                    # starts as `lo`: zero iterations store nothing
    assert ret.values == (loop.return_vars[0],)           # `return lo_new` reads the loop's result
    assert pl.parse(k.as_python()) is not None             # the name after the loop is defined again


def test_the_whole_pipeline_round_trips_it():
    ir.compile(_StoredInLoop, skip_ptoas=True, dump_passes=False,
               verification_level=VerificationLevel.ROUNDTRIP)


def test_a_value_that_is_not_a_store_gets_no_invented_start():
    """Nothing to start the carry from, so the read after the loop has no value: a located error at
    the read (it used to stay a dangling Var that reached codegen as a kernel parameter)."""
    prog = _make_computed_in_loop()
    with pytest.raises(UserError, match="'t' is read here but is first bound inside the loop") as info:
        ConvertToSSA().run(prog)
    k = next(f for f in prog.functions if f.name == "k")
    ret = next(s for s in preorder(k.body) if isinstance(s, ReturnStmt))
    assert info.value.span == ret.span and "bind 't' before the loop" in (info.value.hint or "")
