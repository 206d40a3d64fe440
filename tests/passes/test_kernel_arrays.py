"""A kernel's pl.array becomes one scalar per element (GatherCarriedReads' first step), and a scalar read of a tile
loaded from an unwritten tensor parameter is a read of that tensor (moved to the orchestration)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.errors import UnsupportedFeatureError
from pypto.ir.printer import python_print
from pypto.passes.manager import PassManager

T, S, D = "pl.Tensor[[2, 16], pl.INT32]", "pl.Tensor[[1, 64], pl.FP32]", "pl.Tensor[[16, 64], pl.FP32]"


def _program(body: str) -> str:
    return f"""import pypto.language as pl

@pl.program
class Rows:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, table: {T}, row: {S}, out: pl.InOut[{D}]) -> {D}:
        tt = pl.load(table, [1, 0], [1, 16])
        rt = pl.load(row, [0, 0], [1, 64])
{body}
        return pl.store(rt, [at, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, table: {T}, row: {S}, out: pl.InOut[{D}]) -> {D}:
        out = self.k(table, row, out)
        return out
"""


CHOOSE = """        first: pl.Scalar[pl.INT32] = pl.tile.read(tt, [0, 3])
        second: pl.Scalar[pl.INT32] = pl.tile.read(tt, [0, 5])
        picks = pl.array.create(3, pl.INT32)
        picks[0] = first * 2
        picks[2] = second
        if first < second:
            picks[1] = picks[2]
        else:
            picks[1] = picks[0] + 1
        at: pl.Scalar[pl.INDEX] = pl.cast(picks[1], pl.INDEX)"""


def _upto(src: str, last: str) -> str:
    names = list(PassManager.get_strategy().get_pass_names())
    return python_print(PassManager(tuple(names[:names.index(last) + 1])).run_passes(pl.parse(src)))


def test_arrays_become_scalars_and_tile_reads_become_tensor_reads() -> None:
    text = _upto(_program(CHOOSE), "HoistKernelReads")
    kernel, orch = text.split("def main")
    assert "pl.array" not in text and "pl.tile.read" not in text
    # the reads of the loaded [1, 16] window at row 1 are reads of the table at [1, 3] and [1, 5] ...
    assert "pl.tensor.read(table__ssa_v0, [1, 3])" in orch and "pl.tensor.read(table__ssa_v0, [1, 5])" in orch
    # ... and the if chooses between two scalars (one element differs between its branches)
    assert kernel.count("pl.yield_(") == 2 and "picks_1__elem" in kernel


@pytest.mark.sim
@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
@pytest.mark.parametrize(("first", "second"), [(3, 9), (6, 2)])
def test_array_element_chosen_by_an_if_drives_the_store_row(platform: str, first: int, second: int,
                                                           tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    compiled = ir.compile(pl.parse(_program(CHOOSE)), platform=platform)
    table = np.zeros((2, 16), np.int32)
    table[1, 3], table[1, 5], table[0, 3] = first, second, 99  # row 0 is never loaded
    row = np.linspace(-1, 1, 64, dtype=np.float32)[None]
    out = np.zeros((16, 64), np.float32)
    compiled(table, row, out)
    at = second if first < second else first * 2 + 1
    want = np.zeros((16, 64), np.float32)
    want[at] = row[0]
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize(("body", "what", "line"), [
    ("""        i: pl.Scalar[pl.INT32] = pl.tile.read(tt, [0, 0])
        a = pl.array.create(4, pl.INT32)
        a[0] = i
        j: pl.Scalar[pl.INDEX] = pl.cast(i, pl.INDEX)
        at: pl.Scalar[pl.INDEX] = pl.cast(a[j], pl.INDEX)""", "pl.array element at a run-time index", 13),
    ("""        a = pl.array.create(2, pl.INT32)
        a[0] = 1
        for q in pl.range(3):
            a[0] = a[0] + q
        at: pl.Scalar[pl.INDEX] = pl.cast(a[0], pl.INDEX)""", "pl.array carried by a loop", 11),
    ("""        a = pl.array.create(2, pl.INT32)
        at: pl.Scalar[pl.INDEX] = pl.cast(a[2], pl.INDEX)""", "pl.array index 2 is outside", 10),
])
def test_arrays_that_cannot_be_scalars_are_located_refusals(body: str, what: str, line: int) -> None:
    with pytest.raises(UnsupportedFeatureError) as ei:
        _upto(_program(body), "GatherCarriedReads")
    assert what in str(ei.value) and ei.value.span is not None and ei.value.span.line == line
    if "outside" not in what:
        assert "ptoas 0.1.1 has no !pto.local_array" in str(ei.value) and "v0.57" in str(ei.value)
        assert "constants" in (ei.value.hint or "")
