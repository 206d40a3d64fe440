"""One pass on IR text, the printed result checked FileCheck-style (beside the end-to-end pass tests)."""

from __future__ import annotations

import pytest
from filecheck import filecheck

import pypto.language as pl
from pypto.errors import UserError
from pypto.ir.printer import python_print
from pypto.passes import get_pass
from pypto.passes.context import PassContext

HEADER = "import pypto.language as pl\n\n@pl.program\nclass P:\n"


def run_pass(name: str, body: str) -> str:
    """Parse ``body`` (the functions of a program), run pass ``name`` alone and print the result."""
    program = pl.parse(HEADER + body)
    return python_print(get_pass(name).from_context(PassContext()).run(program))


MATMUL = """
    @pl.function(type=pl.FunctionType.InCore)
    def k(a: pl.Tensor[[16, 16], pl.FP32], b: pl.Tensor[[16, 16], pl.FP32], c: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        ta: pl.Tile[[16, 16], pl.FP32, pl.Mem.Mat] = pl.tile.load(a, [0, 0], [16, 16], [16, 16], target_memory=pl.Mem.Mat)
        tb: pl.Tile[[16, 16], pl.FP32, pl.Mem.Mat] = pl.tile.load(b, [0, 0], [16, 16], [16, 16], target_memory=pl.Mem.Mat)
        tc: pl.Tile[[16, 16], pl.FP32] = pl.tile.matmul(ta, tb)
        c2: pl.Tensor[[16, 16], pl.FP32] = pl.tile.store(tc, [0, 0], c)
        return c2
"""


def test_infer_tile_memory_space_moves_matmul_operands_and_puts_the_result_in_acc():
    filecheck(run_pass("InferTileMemorySpace", MATMUL), """
        CHECK-LABEL: def k(
        CHECK: ta: pl.Tile[[16, 16], pl.FP32, pl.Mem.Mat] = pl.tile.load(a
        CHECK: ta_l0a: pl.Tile[[16, 16], pl.FP32, pl.Mem.Left] = pl.tile.move(ta, target_memory=pl.Mem.Left)
        CHECK-NEXT: tb_l0b: pl.Tile[[16, 16], pl.FP32, pl.Mem.Right] = pl.tile.move(tb, target_memory=pl.Mem.Right)
        CHECK-NEXT: tc: pl.Tile[[16, 16], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(ta_l0a, tb_l0b)
        CHECK-NEXT: pl.tile.store(tc, [0, 0], c)
    """)


def test_infer_tile_memory_space_rejects_a_matmul_result_as_a_matmul_operand():
    """An Acc tile is neither staged through Mat (that is for vector tiles) nor moved: a located error."""
    body = MATMUL.replace("pl.tile.store(tc,", "pl.tile.store(td,").replace(
        "tc: pl.Tile[[16, 16], pl.FP32]", "tc: pl.Tile[[16, 16], pl.FP32, pl.Mem.Acc]").replace(
        "        c2:", "        td: pl.Tile[[16, 16], pl.FP32] = pl.tile.matmul(tc, tb)\n        c2:")
    with pytest.raises(UserError, match=r"tile.matmul operand 0 is in Acc; the cube reads operands from Mat") as exc:
        run_pass("InferTileMemorySpace", body)
    assert exc.value.span.line == 11 and "target_memory=pl.Mem.Mat" in str(exc.value)


def test_normalize_return_order_returns_the_param_a_tensor_write_updated():
    out = run_pass("NormalizeReturnOrder", """
    @pl.function(type=pl.FunctionType.InCore)
    def k(x: pl.Scalar[pl.FP32], out: pl.Out[pl.Tensor[[16], pl.FP32]]) -> pl.Tensor[[16], pl.FP32]:
        out2: pl.Tensor[[16], pl.FP32] = pl.tensor.write(out, [0], x)
        return out2
""")
    filecheck(out, """
        CHECK: out2: pl.Tensor[[16], pl.FP32] = pl.tensor.write(out, [0], x)
        CHECK-NEXT: return out$
    """)


def test_resolve_backend_op_layouts_loads_a_transpose_view_through_the_transposed_tensor():
    out = run_pass("ResolveBackendOpLayouts", """
    @pl.function(type=pl.FunctionType.InCore)
    def k(a: pl.Tensor[[16, 32], pl.FP32]) -> pl.Tile[[32, 16], pl.FP32, pl.Mem.Mat]:
        t: pl.Tile[[16, 32], pl.FP32, pl.Mem.Mat] = pl.tile.load(a, [0, 0], [16, 32], [16, 32], target_memory=pl.Mem.Mat)
        v: pl.Tile[[32, 16], pl.FP32, pl.Mem.Mat] = pl.tile.transpose_view(t)
        return v
""")
    filecheck(out, """
        CHECK-NOT: pl.tile.load(a,
        CHECK: a_t: pl.Tensor[[32, 16], pl.FP32
        CHECK-NEXT: v: pl.Tile[[32, 16], pl.FP32, pl.Mem.Mat] = pl.tile.load(a_t, [0, 0], [32, 16], [32, 16], target_memory=pl.Mem.Mat)
        CHECK-NOT: transpose_view
    """)


def test_unroll_loops_repeats_the_body_with_constant_indices():
    out = run_pass("UnrollLoops", """
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
        for i in pl.unroll(0, 6, 2):
            b: pl.Scalar[pl.INDEX] = a + i
        return a
""")
    filecheck(out, """
        CHECK-NOT: pl.unroll
        CHECK: = a + 0
        CHECK-NEXT: = a + 2
        CHECK-NEXT: = a + 4
        CHECK-NEXT: return a
    """)


def test_filecheck_reports_a_missing_line_and_a_forbidden_one():
    with pytest.raises(AssertionError, match="CHECK-NEXT"):
        filecheck("a\nb\nc", "CHECK: a\nCHECK-NEXT: c")
    with pytest.raises(AssertionError, match="CHECK-NOT"):
        filecheck("a\nb\nc", "CHECK: a\nCHECK-NOT: b\nCHECK: c")
    filecheck("a\nb\nc", "CHECK-LABEL: a\nCHECK-NEXT: b\nCHECK-NOT: x\nCHECK: c")
    with pytest.raises(AssertionError, match="CHECK:"):
        filecheck("return out2", "CHECK: return out$")


def test_hoist_kernel_reads_moves_a_top_level_read_to_the_call_site_as_a_scalar_argument():
    out = run_pass("HoistKernelReads", """
    @pl.function(type=pl.FunctionType.InCore)
    def k(src: pl.Tensor[[64, 32], pl.FP32], idx: pl.Tensor[[4], pl.INT32], out: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        r: pl.Scalar[pl.INT32] = pl.tensor.read(idx, 0)
        row: pl.Scalar[pl.INDEX] = pl.cast(r, pl.INDEX)
        t: pl.Tile[[16, 32], pl.FP32, pl.Mem.Vec] = pl.tile.load(src, [row * 16, 0], [16, 32], [16, 32], target_memory=pl.Mem.Vec)
        out2: pl.Tensor[[16, 32], pl.FP32] = pl.tile.store(t, [0, 0], out)
        return out2

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, src: pl.Tensor[[64, 32], pl.FP32], idx: pl.Tensor[[4], pl.INT32], out: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        out2: pl.Tensor[[16, 32], pl.FP32] = self.k(src, idx, out)
        return out2
""")
    filecheck(out, """
        CHECK-LABEL: out: pl.Out[pl.Tensor[[16, 32], pl.FP32]], row: pl.Scalar[pl.INDEX]) ->
        CHECK-NOT: pl.tensor.read
        CHECK: pl.tile.load(src, [row * 16, 0]
        CHECK-LABEL: def main(
        CHECK-NEXT: r: pl.Scalar[pl.INT32] = pl.tensor.read(idx, [0])
        CHECK-NEXT: row: pl.Scalar[pl.INDEX] = pl.cast(r, pl.INDEX)
        CHECK-NEXT: out2: pl.Tensor[[16, 32], pl.FP32] = self.k(src, idx, out, row)
    """)
