"""A loop of element reads of a tile the kernel computes, scalar arithmetic and element writes becomes
row tile ops (ptoas 0.1.1 has no scalar read of a tile and no float scalar arithmetic in a kernel)."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import UnsupportedFeatureError
from pypto.ir.expr import Call
from pypto.ir.stmt import AssignStmt, EvalStmt, preorder
from pypto.passes import get_pass
from pypto.runtime import RunConfig, run

SCALES = '''
import pypto.language as pl

@pl.program
class Scales:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[8, 64], pl.FP32], cols: pl.Out[pl.Tensor[[8, 1], pl.FP32]],
             flat: pl.Out[pl.Tensor[[8], pl.FP32]], inv: pl.Out[pl.Tensor[[8], pl.FP32]],
             out: pl.Out[pl.Tensor[[8, 64], pl.FP32]]) -> pl.Tensor[[8, 64], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            amax = pl.reshape(pl.row_max(pl.maximum(x, pl.neg(x))), [1, 8])
            q = pl.full([1, 8], dtype=pl.FP32, value=0.0)
            for r in pl.unroll(8):
                a = pl.tensor.read(amax, [0, r])
                k = 127.0 / a
                pl.tensor.write(cols, [r, 0], a / 127.0)
                pl.tensor.write(flat, [r], a * 2.0 - 1.0)
                pl.tensor.write(q, [0, r], k)
            out = pl.assemble(out, pl.row_expand_mul(x, pl.reshape(q, [8, 1])), [0, 0])
        with pl.at(level=pl.Level.CORE_GROUP):
            rs = pl.recip(pl.row_sum(pl.mul(x, x)))
            for b in pl.unroll(8):
                pl.tensor.write(inv, [b], pl.tensor.read(rs, [b, 0]))
        return out
'''


def _scales(platform: str) -> None:
    x = np.random.default_rng(3).standard_normal((8, 64)).astype(np.float32)
    cols, flat, inv = np.zeros((8, 1), np.float32), np.zeros(8, np.float32), np.zeros(8, np.float32)
    out = np.zeros((8, 64), np.float32)
    run(pl.parse_program(SCALES), x, cols, flat, inv, out, config=RunConfig(platform=platform))
    amax = np.abs(x).max(1)
    np.testing.assert_allclose(cols[:, 0], amax / 127.0, rtol=1e-6)
    np.testing.assert_allclose(flat, amax * 2.0 - 1.0, rtol=1e-6)
    np.testing.assert_allclose(inv, 1.0 / (x * x).sum(1), rtol=1e-5)
    np.testing.assert_allclose(out, x * (127.0 / amax)[:, None], rtol=1e-5)


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_an_unrolled_element_loop_of_a_computed_tile_matches_numpy(platform: str) -> None:
    _scales(platform)


def test_the_loop_becomes_row_ops_before_it_would_be_unrolled() -> None:
    prog = get_pass("UnrollLoops")().run(pl.parse_program(SCALES))
    calls = [s.value if isinstance(s, AssignStmt) else s.expr for s in preorder(prog.functions[0].body)
             if isinstance(s, AssignStmt | EvalStmt)]
    ops = [c.op for c in calls if isinstance(c, Call)]
    assert "tensor.read" not in ops and "tensor.write" not in ops
    assert {"tensor.div", "tensor.divs", "tensor.muls", "tensor.subs", "tensor.assemble"} <= set(ops)
    assert ops.count("tensor.full") == 2  # q's, and the row of 127.0 that 127.0 / a divides


ROWS = '''
import pypto.language as pl

@pl.program
class RowScales:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[8, 64], pl.FP32], cols: pl.Out[pl.Tensor[[8, 1], pl.FP32]],
             out: pl.Out[pl.Tensor[[8, 64], pl.FP32]]) -> pl.Tensor[[8, 64], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            amax = pl.reshape(pl.row_max(pl.maximum(x, pl.neg(x))), [1, 8])
            for r in pl.range({START}, 8):
                a = pl.tensor.read(amax, [0, r])
                w = 127.0 / a
                pl.tensor.write(cols, [r, 0], a / 127.0)
                for k in pl.range(2):
                    xr = pl.slice(x, [1, 32], [r, k * 32])
                    out = pl.assemble(out, pl.mul(xr, w), [r, k * 32])
        return out
'''


@pytest.mark.parametrize(("platform", "start"), [("a2a3sim", 0), ("a2a3sim", 3), ("a5sim", 0)])
def test_a_loop_going_on_with_tile_work_is_split_and_takes_a_window_of_the_row(platform: str, start: int) -> None:
    x = np.random.default_rng(5).standard_normal((8, 64)).astype(np.float32)
    cols, out = np.zeros((8, 1), np.float32), np.zeros((8, 64), np.float32)
    run(pl.parse_program(ROWS.replace("{START}", str(start))), x, cols, out, config=RunConfig(platform=platform))
    amax = np.abs(x).max(1)
    np.testing.assert_allclose(cols[start:, 0], amax[start:] / 127.0, rtol=1e-6)
    np.testing.assert_array_equal(cols[:start], 0)
    np.testing.assert_allclose(out[start:], x[start:] * (127.0 / amax[start:])[:, None], rtol=1e-5)
    np.testing.assert_array_equal(out[:start], 0)


def test_a_scalar_with_another_use_keeps_the_located_error() -> None:
    text = ROWS.replace("{START}", "0").replace("pl.mul(xr, w)", "pl.mul(xr, w + w)")
    with pytest.raises(UnsupportedFeatureError, match=r"scalar read of 'amax', a tensor this kernel computes") as exc:
        run(pl.parse_program(text), np.zeros((8, 64), np.float32), np.zeros((8, 1), np.float32),
            np.zeros((8, 64), np.float32))
    assert ":12:" in str(exc.value)  # located at the read


def test_a_window_of_a_computed_tile_written_in_part_keeps_the_located_error() -> None:
    text = SCALES.replace("pl.unroll(8):\n                a =", "pl.unroll(4):\n                a =")
    with pytest.raises(UnsupportedFeatureError, match=r"scalar read of 'amax'.*pto\.tgetval") as exc:
        run(pl.parse_program(text), *(np.zeros(s, np.float32) for s in ((8, 64), (8, 1), 8, 8, (8, 64))))
    assert ":14:" in str(exc.value)


def test_a_loop_that_may_break_is_left_alone() -> None:
    text = ROWS.replace("{START}", "0").replace(
        "                for k in pl.range(2):", "                if r > 4:\n                    break\n                for k in pl.range(2):")
    prog = get_pass("UnrollLoops")().run(pl.parse_program(text))
    ops = [s.value.op for s in preorder(prog.functions[0].body)
           if isinstance(s, AssignStmt) and isinstance(s.value, Call)]
    assert "tensor.read" in ops and "tensor.div" not in ops  # its element statements would run past the break
