"""Misuse of pl.spmd, pl.array, pl.pipeline, pl.MemRef slots and tile.reshape: located user errors."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import pypto.language as pl
from pypto import ir
from pypto.errors import ParserSyntaxError, ParserTypeError, UnsupportedFeatureError, UserError

H = "import pypto.language as pl\n"
T = "pl.Tensor[[256, 64], pl.FP32]"


def _orch(body: str, params: str = "") -> str:
    return H + f"""
@pl.program
class P:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: {T}{params}, out: pl.Out[{T}]) -> {T}:
{body}
        return out
"""


def _err(src: str, cls: type[UserError] = UserError) -> UserError:
    with pytest.raises(cls) as ei:
        pl.parse(src)
    return ei.value


@pytest.mark.parametrize(("body", "message"), [
    ("        for i in pl.spmd(0):\n            out = pl.store(pl.load(a, [0, 0], [64, 64]), [0, 0], out)",
     "pl.spmd() block count must be a positive integer, got 0"),
    ("        for i in pl.spmd(2.0):\n            out = pl.store(pl.load(a, [0, 0], [64, 64]), [0, 0], out)",
     "pl.spmd() block count must be a positive integer, got 2.0"),
    ("        for i in pl.spmd(2, deps=[a]):\n            out = pl.store(pl.load(a, [0, 0], [64, 64]), [0, 0], out)",
     "deps= is only accepted by the `with pl.spmd(n, deps=[...]) as tid:` form"),
    ("        for i in pl.spmd():\n            out = pl.store(pl.load(a, [0, 0], [64, 64]), [0, 0], out)",
     "pl.spmd() takes the block count (core_num) as its first argument, got 0 arguments"),
    ("        with pl.spmd(2, bogus=1):\n            i = pl.tile.get_block_idx()",
     "pl.spmd() got an unexpected keyword argument 'bogus'"),
    ("        with pl.spmd(2, deps=[a]):\n            i = pl.tile.get_block_idx()",
     "pl.spmd(deps=[...]) needs the `as tid` form"),
])
def test_spmd_misuse(body, message):
    assert _err(_orch(body), ParserTypeError).message == message


def test_spmd_with_body_that_does_neither_is_rejected():
    err = _err(_orch("        with pl.spmd(4):\n            t = pl.create_tensor([64, 64], dtype=pl.FP32)"),
               ParserSyntaxError)
    assert "must dispatch a kernel (self.kernel(...)) or read the block index" in err.message
    assert (err.span.line, err.span.col) == (7, 9)


def test_spmd_predicate_must_be_a_scalar():
    err = _err(_orch("        with pl.spmd(2, predicate=a):\n            i = pl.tile.get_block_idx()"))
    assert "pl.spmd(predicate=...) takes a boolean scalar" in err.message


def test_spmd_construct_outside_a_loop_or_with():
    err = _err(_orch("        x = pl.spmd(2)"))
    assert "pl.spmd() can only be used as a for-loop iterator or in a with-statement" in err.message


@pytest.mark.parametrize(("body", "message"), [
    ("        w = pl.array.create(0, pl.TASK_ID)", "array.create: extent must be a positive integer constant, got 0"),
    ("        w = pl.array.create(4, 3)", "array.create: 'dtype' must be a dtype"),
    ("        w = pl.array.create(4, pl.TASK_ID)\n        x = w[0:2]", "a pl.Array takes one integer index"),
    ("        w = pl.array.create(4, pl.TASK_ID)\n        w[0] = 1.5",
     "array.update_element: a pl.Array[4, pl.TASK_ID] element cannot take a value of type"),
    ("        w = pl.array.create(4, pl.INT32)\n        x = w[1.5]", "array.get_element: the index must be an integer"),
])
def test_array_misuse(body, message):
    assert message in _err(_orch(body), ParserTypeError).message


def test_array_annotation_needs_extent_and_dtype():
    err = _err(_orch("        w: pl.Array[pl.TASK_ID] = pl.array.create(4, pl.TASK_ID)"), ParserTypeError)
    assert err.message == "pl.Array[...] needs a positive integer extent and a dtype"


def test_array_through_an_if_in_orchestration_is_copied_into_the_if_result(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    body = """        w = pl.array.create(2, pl.TASK_ID)
        for i in pl.range(2):
            with pl.at(level=pl.Level.CORE_GROUP) as tid:
                out = pl.store(pl.load(a, [i * 64, 0], [64, 64]), [i * 64, 0], out)
            if i == 0:
                w[i] = tid"""
    c = ir.compile(pl.parse(_orch(body)), skip_ptoas=True)  # was a refusal: the if's array result is a copy
    cpp = next((Path(c.output_dir) / "orchestration").glob("*.cpp")).read_text()
    assert re.search(r"PTO2TaskId w\w*\[2\];\s*\n\s*if \(", cpp), cpp


def _kernel(body: str, params: str = "") -> str:
    return H + f"""
@pl.program
class K:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: {T}{params}, out: pl.Out[{T}]) -> {T}:
        with pl.at(level=pl.Level.CORE_GROUP):
{body}
        return out
"""


def test_pipeline_stage_must_be_a_positive_int():
    src = _kernel("            for i in pl.pipeline(4, stage=0):\n"
                  "                out = pl.store(pl.load(a, [i * 64, 0], [64, 64]), [i * 64, 0], out)")
    assert _err(src, ParserTypeError).message == "pl.pipeline() needs stage=<positive int>"


def test_pipeline_with_a_runtime_step_is_rejected_when_lowered(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    src = _kernel("            for i in pl.pipeline(0, 4, s, stage=2):\n"
                  "                out = pl.store(pl.load(a, [i * 64, 0], [64, 64]), [i * 64, 0], out)",
                  ", s: pl.Scalar[pl.INDEX]")
    with pytest.raises(UserError, match="pl.pipeline[(][)] needs a constant positive step") as ei:
        ir.compile(pl.parse(src), skip_ptoas=True)
    assert ei.value.span.line == 8


@pytest.mark.parametrize(("ann", "message"), [
    ('pl.MemRef("ub", slots=2)', 'pl.MemRef(..., slots=2) needs a slot index: pl.MemRef(..., slots=2)[k]'),
    ('pl.MemRef("ub", slots=2)[2]', "slot 2 is out of range for pl.MemRef(..., slots=2)"),
    ('pl.MemRef("ub", slots=0)[0]', "pl.MemRef(slots=...) takes a positive integer, got 0"),
    ('pl.MemRef("ub", slots=2)[1.0]', "a pl.MemRef slot index must be an integer expression"),
    ('pl.MemRef("ub", size=2)', "pl.MemRef() got an unexpected keyword 'size'"),
])
def test_memref_slot_misuse(ann, message):
    src = _kernel(f"            t: pl.Tile[[64, 64], pl.FP32, {ann}, pl.Mem.Vec] = pl.load(a, [0, 0], [64, 64])\n"
                  "            out = pl.store(t, [0, 0], out)")
    assert _err(src, ParserTypeError).message == message


def test_reshape_of_a_partly_valid_tile_is_rejected_by_codegen(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    src = _kernel("            t = pl.load(a, [0, 0], [64, 64], [32, 64])\n"
                  "            r = pl.reshape(t, [32, 128])\n"
                  "            out = pl.store(pl.reshape(r, [64, 64]), [0, 0], out)")
    with pytest.raises(UserError, match="tile.reshape between these tile layouts is not supported .*ptoas 0.1.1"):
        ir.compile(pl.parse(src), skip_ptoas=True)


def test_array_at_a_run_time_index_in_a_kernel_is_refused(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # constant indices become scalars (tests/passes/test_kernel_arrays.py)
    src = _kernel("            w = pl.array.create(2, pl.INT32)\n"
                  "            for i in pl.range(2):\n"
                  "                w[i] = 1\n"
                  "            out = pl.store(pl.load(a, [0, 0], [64, 64]), [0, 0], out)")
    with pytest.raises(UserError, match="has no !pto.local_array") as ei:
        ir.compile(pl.parse(src), skip_ptoas=True)
    assert "constants" in ei.value.hint


def test_spmd_loop_over_a_pl_at_body_and_mixed_bodies():
    ok = _orch("        for i in pl.spmd(4):\n"
               "            with pl.at(level=pl.Level.CORE_GROUP, name_hint='blk'):\n"
               "                out = pl.store(pl.load(a, [i * 64, 0], [64, 64]), [i * 64, 0], out)")
    prog = pl.parse(ok)
    assert "pl.tile.get_block_idx()" in ir.python_print(prog) and "name_hint=\"blk\"" in ir.python_print(prog)
    bad = _orch("        for i in pl.spmd(4):\n"
                "            t = i * 64\n"
                "            with pl.at(level=pl.Level.CORE_GROUP):\n"
                "                out = pl.store(pl.load(a, [t, 0], [64, 64]), [t, 0], out)")
    assert "cannot contain a pl.at(...) region" in _err(bad, ParserSyntaxError).message


def test_typing_stand_ins_in_annotations_name_themselves(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    src = _orch("        x: pl.IntLike = 3")
    program = pl.parse(src)  # a @pl.program defines; compiling it refuses the construct at its location
    with pytest.raises(UnsupportedFeatureError) as ei:
        ir.compile(program, skip_ptoas=True)
    assert ei.value.message.startswith("pl.IntLike is not supported by pypto with ptoas 0.1.1")
    assert (ei.value.span.line, ei.value.span.col) == (7, 12)


def test_spmd_over_a_mixed_cube_vector_region_with_a_run_time_block_count_sizes_its_bands_at_launch(
        tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    src = H + """
@pl.program
class Mix:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[128, 64], pl.FP16], b: pl.Tensor[[64, 64], pl.FP16], ns: pl.Tensor[[1], pl.INDEX],
             out: pl.Out[pl.Tensor[[128, 64], pl.FP32]]) -> pl.Tensor[[128, 64], pl.FP32]:
        n: pl.Scalar[pl.INDEX] = pl.tensor.read(ns, [0])
        for i in pl.spmd(n):
            acc = pl.matmul(pl.load(a, [i * 64, 0], [64, 64], target_memory=pl.Mem.Mat),
                            pl.load(b, [0, 0], [64, 64], target_memory=pl.Mem.Mat))
            out = pl.store(pl.exp(acc), [i * 64, 0], out)
        return out
"""
    c = ir.compile(pl.parse(src), skip_ptoas=True)  # was a refusal: the GM bands were sized at compile time
    cpp = next((Path(c.output_dir) / "orchestration").glob("*.cpp")).read_text()
    read = cpp.index("ns")  # the block count is read first, then the bands are created with n * 64 rows
    band = re.search(r"uint32_t \w+_ci_shapes\[2\] = \{\(?n\w* \* 64\)?, 64\};", cpp)
    assert band and band.start() > read, cpp


def test_split_and_cross_core_slot_round_trip_and_validate():
    src = _orch("        with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.split(pl.SplitMode.UP_DOWN), "
                "pl.cross_core_slot(slot_num=4)]):\n"
                "            out = pl.store(pl.load(a, [0, 0], [64, 64]), [0, 0], out)")
    prog = pl.parse(src)
    text = ir.python_print(prog)
    assert "optimizations=[pl.split(pl.SplitMode.UP_DOWN), pl.cross_core_slot(slot_num=4)]" in text
    assert ir.structural_equal(pl.parse(text), prog)
    bad = src.replace("slot_num=4", "slot_num=0")
    assert "takes a positive integer, got 0" in _err(bad, ParserTypeError).message


@pytest.mark.parametrize(("axes", "shown"), [("100000, 1", "100000"), ("0, 2", "2"), ("-1, 0", "-1")])
def test_transpose_axis_out_of_range_is_a_located_user_error(axes, shown):
    err = _err(_orch(f"        t = pl.transpose(a, {axes})"))
    assert err.message.startswith("tensor.transpose: axis")
    assert f"must be a constant axis in [0, 2) for a rank-2 operand, got {shown}" in err.message
    assert err.span.line == 7


def test_transpose_in_range_swaps_the_shape():
    prog = pl.parse(_orch("        t = pl.transpose(a, 1, 0)"))
    # the transposed tensor keeps a's memory: a column-major (DN) view with a's strides swapped
    assert ("t: pl.Tensor[[64, 256], pl.FP32, pl.TensorView(stride=[1, 64], layout=pl.TensorLayout.DN)] = "
            "pl.tensor.transpose(a, 1, 0)") in ir.python_print(prog)
