"""Property tests: random inputs through jit kernels vs numpy, per dtype, incl. partial tiles.

Each kernel processes an [R, C] tensor in [TR, TC] tiles: ``nfull`` full row chunks, then a last
chunk loaded with ``valid_shape=[rem, C]`` (so 100 rows in 64-row tiles, or a 30x40 tensor in a
single 32x48 tile buffer). Shapes come from a small fixed set (compiles are cached per shape and
dtype); hypothesis varies the values.
"""

from __future__ import annotations

import shutil

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pypto.language as pl
from pypto.runtime import RunConfig
from pypto.toolchain.ptoas import find_ptoas

pytestmark = [
    pytest.mark.sim,
    pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++"),
    pytest.mark.skipif(find_ptoas() is None, reason="needs the pinned ptoas"),
]

# (rows, cols, tile rows, tile cols): a tail chunk of 36 valid rows; a 30x40 region in a 32x48 buffer
SHAPES = [(100, 128, 64, 128), (30, 40, 32, 48)]
TOL = {np.float32: (1e-5, 1e-5), np.float16: (2e-3, 2e-3), np.int32: (0, 0)}
SETTINGS = settings(deadline=None, max_examples=3, derandomize=True,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


@pl.jit
def binary3(a: pl.Tensor, b: pl.Tensor, o_add: pl.Out[pl.Tensor], o_sub: pl.Out[pl.Tensor],
            o_mul: pl.Out[pl.Tensor], tr: int, tc: int, nfull: int, rem: int, cols: int):
    with pl.at(level=pl.Level.CORE_GROUP):
        for i in pl.range(nfull):
            x = pl.load(a, [i * tr, 0], [tr, tc])
            y = pl.load(b, [i * tr, 0], [tr, tc])
            pl.store(pl.add(x, y), [i * tr, 0], o_add)
            pl.store(pl.sub(x, y), [i * tr, 0], o_sub)
            pl.store(pl.mul(x, y), [i * tr, 0], o_mul)
        xt = pl.load(a, [nfull * tr, 0], [tr, tc], valid_shape=[rem, cols])
        yt = pl.load(b, [nfull * tr, 0], [tr, tc], valid_shape=[rem, cols])
        pl.store(pl.add(xt, yt), [nfull * tr, 0], o_add)
        pl.store(pl.sub(xt, yt), [nfull * tr, 0], o_sub)
        pl.store(pl.mul(xt, yt), [nfull * tr, 0], o_mul)
    return o_add, o_sub, o_mul


@pl.jit
def unary4(a: pl.Tensor, o_exp: pl.Out[pl.Tensor], o_relu: pl.Out[pl.Tensor], o_adds: pl.Out[pl.Tensor],
           o_muls: pl.Out[pl.Tensor], s: float, tr: int, tc: int, nfull: int, rem: int, cols: int):
    with pl.at(level=pl.Level.CORE_GROUP):
        for i in pl.range(nfull):
            x = pl.load(a, [i * tr, 0], [tr, tc])
            pl.store(pl.exp(x), [i * tr, 0], o_exp)
            pl.store(pl.relu(x), [i * tr, 0], o_relu)
            pl.store(pl.adds(x, s), [i * tr, 0], o_adds)
            pl.store(pl.muls(x, s), [i * tr, 0], o_muls)
        xt = pl.load(a, [nfull * tr, 0], [tr, tc], valid_shape=[rem, cols])
        pl.store(pl.exp(xt), [nfull * tr, 0], o_exp)
        pl.store(pl.relu(xt), [nfull * tr, 0], o_relu)
        pl.store(pl.adds(xt, s), [nfull * tr, 0], o_adds)
        pl.store(pl.muls(xt, s), [nfull * tr, 0], o_muls)
    return o_exp, o_relu, o_adds, o_muls


@pl.jit
def rowred(a: pl.Tensor, o_sum: pl.Out[pl.Tensor], o_max: pl.Out[pl.Tensor], tr: int, tc: int, nfull: int,
           rem: int, cols: int):
    with pl.at(level=pl.Level.CORE_GROUP):
        for i in pl.range(nfull):
            x = pl.load(a, [i * tr, 0], [tr, tc])
            tmp = pl.create_tile([tr, tc], dtype=pl.FP32)
            pl.store(pl.row_sum(x, tmp), [i * tr, 0], o_sum)
            pl.store(pl.row_max(x, tmp), [i * tr, 0], o_max)
        xt = pl.load(a, [nfull * tr, 0], [tr, tc], valid_shape=[rem, cols])
        tmpt = pl.create_tile([tr, tc], dtype=pl.FP32)
        pl.store(pl.row_sum(xt, tmpt), [nfull * tr, 0], o_sum)
        pl.store(pl.row_max(xt, tmpt), [nfull * tr, 0], o_max)
    return o_sum, o_max


@pytest.fixture(autouse=True, scope="module")
def _workdir(tmp_path_factory: pytest.TempPathFactory):
    """build_output/ of the jit compiles goes to a temp dir."""
    mp = pytest.MonkeyPatch()
    mp.chdir(tmp_path_factory.mktemp("props"))
    yield
    mp.undo()


def _chunks(rows: int, tr: int) -> tuple[int, int]:
    nfull = (rows - 1) // tr
    return nfull, rows - nfull * tr


def _inputs(seed: int, rows: int, cols: int, dtype: type, n: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    if dtype is np.int32:
        return [rng.integers(-1000, 1000, (rows, cols)).astype(np.int32) for _ in range(n)]
    return [(rng.standard_normal((rows, cols)) * 2).astype(dtype) for _ in range(n)]


def _check(got: np.ndarray, want: np.ndarray, dtype: type, what: str) -> None:
    rtol, atol = TOL[dtype]
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=rtol, atol=atol, err_msg=what)


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32], ids=["f32", "f16", "i32"])
@pytest.mark.parametrize("shape", SHAPES, ids=["100x128_in_64", "30x40_in_32x48"])
@SETTINGS
@given(seed=st.integers(0, 2**31 - 1))
def test_binary_add_sub_mul(platform: str, dtype: type, shape: tuple, seed: int) -> None:
    rows, cols, tr, tc = shape
    a, b = _inputs(seed, rows, cols, dtype, 2)
    outs = [np.zeros_like(a) for _ in range(3)]
    binary3(a, b, *outs, tr, tc, *_chunks(rows, tr), cols, config=RunConfig(platform=platform))
    for got, want, op in zip(outs, (a + b, a - b, a * b), ("add", "sub", "mul"), strict=True):
        _check(got, want.astype(dtype), dtype, f"{op} {shape} {dtype.__name__}")


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
@pytest.mark.parametrize("dtype", [np.float32, np.float16], ids=["f32", "f16"])
@pytest.mark.parametrize("shape", SHAPES, ids=["100x128_in_64", "30x40_in_32x48"])
@SETTINGS
@given(seed=st.integers(0, 2**31 - 1))
def test_unary_and_scalar_ops(platform: str, dtype: type, shape: tuple, seed: int) -> None:
    rows, cols, tr, tc = shape
    (a,) = _inputs(seed, rows, cols, dtype, 1)
    s = 1.5  # a compile-time scalar (specialized); values vary through ``a``
    outs = [np.zeros_like(a) for _ in range(4)]
    unary4(a, *outs, s, tr, tc, *_chunks(rows, tr), cols, config=RunConfig(platform=platform))
    a64 = a.astype(np.float64)
    wants = (np.exp(a64), np.maximum(a64, 0), a64 + s, a64 * s)
    for got, want, op in zip(outs, wants, ("exp", "relu", "adds", "muls"), strict=True):
        rtol, atol = TOL[dtype]
        np.testing.assert_allclose(got.astype(np.float64), want, rtol=rtol * 2, atol=atol * 4,
                                   err_msg=f"{op} {shape} {dtype.__name__}")


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
@pytest.mark.parametrize("shape", SHAPES, ids=["100x128_in_64", "30x40_in_32x48"])
@SETTINGS
@given(seed=st.integers(0, 2**31 - 1))
def test_row_sum_row_max_f32(platform: str, shape: tuple, seed: int) -> None:
    rows, cols, tr, tc = shape
    (a,) = _inputs(seed, rows, cols, np.float32, 1)
    o_sum, o_max = np.zeros((rows, 1), np.float32), np.zeros((rows, 1), np.float32)
    rowred(a, o_sum, o_max, tr, tc, *_chunks(rows, tr), cols, config=RunConfig(platform=platform))
    np.testing.assert_allclose(o_sum[:, 0], a.astype(np.float64).sum(axis=1), rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(o_max[:, 0], a.max(axis=1), rtol=0, atol=0)
