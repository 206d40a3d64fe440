"""DeriveCallDirections: an Out argument is output_existing only for the first writer of its buffer.

The runtime's TensorMap orders a task after an earlier writer of the same buffer only when the task
passes it as inout (output_existing registers the task as the newest writer without a lookup), so
every write that may follow another pending write must be inout, or two writers race.
"""

from __future__ import annotations

import textwrap

import pytest

import pypto.language as pl
from pypto.ir import ArgDirection, GlobalVar
from pypto.ir.structural import assert_structural_equal
from pypto.ir.verifier import calls as calls_in
from pypto.passes import get_pass

IN, OUT_EX, INOUT, SCALAR = (ArgDirection.Input, ArgDirection.OutputExisting, ArgDirection.InOut,
                             ArgDirection.Scalar)
T = "pl.Tensor[[32, 64], pl.FP32]"

HEADER = f"""
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def fill(self, src: {T}, dst: pl.Out[{T}]) -> {T}:
        t: pl.Tile[[32, 64], pl.FP32, pl.Mem.Vec] = pl.tile.load(src, [0, 0], [32, 64], [32, 64], target_memory=pl.Mem.Vec)
        pl.tile.store(t, [0, 0], dst)
        return dst

    @pl.function(type=pl.FunctionType.InCore)
    def fill2(self, src: {T}, d0: pl.Out[{T}], d1: pl.Out[{T}]) -> tuple[{T}, {T}]:
        t: pl.Tile[[32, 64], pl.FP32, pl.Mem.Vec] = pl.tile.load(src, [0, 0], [32, 64], [32, 64], target_memory=pl.Mem.Vec)
        pl.tile.store(t, [0, 0], d0)
        pl.tile.store(t, [0, 0], d1)
        return d0, d1

    @pl.function(type=pl.FunctionType.InCore)
    def bump(self, x: pl.InOut[{T}], k: pl.Scalar[pl.INDEX]) -> {T}:
        t: pl.Tile[[32, 64], pl.FP32, pl.Mem.Vec] = pl.tile.load(x, [0, 0], [32, 64], [32, 64], target_memory=pl.Mem.Vec)
        pl.tile.store(t, [0, 0], x)
        return x

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: {T}, b: {T}, n: pl.Scalar[pl.INDEX], out: pl.{{mode}}[{T}]) -> {T}:
"""


def _derive(body: str, mode: str = "Out") -> pl.Program:
    text = HEADER.replace("{mode}", mode) + textwrap.indent(textwrap.dedent(body), " " * 8)
    return get_pass("DeriveCallDirections")().run(pl.parse(text))


def _dirs(prog: pl.Program) -> list[tuple[str, tuple[ArgDirection, ...]]]:
    assert_structural_equal(pl.parse(prog.as_python()), prog)  # the directions survive print -> parse
    main = prog.get_function("main")
    return [(c.op.name, c.attrs["arg_directions"]) for c in calls_in(main.body) if isinstance(c.op, GlobalVar)]


def test_second_writer_of_the_same_buffer_is_inout():
    prog = _derive("""
        o1: pl.Tensor[[32, 64], pl.FP32] = self.fill(a, out)
        o2: pl.Tensor[[32, 64], pl.FP32] = self.fill(b, o1)
        return o2
    """)
    assert _dirs(prog) == [("fill", (IN, OUT_EX)), ("fill", (IN, INOUT))]


def test_writers_of_different_buffers_stay_output_existing():
    prog = _derive("""
        x: pl.Tensor[[32, 64], pl.FP32] = pl.tensor.create([32, 64], dtype=pl.FP32)
        x1: pl.Tensor[[32, 64], pl.FP32] = self.fill(a, x)
        o1: pl.Tensor[[32, 64], pl.FP32] = self.fill(x1, out)
        return o1
    """)
    assert _dirs(prog) == [("fill", (IN, OUT_EX)), ("fill", (IN, OUT_EX))]


def test_a_write_through_an_inout_param_counts_as_a_prior_write():
    prog = _derive("""
        x: pl.Tensor[[32, 64], pl.FP32] = pl.tensor.create([32, 64], dtype=pl.FP32)
        x1: pl.Tensor[[32, 64], pl.FP32] = self.bump(x, n)
        x2: pl.Tensor[[32, 64], pl.FP32] = self.fill(a, x1)
        return out
    """)
    assert _dirs(prog) == [("bump", (INOUT, SCALAR)), ("fill", (IN, INOUT))]


@pytest.mark.parametrize(("loop", "want"), [("pl.range(4)", INOUT), ("pl.parallel(4)", OUT_EX)])
def test_a_writer_in_a_sequential_loop_is_inout(loop, want):
    prog = _derive(f"""
        for i in {loop}:
            o1: pl.Tensor[[32, 64], pl.FP32] = self.fill(a, out)
        return out
    """)
    assert _dirs(prog) == [("fill", (IN, want))]


def test_a_writer_after_a_loop_that_wrote_the_buffer_is_inout():
    prog = _derive("""
        for i in pl.parallel(4):
            o1: pl.Tensor[[32, 64], pl.FP32] = self.fill(a, out)
        o2: pl.Tensor[[32, 64], pl.FP32] = self.fill(b, out)
        return o2
    """)
    assert _dirs(prog) == [("fill", (IN, OUT_EX)), ("fill", (IN, INOUT))]


def test_an_inout_enclosing_param_makes_even_the_first_writer_inout():
    prog = _derive("""
        o1: pl.Tensor[[32, 64], pl.FP32] = self.fill(a, out)
        return o1
    """, mode="InOut")
    assert _dirs(prog) == [("fill", (IN, INOUT))]


def test_if_branches_see_earlier_writes_but_not_each_other():
    prog = _derive("""
        if n == 0:
            o1: pl.Tensor[[32, 64], pl.FP32] = self.fill(a, out)
        else:
            o2: pl.Tensor[[32, 64], pl.FP32] = self.fill(b, out)
        o3: pl.Tensor[[32, 64], pl.FP32] = self.fill(b, out)
        return o3
    """)
    assert _dirs(prog) == [("fill", (IN, OUT_EX)), ("fill", (IN, OUT_EX)), ("fill", (IN, INOUT))]


def test_a_result_that_may_name_two_buffers_is_inout():
    prog = _derive("""
        x: pl.Tensor[[32, 64], pl.FP32] = pl.tensor.create([32, 64], dtype=pl.FP32)
        if n == 0:
            r = pl.yield_(out)
        else:
            r = pl.yield_(x)
        o1: pl.Tensor[[32, 64], pl.FP32] = self.fill(a, r)
        return out
    """)
    assert _dirs(prog) == [("fill", (IN, INOUT))]


def test_a_write_through_a_view_of_a_written_buffer_is_inout():
    prog = _derive("""
        o1: pl.Tensor[[32, 64], pl.FP32] = self.fill(a, out)
        v: pl.Tensor[[32, 64], pl.FP32] = pl.tensor.slice(o1, [32, 64], [0, 0])
        v1: pl.Tensor[[32, 64], pl.FP32] = self.fill(b, v)
        return o1
    """)
    assert _dirs(prog) == [("fill", (IN, OUT_EX)), ("fill", (IN, INOUT))]


def test_tuple_results_carry_each_output_buffer():
    prog = _derive("""
        x: pl.Tensor[[32, 64], pl.FP32] = pl.tensor.create([32, 64], dtype=pl.FP32)
        pair: tuple[pl.Tensor[[32, 64], pl.FP32], pl.Tensor[[32, 64], pl.FP32]] = self.fill2(a, x, out)
        x1: pl.Tensor[[32, 64], pl.FP32] = pair[0]
        o1: pl.Tensor[[32, 64], pl.FP32] = pair[1]
        x2: pl.Tensor[[32, 64], pl.FP32] = self.fill(b, x1)
        return o1
    """)
    assert _dirs(prog) == [("fill2", (IN, OUT_EX, OUT_EX)), ("fill", (IN, INOUT))]


def test_directions_already_on_a_call_are_kept_and_the_pass_is_idempotent():
    prog = _derive("""
        o1: pl.Tensor[[32, 64], pl.FP32] = self.fill(a, out)
        o2: pl.Tensor[[32, 64], pl.FP32] = self.fill(b, o1, attrs={"arg_directions": [pl.adir.input, pl.adir.no_dep]})
        return o2
    """)
    assert _dirs(prog) == [("fill", (IN, OUT_EX)), ("fill", (IN, ArgDirection.NoDep))]
    assert get_pass("DeriveCallDirections")().run(prog) is prog



def test_a_loop_result_follows_the_buffer_its_body_yields():
    prog = _derive("""
        first: pl.Tensor[[32, 64], pl.FP32] = pl.tensor.create([32, 64], dtype=pl.FP32)
        for i, (cur,) in pl.range(3, init_values=(first,)):
            scratch: pl.Tensor[[32, 64], pl.FP32] = pl.tensor.create([32, 64], dtype=pl.FP32)
            s1: pl.Tensor[[32, 64], pl.FP32] = self.fill(a, scratch)
            last = pl.yield_(s1)
        again: pl.Tensor[[32, 64], pl.FP32] = self.fill(b, last)
        return out
    """)
    assert _dirs(prog) == [("fill", (IN, INOUT)), ("fill", (IN, INOUT))]


def test_a_loop_that_may_not_run_leaves_its_result_ambiguous():
    prog = _derive("""
        first: pl.Tensor[[32, 64], pl.FP32] = pl.tensor.create([32, 64], dtype=pl.FP32)
        for i, (cur,) in pl.parallel(n, init_values=(first,)):
            scratch: pl.Tensor[[32, 64], pl.FP32] = pl.tensor.create([32, 64], dtype=pl.FP32)
            s1: pl.Tensor[[32, 64], pl.FP32] = self.fill(a, scratch)
            last = pl.yield_(s1)
        o1: pl.Tensor[[32, 64], pl.FP32] = self.fill(b, first)
        o2: pl.Tensor[[32, 64], pl.FP32] = self.fill(b, last)
        return out
    """)
    # `first` itself was never written: its first writer stays output_existing; `last` may be either buffer.
    assert _dirs(prog) == [("fill", (IN, OUT_EX)), ("fill", (IN, OUT_EX)), ("fill", (IN, INOUT))]


def test_a_parallel_loop_inside_a_sequential_one_is_inout():
    prog = _derive("""
        for i in pl.range(2):
            for j in pl.parallel(4):
                o1: pl.Tensor[[32, 64], pl.FP32] = self.fill(a, out)
        return out
    """)
    assert _dirs(prog) == [("fill", (IN, INOUT))]


def test_whole_pipeline_with_roundtrip_verification_keeps_the_inout(tmp_path):
    from pypto.ir import PassDumpLevel, VerificationLevel
    from pypto.passes.context import PassContext
    from pypto.passes.manager import run_pipeline

    text = textwrap.dedent(f"""
        import pypto.language as pl

        @pl.program
        class Two:
            @pl.function(type=pl.FunctionType.Orchestration)
            def two(self, a: {T}, b: {T}, out: pl.Out[{T}]) -> {T}:
                with pl.at(level=pl.Level.CORE_GROUP):
                    ta: pl.Tile[[32, 64], pl.FP32] = pl.load(a, [0, 0], [32, 64])
                    pl.store(ta, [0, 0], out)
                for i in pl.range(2):
                    with pl.at(level=pl.Level.CORE_GROUP):
                        tb: pl.Tile[[32, 64], pl.FP32] = pl.load(b, [0, 0], [32, 64])
                        pl.store(tb, [0, 0], out)
                return out
    """)
    ctx = PassContext(verification_level=VerificationLevel.ROUNDTRIP)
    result = run_pipeline(pl.parse(text), ctx=ctx, dump_level=PassDumpLevel.CONCISE, dump_dir=tmp_path)
    calls = [c for c in calls_in(result.program.get_function("two").body) if isinstance(c.op, GlobalVar)]
    assert [c.attrs["arg_directions"] for c in calls] == [(IN, OUT_EX), (IN, INOUT)]
    assert "pl.adir.inout" in next(tmp_path.glob("43_after_DeriveCallDirections.py")).read_text()
