"""torch_codegen op by op: each tile op family on a small kernel, before and after the pass pipeline, vs numpy."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto.debug import torch_codegen
from pypto.driver import lower

torch = pytest.importorskip("torch", reason="torch is not installed (pip install torch==2.13.0)")

TEMPLATE = """
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 32], pl.FP32], y: pl.Tensor[[16, 32], pl.FP32],
             out: pl.Out[pl.Tensor[{oshape}, pl.FP32]]) -> pl.Tensor[{oshape}, pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            a = pl.load(x, [0, 0], [16, 32])
            b = pl.load(y, [0, 0], [16, 32])
            r = {expr}
            pl.store(r, [0, 0], out)
        return out
"""


def _round(v: np.ndarray) -> np.ndarray:
    return np.sign(v) * np.floor(np.abs(v) + 0.5)


CASES = {
    "add": ("pl.add(a, b)", (16, 32), lambda x, y: x + y),
    "sub": ("pl.sub(a, b)", (16, 32), lambda x, y: x - y),
    "mul": ("pl.mul(a, b)", (16, 32), lambda x, y: x * y),
    "div": ("pl.div(a, pl.add(pl.abs(b), 1.0))", (16, 32), lambda x, y: x / (np.abs(y) + 1)),
    "maximum": ("pl.maximum(a, b)", (16, 32), np.maximum),
    "minimum": ("pl.minimum(a, b)", (16, 32), np.minimum),
    "scalars": ("pl.maximums(pl.muls(pl.adds(a, 1.5), 2.0), 0.25)", (16, 32),
                lambda x, y: np.maximum((x + 1.5) * 2.0, 0.25)),
    "rem": ("pl.rem(pl.muls(a, 7.0), pl.adds(pl.abs(b), 1.0))", (16, 32),
            lambda x, y: np.mod(x * 7.0, np.abs(y) + 1.0)),
    "exp_log": ("pl.add(pl.exp(a), pl.log(pl.adds(pl.abs(b), 1.0)))", (16, 32),
                lambda x, y: np.exp(x) + np.log(np.abs(y) + 1)),
    "roots": ("pl.add(pl.sqrt(pl.abs(a)), pl.rsqrt(pl.adds(pl.abs(b), 1.0)))", (16, 32),
              lambda x, y: np.sqrt(np.abs(x)) + 1 / np.sqrt(np.abs(y) + 1)),
    "recip_relu_neg": ("pl.add(pl.recip(pl.adds(pl.abs(a), 1.0)), pl.neg(pl.relu(b)))", (16, 32),
                       lambda x, y: 1 / (np.abs(x) + 1) - np.maximum(y, 0)),
    "trig": ("pl.add(pl.sin(a), pl.cos(b))", (16, 32), lambda x, y: np.sin(x) + np.cos(y)),
    "row_sum": ("pl.row_sum(a)", (16, 1), lambda x, y: x.sum(1, keepdims=True)),
    "row_max": ("pl.row_max(a)", (16, 1), lambda x, y: x.max(1, keepdims=True)),
    "row_min": ("pl.row_min(a)", (16, 1), lambda x, y: x.min(1, keepdims=True)),
    "col_sum": ("pl.col_sum(a)", (1, 32), lambda x, y: x.sum(0, keepdims=True)),
    "col_max": ("pl.col_max(a)", (1, 32), lambda x, y: x.max(0, keepdims=True)),
    "row_argmax": ("pl.cast(pl.row_argmax(a), pl.FP32)", (16, 1), lambda x, y: x.argmax(1)[:, None]),
    "col_argmin": ("pl.cast(pl.col_argmin(a), pl.FP32)", (1, 32), lambda x, y: x.argmin(0)[None, :]),
    "row_expand": ("pl.row_expand_mul(pl.row_expand_sub(a, pl.row_max(b)), pl.row_sum(b))", (16, 32),
                   lambda x, y: (x - y.max(1, keepdims=True)) * y.sum(1, keepdims=True)),
    "col_expand": ("pl.col_expand_add(a, pl.col_min(b))", (16, 32), lambda x, y: x + y.min(0, keepdims=True)),
    "expdif": ("pl.row_expand_expdif(a, pl.row_max(a))", (16, 32), lambda x, y: np.exp(x - x.max(1, keepdims=True))),
    "cast": ("pl.cast(pl.cast(pl.muls(a, 10.0), pl.INT32), pl.FP32)", (16, 32), lambda x, y: _round(x * 10)),
    "concat": ("pl.concat(a, b)", (16, 64), lambda x, y: np.concatenate([x, y], 1)),
    "slice": ("pl.slice(a, [8, 16], [4, 8])", (8, 16), lambda x, y: x[4:12, 8:24]),
    "expands": ("pl.expands(a, 3.0)", (16, 32), lambda x, y: np.full_like(x, 3.0)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_op_family(name: str) -> None:
    expr, oshape, ref = CASES[name]
    program = pl.parse(TEMPLATE.format(expr=expr, oshape=list(oshape)))
    rng = np.random.default_rng(len(name))
    x = rng.standard_normal((16, 32)).astype(np.float32)
    y = rng.standard_normal((16, 32)).astype(np.float32)
    want = ref(x.astype(np.float64), y.astype(np.float64))
    for stage, prog in (("frontend", program), ("lowered", lower(program))):
        ns: dict = {}
        exec(torch_codegen(prog, check_shapes=True), ns)  # noqa: S102
        out = torch.zeros(oshape)
        ns["main"](torch.from_numpy(x), torch.from_numpy(y), out)
        np.testing.assert_allclose(out.numpy(), want, rtol=2e-5, atol=2e-5, err_msg=f"{name} ({stage})")


def test_matmul_acc_loop_with_iter_args() -> None:
    text = """
import pypto.language as pl

@pl.program
class M:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[32, 64], pl.FP32], b: pl.Tensor[[64, 32], pl.FP32],
             c: pl.Out[pl.Tensor[[32, 32], pl.FP32]]) -> pl.Tensor[[32, 32], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            a0 = pl.move(pl.load(a, [0, 0], [32, 16], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Left)
            b0 = pl.move(pl.load(b, [0, 0], [16, 32], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Right)
            acc0 = pl.matmul(a0, b0)
            for k, (acc,) in pl.range(1, 4, init_values=(acc0,)):
                ak = pl.move(pl.load(a, [0, k * 16], [32, 16], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Left)
                bk = pl.move(pl.load(b, [k * 16, 0], [16, 32], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Right)
                total = pl.yield_(pl.matmul_acc(acc, ak, bk))
            pl.store(total, [0, 0], c)
        return c
"""
    program = pl.parse(text)
    rng = np.random.default_rng(5)
    a = rng.standard_normal((32, 64)).astype(np.float32)
    b = rng.standard_normal((64, 32)).astype(np.float32)
    for prog in (program, lower(program)):
        src = torch_codegen(prog, check_shapes=True)
        assert "for k" in src
        ns: dict = {}
        exec(src, ns)  # noqa: S102
        c = torch.zeros(32, 32)
        ns["main"](torch.from_numpy(a), torch.from_numpy(b), c)
        np.testing.assert_allclose(c.numpy(), a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)


def test_valid_shape_fillpad_and_if() -> None:
    text = """
import pypto.language as pl

@pl.program
class V:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 32], pl.FP32], flag: pl.Scalar[pl.INT32],
             out: pl.Out[pl.Tensor[[16, 1], pl.FP32]]) -> pl.Tensor[[16, 1], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            t = pl.load(x, [0, 0], [16, 32], valid_shape=[16, 20])
            full = pl.fillpad(t, pad_value=pl.PadValue.min)
            if flag > 0:
                r = pl.yield_(pl.row_max(full))
            else:
                r = pl.yield_(pl.row_min(full))
            pl.store(r, [0, 0], out)
        return out
"""
    program = pl.parse(text)
    x = np.random.default_rng(9).standard_normal((16, 32)).astype(np.float32) - 10.0  # all negative
    for prog in (program, lower(program)):
        ns: dict = {}
        exec(torch_codegen(prog, check_shapes=True), ns)  # noqa: S102
        out = torch.zeros(16, 1)
        ns["main"](torch.from_numpy(x), 1, out)
        np.testing.assert_array_equal(out.numpy(), x[:, :20].max(1, keepdims=True))  # padding never wins
        ns["main"](torch.from_numpy(x), 0, out)
        assert float(out.min()) < -1e30  # row_min sees the min padding


def test_batch_matmul_of_stacked_matrices() -> None:
    text = """
import pypto.language as pl

@pl.program
class B:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[32, 32], pl.FP32], b: pl.Tensor[[16, 32], pl.FP32],
             c: pl.Out[pl.Tensor[[32, 16], pl.FP32]]) -> pl.Tensor[[32, 16], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            x = pl.load(a, [0, 0], [32, 32], target_memory=pl.Mem.Mat)
            y = pl.load(b, [0, 0], [16, 32], target_memory=pl.Mem.Mat)
            pl.store(pl.tile.batch_matmul(x, y, lhs_batch=2, rhs_batch=1, b_trans=True), [0, 0], c)
        return c
"""
    rng = np.random.default_rng(6)
    a = rng.standard_normal((32, 32)).astype(np.float32)  # two [16, 32] matrices stacked by rows
    b = rng.standard_normal((16, 32)).astype(np.float32)  # one, broadcast to both
    ns: dict = {}
    exec(torch_codegen(pl.parse(text), check_shapes=True), ns)  # noqa: S102
    c = torch.zeros(32, 16)
    ns["main"](torch.from_numpy(a), torch.from_numpy(b), c)
    np.testing.assert_allclose(c.numpy(), a.astype(np.float64) @ b.T, rtol=1e-4, atol=1e-4)
