"""Focused round-trip cases behind the whole-pipeline ROUNDTRIP test (test_examples_roundtrip.py)."""

from __future__ import annotations

import types

import numpy as np
import pytest
from test_examples_roundtrip import example_args

import pypto.language as pl
from pypto.errors import ParserTypeError
from pypto.ir import AssignStmt, Call, TupleGetItem
from pypto.ir.enums import MemorySpace
from pypto.ir.ops.registry import get_op
from pypto.ir.printer import python_print
from pypto.ir.stmt import preorder
from pypto.ir.structural import assert_structural_equal
from pypto.ir.types import TileType
from pypto.passes import get_pass

H = "import pypto.language as pl\n\n"
T64 = "pl.Tensor[[64, 64], pl.FP32]"


def _roundtrip(prog):
    assert_structural_equal(pl.parse(python_print(prog)), prog)


TWO_OUTPUTS = H + f"""
@pl.program
class Two:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: {T64}, o1: pl.Out[{T64}], o2: pl.Out[{T64}]) -> tuple[{T64}, {T64}]:
        t = pl.load(a, [0, 0], [64, 64])
        pl.store(t, [0, 0], o1)
        pl.store(t, [0, 0], o2)
        return o1, o2

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: {T64}, o1: pl.Out[{T64}], o2: pl.Out[{T64}]) -> {T64}:
        r: tuple[{T64}, {T64}] = self.k(a, o1, o2)
        x = r{{IDX}}
        return x
"""


def test_tuple_result_items_parse_to_tuple_get_item():
    prog = pl.parse(TWO_OUTPUTS.replace("{IDX}", "[1]"))
    stmt = [s for s in preorder(prog["main"].body) if isinstance(s, AssignStmt)][-1]
    assert isinstance(stmt.value, TupleGetItem) and stmt.value.index == 1
    _roundtrip(prog)


@pytest.mark.parametrize("idx", ["[2]", "[a]", "[0:1]"])
def test_tuple_item_needs_a_constant_index_in_range(idx):
    with pytest.raises(ParserTypeError, match="a tuple of 2 values takes a constant index 0..1"):
        pl.parse(TWO_OUTPUTS.replace("{IDX}", idx))


def test_task_id_annotation_extends_the_kernel_call_result():
    src = H + f"""
@pl.program
class Tid:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: {T64}, o: pl.Out[{T64}]) -> {T64}:
        pl.store(pl.load(a, [0, 0], [64, 64]), [0, 0], o)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: {T64}, o: pl.Out[{T64}]) -> {T64}:
        r: tuple[{T64}, pl.Scalar[pl.TASK_ID]] = self.k(a, o)
        x = r[0]
        tid = r[1]
        return x
"""
    prog = pl.parse(src)
    call = next(s.value for s in preorder(prog["main"].body) if isinstance(s, AssignStmt)
                and isinstance(s.value, Call))
    assert len(call.result_type.types) == 2
    _roundtrip(prog)


def test_yield_at_the_end_of_a_runtime_scope_binds_the_loop_results():
    prog = pl.parse(H + f"""
@pl.program
class S:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: {T64}, n: pl.Scalar[pl.INDEX]) -> {T64}:
        for i, (x, k) in pl.range(4, init_values=(a, n)):
            with pl.scope():
                if i == 2:
                    with pl.scope():
                        y, k2 = pl.yield_(x, k)
                else:
                    with pl.scope():
                        y, k2 = pl.yield_(x, k + 1)
                x2, k3 = pl.yield_(y, k2)
        return x2
""")
    text = python_print(prog)
    yields = [line.strip() for line in text.splitlines() if "pl.yield_(" in line]
    assert len(yields) == 3 and all(" = pl.yield_(" in line for line in yields), text
    _roundtrip(prog)


def test_retyped_tiles_keep_call_types_derivable_from_their_arguments():
    """After InferTileMemorySpace every op call's result type is what the parser infers from its args."""
    prog = pl.parse(H + f"""
@pl.program
class Mixed:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: {T64}, w: {T64}, b: {T64}, y: pl.Out[{T64}]) -> {T64}:
        xl = pl.tile.load(x, [0, 0], [64, 64], [64, 64], target_memory=pl.Mem.Mat)
        wl = pl.tile.load(w, [0, 0], [64, 64], [64, 64], target_memory=pl.Mem.Mat)
        c = pl.tile.matmul(pl.tile.move(xl, target_memory=pl.Mem.Left), pl.tile.move(wl, target_memory=pl.Mem.Right))
        bt = pl.tile.load(b, [0, 0], [64, 64], [64, 64], target_memory=pl.Mem.Vec)
        r = pl.tile.relu(pl.tile.add(c, bt))
        pl.tile.store(r, [0, 0], y)
        return y
""")
    out = get_pass("InferTileMemorySpace")().run(get_pass("FlattenCallExpr")().run(prog))
    for s in preorder(out["k"].body):
        if isinstance(s, AssignStmt) and isinstance(s.value, Call) and isinstance(s.value.op, str):
            op = get_op(s.value.op)
            assert s.value.result_type == op.infer(list(s.value.args), {**op.kwargs, **s.value.kwargs}, s.span)
    spaces = {s.var.name: s.var.var_type.memory_space for s in preorder(out["k"].body)
              if isinstance(s, AssignStmt) and isinstance(s.var.var_type, TileType)}
    assert spaces["c"] is MemorySpace.Acc and spaces["r"] is MemorySpace.Vec
    _roundtrip(out)


def test_example_args_from_shapes_or_sample_args():
    def kern(a, out):
        return out

    fn = types.SimpleNamespace(func=kern)
    mod = types.SimpleNamespace(SHAPES={"k": {"a": "2x3:fp16", "out": "2x3"}}, __file__="m.py")
    a, out = example_args(mod, "k", fn)
    assert a.shape == (2, 3) and a.dtype == np.float16 and out.dtype == np.float32
    mod2 = types.SimpleNamespace(sample_args=lambda: {"k": (np.ones(4), 3)}, __file__="m.py")
    assert example_args(mod2, "k", fn)[1] == 3


def test_example_args_name_the_missing_convention():
    fn = types.SimpleNamespace(func=lambda a, out: out)
    with pytest.raises(pytest.fail.Exception, match="add SHAPES = "):
        example_args(types.SimpleNamespace(__file__="m.py"), "k", fn)
    with pytest.raises(AssertionError, match=r"no entry for \['out'\]"):
        example_args(types.SimpleNamespace(SHAPES={"k": {"a": "2x2"}}, __file__="m.py"), "k", fn)


def test_a_split_distributed_kernel_prints_and_parses_back():
    """Comm ops of a split kernel print as ``pl.comm.*``; the dump reads back to an equal program."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parents[1] / "distributed"))
    import numpy as np
    from dist_programs import W, chip_pull

    import pypto.language as pl
    from pypto.ir import structural_equal

    prog = chip_pull.lower(np.zeros((1, W), np.float32), np.zeros((1, W), np.float32),
                           np.zeros((1, W), np.float32), np.zeros((1, 1), np.int32))
    text = prog.as_python()
    assert "pl.comm.barrier(" in text and "pl.comm.copy(" in text and "pl.comm.rank()" in text
    assert structural_equal(pl.parse(text), prog)
