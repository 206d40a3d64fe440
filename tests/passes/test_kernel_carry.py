"""ConvertTensorToTileOps: tensors a kernel loop carries (``acc = pl.full(...)`` then ``acc = pl.add(acc, x)``)
are carried as tiles, and a loop choosing its accumulator on the first iteration is peeled."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto.ir import ForStmt, IfStmt
from pypto.ir.stmt import preorder
from pypto.ir.types import TileType
from pypto.runtime import RunConfig


@pl.jit
def row_rms(x: pl.Tensor[[64, 256], pl.FP32], y: pl.Out[pl.Tensor[[64, 256], pl.FP32]]):
    for r in pl.parallel(0, 64, 32):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="rows"):
            acc = pl.full([1, 32], dtype=pl.FP32, value=0.0)
            for hb in pl.range(4):
                xt = x[r:r + 32, hb * 64:hb * 64 + 64]
                acc = pl.add(acc, pl.reshape(pl.row_sum(pl.mul(xt, xt)), [1, 32]))
            inv = pl.reshape(pl.rsqrt(pl.add(pl.mul(acc, 1.0 / 256), 1e-6)), [32, 1])
            for hb in pl.range(4):
                xt = x[r:r + 32, hb * 64:hb * 64 + 64]
                y[r:r + 32, hb * 64:hb * 64 + 64] = pl.row_expand_mul(xt, inv)
    return y


@pl.jit
def k_split(a: pl.Tensor[[64, 192], pl.FP32], b: pl.Tensor[[192, 64], pl.FP32],
            c: pl.Out[pl.Tensor[[64, 64], pl.FP32]]):
    for nb in pl.parallel(0, 64, 32):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="tile"):
            acc = pl.create_tensor([64, 32], dtype=pl.FP32)
            for kb in pl.range(3):
                ta = a[0:64, kb * 64:kb * 64 + 64]
                tb = b[kb * 64:kb * 64 + 64, nb:nb + 32]
                if kb == 0:
                    acc = pl.matmul(ta, tb)
                else:
                    acc = pl.matmul_acc(acc, ta, tb)
            c[0:64, nb:nb + 32] = acc
    return c


@pl.jit
def k_split_pipelined(a: pl.Tensor[[64, 192], pl.FP32], b: pl.Tensor[[192, 64], pl.FP32],
                      c: pl.Out[pl.Tensor[[64, 64], pl.FP32]]):
    for nb in pl.parallel(0, 64, 32):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="pipe"):
            acc = pl.create_tensor([64, 32], dtype=pl.FP32)
            for kb in pl.pipeline(0, 3, stage=2):
                k0 = kb * 64  # the first-iteration test is on a multiple of the loop variable
                if k0 == 0:
                    acc = pl.matmul(a[0:64, k0:k0 + 64], b[k0:k0 + 64, nb:nb + 32])
                else:
                    acc = pl.matmul_acc(acc, a[0:64, k0:k0 + 64], b[k0:k0 + 64, nb:nb + 32])
            c[0:64, nb:nb + 32] = acc
    return c


@pl.jit
def running_max(x: pl.Tensor[[32, 256], pl.FP32], y: pl.Out[pl.Tensor[[32, 64], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="rmax"):
        m = x[:, 0:64]
        for j in pl.range(1, 4):
            m_new = pl.maximum(m, x[:, j * 64:j * 64 + 64])
            m = m_new  # a second name of the carried tile
        y[:, :] = m
    return y


def _kernel(program, name: str):
    return next(f for f in program.functions.values() if f.name.startswith(name))


def test_a_carried_tensor_becomes_a_carried_tile() -> None:
    x = np.zeros((64, 256), np.float32)
    program = row_rms.lower(x, x.copy())
    carried = [ia for s in preorder(_kernel(program, "rows").body) if isinstance(s, ForStmt) for ia in s.iter_args]
    accs = [ia for ia in carried if ia.name.startswith("acc")]
    assert accs and all(isinstance(ia.var_type, TileType) for ia in accs)


def test_a_first_iteration_choice_is_peeled() -> None:
    a, b = np.zeros((64, 192), np.float32), np.zeros((192, 64), np.float32)
    program = k_split.lower(a, b, np.zeros((64, 64), np.float32))
    aic = _kernel(program, "tile")
    loops = [s for s in preorder(aic.body) if isinstance(s, ForStmt)]
    assert [int(lp.start.value) for lp in loops] == [1]  # the first iteration runs before the loop
    assert not any(isinstance(s, IfStmt) for s in preorder(aic.body))
    assert not any(f.name.endswith("_aiv") for f in program.functions.values())  # no dead create left behind


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_carried_tiles_run(platform: str) -> None:
    rng = np.random.default_rng(3)
    x = rng.standard_normal((64, 256)).astype(np.float32)
    y = np.zeros_like(x)
    row_rms(x, y, config=RunConfig(platform=platform))
    np.testing.assert_allclose(y, x / np.sqrt((x * x).mean(1, keepdims=True) + 1e-6), rtol=1e-5, atol=1e-5)
    a = rng.standard_normal((64, 192)).astype(np.float32)
    b = rng.standard_normal((192, 64)).astype(np.float32)
    c = np.zeros((64, 64), np.float32)
    k_split(a, b, c, config=RunConfig(platform=platform))
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)
    c = np.zeros((64, 64), np.float32)
    k_split_pipelined(a, b, c, config=RunConfig(platform=platform))
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)
    x = rng.standard_normal((32, 256)).astype(np.float32)
    y = np.zeros((32, 64), np.float32)
    running_max(x, y, config=RunConfig(platform=platform))
    np.testing.assert_array_equal(y, x.reshape(32, 4, 64).max(axis=1))
