"""A view may run past the tensor it is sliced from along its first dimension (as in upstream's release
runtime); every access is checked against the buffer, in the orchestration and in kernels."""

from __future__ import annotations

import pytest

import pypto.language as pl
from pypto.runtime import run
from pypto.runtime.native import KernelFaultError, OrchestrationError


@pl.program
class _TableWindows:
    """Each of three requests reads the first entry of a fixed 4-entry window into a 6-entry table."""

    @pl.function(type=pl.FunctionType.InCore)
    def fill(self, out: pl.Out[pl.Tensor[[16, 16], pl.FP32]], v: pl.Scalar[pl.FP32], r: pl.Scalar[pl.INDEX],
             ) -> pl.Tensor[[16, 16], pl.FP32]:
        out = pl.store(pl.tile.full([4, 16], dtype=pl.FP32, value=0.0) + v, [r * 4, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, table: pl.Tensor[[6], pl.INT32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
             ) -> pl.Tensor[[16, 16], pl.FP32]:
        for r in pl.range(3):
            window = pl.slice(table, [4], [r * 2])  # r = 2: [4, +4) of 6 entries
            first = pl.tensor.read(window, [0])
            out = self.fill(out, pl.cast(first, pl.FP32), r)
        return out


def test_a_window_past_the_table_reads_inside_it(torch) -> None:
    table, out = torch.tensor([5, 1, 4, 2, 7, 3], dtype=torch.int32), torch.zeros(16, 16)
    run(_TableWindows, table, out)
    assert out[:12, 0].tolist() == [5.0] * 4 + [4.0] * 4 + [7.0] * 4


def test_reading_past_the_buffer_through_such_a_window_is_an_error(torch) -> None:
    src = '''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def fill(self, out: pl.Out[pl.Tensor[[16, 16], pl.FP32]], v: pl.Scalar[pl.FP32]) -> pl.Tensor[[16, 16], pl.FP32]:
        out = pl.store(pl.tile.full([16, 16], dtype=pl.FP32, value=0.0) + v, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, table: pl.Tensor[[6], pl.INT32], out: pl.Out[pl.Tensor[[16, 16], pl.FP32]],
             ) -> pl.Tensor[[16, 16], pl.FP32]:
        start = pl.cast(pl.tensor.read(table, [0]), pl.INDEX)  # 4, known only at run time
        window = pl.slice(table, [4], [start])
        last = pl.tensor.read(window, [3])  # element 7 of 6
        out = self.fill(out, pl.cast(last, pl.FP32))
        return out
'''
    with pytest.raises(OrchestrationError, match="past the end of the tensor's buffer"):
        run(pl.parse(src), torch.tensor([4, 0, 0, 0, 0, 0], dtype=torch.int32), torch.zeros(16, 16))


_KERNEL_WINDOW = '''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def copy(self, x: pl.Tensor[[16, 16], pl.FP32], out: pl.Out[pl.Tensor[[ROWS, 16], pl.FP32]],
             ) -> pl.Tensor[[ROWS, 16], pl.FP32]:
        out = pl.store(pl.load(x, [0, 0], [ROWS, 16]), [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[32, 16], pl.FP32], at: pl.Tensor[[1], pl.INT32],
             out: pl.Out[pl.Tensor[[ROWS, 16], pl.FP32]]) -> pl.Tensor[[ROWS, 16], pl.FP32]:
        row = pl.cast(pl.tensor.read(at, [0]), pl.INDEX)
        window = pl.slice(x, [16, 16], [row, 0])  # row 24: rows 24..39 of 32
        out = self.copy(window, out)
        return out
'''


def test_a_kernel_may_load_the_part_of_such_a_window_inside_the_buffer(torch) -> None:
    x, out = torch.randn(32, 16), torch.zeros(8, 16)
    run(pl.parse(_KERNEL_WINDOW.replace("ROWS", "8")), x, torch.tensor([24], dtype=torch.int32), out)
    torch.testing.assert_close(out, x[24:32], rtol=0, atol=0)


def test_a_kernel_loading_past_the_buffer_faults(torch) -> None:
    with pytest.raises(KernelFaultError, match="GM out of bounds"):
        run(pl.parse(_KERNEL_WINDOW.replace("ROWS", "16")), torch.randn(32, 16), torch.tensor([24], dtype=torch.int32),
            torch.zeros(16, 16))
