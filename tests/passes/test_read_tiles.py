"""A tensor read in a kernel loop that only scales one-row tiles becomes a [1, 1] window load
(ptoas 0.1.1 has no scalar load from GM); the loop may carry a tile."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import UnsupportedFeatureError
from pypto.ir.stmt import AssignStmt, preorder
from pypto.passes import get_pass
from pypto.runtime import RunConfig, run

FRONT = ("InlineFunctions", "UnrollLoops", "CtrlFlowTransform", "ConvertToSSA", "Simplify",
         "NormalizeStmtStructure", "FlattenCallExpr", "OutlineHierarchyScopes", "OutlineIncoreScopes",
         "GatherCarriedReads")

WEIGHTED = '''
import pypto.language as pl

@pl.program
class Weighted:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[8 * {M}, 64], pl.FP32], w: pl.Tensor[[2, 4], pl.FP32],
             out: pl.Out[pl.Tensor[[2 * {M}, 64], pl.FP32]]) -> pl.Tensor[[2 * {M}, 64], pl.FP32]:
        wf = pl.reshape(w, [8])
        with pl.at(level=pl.Level.CORE_GROUP):
            for b in pl.range(2):
                acc = pl.full([{M}, 64], dtype=pl.FP32, value=1.0)
                for h in pl.range(4):
                    row = pl.slice(x, [{M}, 64], [(b * 4 + h) * {M}, 0])
                    s = pl.read({W}, {IDX})
                    acc = pl.add(acc, pl.{OP}(row, s))
                out = pl.assemble(out, acc, [b * {M}, 0])
        return out
'''

NUMPY = {"mul": np.multiply, "add": np.add, "sub": np.subtract, "div": np.divide, "maximum": np.maximum}


def _program(op: str, flat: bool = True, rows: int = 1):
    w, idx = ("wf", "[b * 4 + h]") if flat else ("w", "[b, h]")
    text = WEIGHTED.replace("{W}", w).replace("{IDX}", idx).replace("{OP}", op).replace("{M}", str(rows))
    return pl.parse_program(text)


def _want(x: np.ndarray, w: np.ndarray, op: str, rows: int) -> np.ndarray:
    out = np.ones((2 * rows, 64), np.float32)
    for b in range(2):
        for h in range(4):
            blk = (b * 4 + h) * rows
            out[b * rows:(b + 1) * rows] += NUMPY[op](x[blk:blk + rows], w[b, h])
    return out


def test_the_read_becomes_a_one_element_window_and_a_row_broadcast() -> None:
    prog = _program("mul")
    for name in FRONT:
        prog = get_pass(name)().run(prog)
    kernel = next(f for f in prog.functions if f.is_incore)
    ops = [s.value.op for s in preorder(kernel.body) if isinstance(s, AssignStmt) and hasattr(s.value, "op")]
    assert "tensor.read" not in ops and "tensor.muls" not in ops
    assert "tensor.row_expand_mul" in ops and "tensor.reshape" in ops  # the 1-D tensor's [1] window as [1, 1]
    assert len([f for f in prog.functions if f.is_incore]) == 1  # no gather kernel, no orchestration loop


@pytest.mark.parametrize("op", ["mul", "add", "sub", "div", "maximum"])
@pytest.mark.parametrize("flat", [True, False])
def test_weighted_rows_match_numpy(op: str, flat: bool) -> None:
    _check_weighted(op, flat, "a2a3sim")


@pytest.mark.parametrize("op", ["mul", "sub"])
def test_weighted_blocks_of_several_rows_broadcast_the_window_down_the_column(op: str) -> None:
    _check_weighted(op, True, "a2a3sim", rows=4)


@pytest.mark.parametrize("op", ["mul", "div"])
def test_weighted_rows_match_numpy_on_a5sim(op: str) -> None:
    _check_weighted(op, True, "a5sim")


def _check_weighted(op: str, flat: bool, platform: str, rows: int = 1) -> None:
    rng = np.random.default_rng(11)
    x = rng.standard_normal((8 * rows, 64)).astype(np.float32)
    w = (rng.random((2, 4)) + 0.5).astype(np.float32)
    out = np.zeros((2 * rows, 64), np.float32)
    run(_program(op, flat, rows), x, w, out, config=RunConfig(platform=platform))
    np.testing.assert_allclose(out, _want(x, w, op, rows), rtol=1e-6, atol=1e-6)


def test_a_read_with_another_use_keeps_the_located_error() -> None:
    text = WEIGHTED.replace("{W}", "wf").replace("{IDX}", "[b * 4 + h]").replace("{M}", "1").replace(
        "acc = pl.add(acc, pl.{OP}(row, s))", "acc = pl.add(acc, pl.mul(row, s + s))")
    with pytest.raises(UnsupportedFeatureError, match=r"scalar read of a tensor inside a (kernel|loop)") as exc:
        run(pl.parse_program(text), np.zeros((8, 64), np.float32), np.zeros((2, 4), np.float32),
            np.zeros((2, 64), np.float32))
    assert ":15:" in str(exc.value)  # located at the read


NARROW = '''
import pypto.language as pl

@pl.program
class Narrow:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[1, 64], pl.FP32], n: pl.Tensor[[1], pl.INT32],
             out: pl.Out[pl.Tensor[[1, 64], pl.FP32]]) -> pl.Tensor[[1, 64], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            valid = pl.read(n, [0])
            y = pl.mul(x, 2.0)
            part = pl.slice(y, [1, 64], [0, 0], valid_shape=[1, valid])
            out = pl.assemble(out, pl.fillpad(part, pad_value=pl.PadValue.min), [0, 0])
        return out
'''


@pytest.mark.parametrize("valid", [64, 20])
def test_a_whole_window_of_a_computed_tile_narrows_its_valid_shape(valid: int) -> None:
    x = np.arange(64, dtype=np.float32).reshape(1, 64)
    out = np.zeros((1, 64), np.float32)
    run(pl.parse_program(NARROW), x, np.array([valid], np.int32), out)
    want = np.full((1, 64), np.finfo(np.float32).min, np.float32)
    want[0, :valid] = 2 * x[0, :valid]
    if valid < 64:
        assert np.all(out[0, valid:] <= -3.0e38)  # the pad is the dtype's lowest value
        out[0, valid:] = want[0, valid:]
    np.testing.assert_array_equal(out, want)


TILE_READ = '''
import pypto.language as pl

@pl.program
class TileRead:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[1, 64], pl.FP32], out: pl.Out[pl.Tensor[[1, 64], pl.FP32]]) -> pl.Tensor[[1, 64], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            y = pl.exp(x)
            for i in pl.range(4):
                v = pl.read(y, [0, i])
                out = pl.assemble(out, pl.mul(x, v + v), [0, 0])
        return out
'''


def test_a_read_of_a_tile_the_kernel_computes_is_a_located_error_naming_tgetval() -> None:
    # (v + v) is scalar arithmetic outside an element loop (see test_vector_loops for the loops that lower)
    with pytest.raises(UnsupportedFeatureError, match=r"'y', a tensor this kernel computes.*pto\.tgetval.*PlanMemory") as exc:
        run(pl.parse_program(TILE_READ), np.zeros((1, 64), np.float32), np.zeros((1, 64), np.float32))
    assert ":11:" in str(exc.value) and "pl.row_argmax" in (exc.value.hint or "")


COPIED = '''
import pypto.language as pl

@pl.program
class Copied:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[1, 128], pl.FP32], out: pl.Out[pl.Tensor[[1, 16], pl.FP32]]) -> pl.Tensor[[1, 16], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            {VALS}
            for c in pl.range(4):
                t = pl.exp(x[:, c * 32 : c * 32 + 32])
                pl.write(vals, [0, c], pl.read(t, [0, {IDX}]))
            out[:, :] = vals
        return out
'''


FULL = "vals = pl.full([1, 16], dtype=pl.FP32, value=-1.0)"
# t[:, :] = v of a tile the kernel created is a copy of v (a whole-window tile.slice), not a GM store
CREATED = ("vals = pl.create_tensor([1, 16], dtype=pl.FP32)\n"
           "            vals[:, :] = pl.full([1, 16], dtype=pl.FP32, value=-1.0)")


@pytest.mark.parametrize(("platform", "idx", "vals"), [("a2a3sim", "0", FULL), ("a2a3sim", "5", FULL),
                                                       ("a2a3sim", "c", FULL), ("a5sim", "c", FULL),
                                                       ("a2a3sim", "c", CREATED), ("a5sim", "3", CREATED)])
def test_a_read_of_a_computed_tile_only_written_is_a_one_element_window(platform: str, idx: str, vals: str) -> None:
    x = np.random.default_rng(7).standard_normal((1, 128)).astype(np.float32)
    out = np.zeros((1, 16), np.float32)
    text = COPIED.replace("{IDX}", idx).replace("{VALS}", vals)
    run(pl.parse_program(text), x, out, config=RunConfig(platform=platform))
    cols = [c * 32 + (c if idx == "c" else int(idx)) for c in range(4)]
    want = np.full((1, 16), -1.0, np.float32)
    want[0, :4] = np.exp(x[0, cols])
    np.testing.assert_allclose(out, want, rtol=1e-6)


TILE_KERNEL = '''
import pypto.language as pl

@pl.program
class TileWeighted:
    @pl.function(type=pl.FunctionType.InCore)
    def mix(self, x: pl.Tensor[[8 * {M}, 64], pl.FP32], w: pl.Tensor[[2, 4], pl.FP32],
            out: pl.Out[pl.Tensor[[2 * {M}, 64], pl.FP32]]) -> pl.Tensor[[2 * {M}, 64], pl.FP32]:
        for b in pl.range(2):
            acc = pl.load(x, [b * 4 * {M}, 0], [{M}, 64])
            for h in pl.range(1, 4):
                s = pl.read(w, [b, h])
                acc = pl.add(acc, pl.{OP}(pl.load(x, [(b * 4 + h) * {M}, 0], [{M}, 64]), s))
            out = pl.store(acc, [b * {M}, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[8 * {M}, 64], pl.FP32], w: pl.Tensor[[2, 4], pl.FP32],
             out: pl.Out[pl.Tensor[[2 * {M}, 64], pl.FP32]]) -> pl.Tensor[[2 * {M}, 64], pl.FP32]:
        return self.mix(x, w, out)
'''


@pytest.mark.parametrize(("op", "rows"), [("mul", 1), ("sub", 4)])
def test_a_read_scaling_loaded_tiles_in_a_carrying_loop_is_a_one_element_tile(op: str, rows: int) -> None:
    """The kernel is written with tiles (``pl.load``): the window is a [1, 1] Vec tile load and each use a
    ``tile.row_expand_*`` (after a column broadcast for several rows)."""
    prog = pl.parse_program(TILE_KERNEL.replace("{OP}", op).replace("{M}", str(rows)))
    rng = np.random.default_rng(rows)
    x = rng.standard_normal((8 * rows, 64)).astype(np.float32)
    w = (rng.random((2, 4)) + 0.5).astype(np.float32)
    out = np.zeros((2 * rows, 64), np.float32)
    run(prog, x, w, out, config=RunConfig(platform="a2a3sim"))
    want = np.zeros_like(out)
    for b in range(2):
        acc = x[b * 4 * rows:(b * 4 + 1) * rows].copy()
        for h in range(1, 4):
            acc += NUMPY[op](x[(b * 4 + h) * rows:(b * 4 + h + 1) * rows], w[b, h])
        want[b * rows:(b + 1) * rows] = acc
    np.testing.assert_allclose(out, want, rtol=1e-6, atol=1e-6)
