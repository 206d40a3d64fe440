"""A kernel that reads a scalar of its own tile is cut there into two tasks: the tile goes through a GM
scratch tensor, the orchestration reads it (and runs the scalar loops and ifs on it) between the tasks."""

from __future__ import annotations

import numpy as np
import pytest
from cut_helpers import FRONT, front, program_calls

import pypto.language as pl
from pypto.errors import UnsupportedFeatureError
from pypto.ir.expr import Call
from pypto.ir.stmt import AssignStmt, ForStmt, preorder
from pypto.runtime import RunConfig, run

PICK = '''
import pypto.language as pl

@pl.program
class Pick:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, ids: pl.Tensor[[2, 8], pl.INT32], table: pl.Tensor[[16, 64], pl.FP32],
             out: pl.Out[pl.Tensor[[2, 64], pl.FP32]]) -> pl.Tensor[[2, 64], pl.FP32]:
        for b in pl.range(2):
            with pl.at(level=pl.Level.CORE_GROUP):
                k = pl.add(ids[b : b + 1, :], 1)
                {BEFORE}i = pl.read(k, [0, 0])
                row = pl.slice(table, [1, 64], [pl.cast(i, pl.INDEX), 0])
                out[b : b + 1, :] = pl.mul(row, 2.0)
        return out
'''

# the last index of the largest element of each row's first 232 columns, found by scans like greedy sampling's
ARGMAX = '''
import pypto.language as pl

@pl.program
class Argmax:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[2, 256], pl.FP32],
             out: pl.Out[pl.Tensor[[2, 8], pl.INT32]]) -> pl.Tensor[[2, 8], pl.INT32]:
        for b in pl.range(2):
            with pl.at(level=pl.Level.CORE_GROUP):
                maxes = pl.row_max(pl.reshape(x[b : b + 1, :], [4, 64]))
                best_t = pl.row_max(pl.reshape(maxes, [1, 4]))
                best = pl.read(best_t, [0, 0])
                chunk = pl.cast(0, pl.INT32)
                for c in pl.range(4):
                    sc = 3 - c
                    if pl.read(maxes, [sc, 0]) == best:
                        chunk = pl.cast(sc, pl.INT32)
                base = chunk * pl.cast(64, pl.INT32)
                w = pl.slice(x, [1, 64], [pl.cast(b, pl.INDEX), pl.cast(base, pl.INDEX)])
                pos = pl.cast(0, pl.INT32)
                if chunk == pl.cast(3, pl.INT32):
                    padded = pl.fillpad(pl.set_validshape(w, 1, 40), pad_value=pl.PadValue.min)
                    for t in pl.range(64):
                        st = 63 - t
                        if pl.read(padded, [0, pl.cast(st, pl.INDEX)]) == best:
                            pos = pl.cast(st, pl.INT32)
                else:
                    for t in pl.range(64):
                        st = 63 - t
                        if pl.read(w, [0, pl.cast(st, pl.INDEX)]) == best:
                            pos = pl.cast(st, pl.INT32)
                token = base + pos
                o = pl.create_tensor([1, 8], dtype=pl.INT32)
                o[:, :] = pl.full([1, 8], dtype=pl.INT32, value=0)
                pl.write(o, [0, 0], token)
                out[b : b + 1, :] = o
        return out
'''


def _front(text: str):
    return front(text, (*FRONT, "HoistKernelReads"))


def _reads(f) -> list[AssignStmt]:
    return [s for s in preorder(f.body) if isinstance(s, AssignStmt) and isinstance(s.value, Call)
            and s.value.op == "tensor.read"]


def test_the_kernel_is_cut_at_the_read_and_the_orchestration_reads_the_stored_tile() -> None:
    prog = _front(PICK.replace("{BEFORE}", ""))
    main = prog.get_function("main")
    assert program_calls(main) == ["main_incore_0_head", "main_incore_0"]  # the head task first, then the rest
    head, rest = prog.get_function("main_incore_0_head"), prog.get_function("main_incore_0")
    assert not _reads(head) and not _reads(rest) and _reads(main)
    assert [p.name for p in rest.params][-1] == "i__ssa_v0"  # the value arrives as a scalar
    assert all("_gm" not in p.name for p in rest.params)  # the stored tile is not passed on unused


def test_the_scalar_scans_between_the_cuts_run_in_the_orchestration() -> None:
    prog = _front(ARGMAX)
    main = prog.get_function("main")
    assert program_calls(main) == ["main_incore_0_head", "main_incore_0_head_1", "main_incore_0"]
    for f in prog.functions:
        if f.is_incore:
            assert not _reads(f) and not any(isinstance(s, ForStmt) for s in preorder(f.body))


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_a_window_addressed_by_a_tile_element_matches_numpy(platform: str) -> None:
    ids = np.array([[3] + [0] * 7, [9] + [1] * 7], np.int32)
    table = np.arange(16 * 64, dtype=np.float32).reshape(16, 64)
    out = np.zeros((2, 64), np.float32)
    run(pl.parse_program(PICK.replace("{BEFORE}", "")), ids, table, out, config=RunConfig(platform=platform))
    np.testing.assert_array_equal(out, np.stack([table[4], table[10]]) * 2)


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_the_argmax_by_scans_matches_numpy(platform: str) -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 256)).astype(np.float32)
    x[:, 232:] = -1e30  # beyond the real columns (the kernel pads the last chunk there)
    x[0, 200] = 9.0  # in the padded last chunk
    x[1, 70] = x[1, 100] = 9.0  # a tie: the scans keep the first index
    out = np.zeros((2, 8), np.int32)
    run(pl.parse_program(ARGMAX), x, out, config=RunConfig(platform=platform))
    want = np.zeros((2, 8), np.int32)
    want[:, 0] = np.argmax(x[:, :232], axis=1)
    np.testing.assert_array_equal(out, want)


def test_a_kernel_that_writes_its_output_before_the_read_keeps_the_located_error() -> None:
    text = PICK.replace("{BEFORE}", "out[b : b + 1, :] = pl.full([1, 64], dtype=pl.FP32, value=0.0)\n"
                                    "                ")
    with pytest.raises(UnsupportedFeatureError, match=r"scalar read of 'k', a tensor this kernel computes") as exc:
        _front(text)
    assert ":13:" in str(exc.value)  # the read's line


SPMD_PICK = '''
import pypto.language as pl

@pl.program
class SpmdPick:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, ids: pl.Tensor[[2, 8], pl.INT32], table: pl.Tensor[[16, 64], pl.FP32],
             out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        for c in pl.spmd(2, name_hint="pick"):
            k = pl.add(ids[c : c + 1, :], 1)
            i = pl.cast(pl.read(k, [0, 0]), pl.INDEX)
            out[i : i + 1, :] = pl.mul(table[i : i + 1, :], 2.0)  # the rest does not ask for its block
        return out
'''


def test_an_spmd_kernel_is_not_cut_and_keeps_the_located_error() -> None:
    with pytest.raises(UnsupportedFeatureError, match=r"scalar read of 'k', a tensor this kernel computes") as exc:
        _front(SPMD_PICK)
    assert ":11:" in str(exc.value)  # its head would run as one task, not a launch of blocks
