"""Spec example modules through ptoas 0.1.1 and the simulator headers, checked against numpy."""

from __future__ import annotations

import numpy as np
import pytest

pytestmark = [pytest.mark.sim, pytest.mark.ptoas]

F32 = {"rtol": 1e-5, "atol": 1e-6}


def f32(rng, *shape, lo=-2.0, hi=2.0):
    return rng.uniform(lo, hi, size=shape).astype(np.float32)


@pytest.mark.parametrize("name", ["add_128x128_f32", "kernel_add_128x128_f32", "add_128x128_f32_rowblocks"])
def test_add_128x128(pkit, rng, name):
    x, y = f32(rng, 128, 128), f32(rng, 128, 128)
    z = np.zeros_like(x)
    pkit.pto_kernel(name)(x, y, z)
    np.testing.assert_allclose(z, x + y, **F32)


@pytest.mark.parametrize(("name", "dtype"), [("copy_f16", np.float16), ("copy_i32", np.int32)])
def test_copy(pkit, rng, name, dtype):
    x = rng.integers(-1000, 1000, size=(64, 64)).astype(dtype)
    y = np.zeros_like(x)
    pkit.pto_kernel(name)(x, y)
    np.testing.assert_array_equal(y, x)


def test_basics_copy_f32(pkit, rng):
    x = f32(rng, 32, 32)
    y = np.zeros_like(x)
    pkit.pto_kernel("basics_f32")(x, y, 1.5, 3, 4)
    np.testing.assert_array_equal(y, x)


@pytest.mark.parametrize(
    ("name", "dtype", "tol"),
    [("binary_f32", np.float32, F32), ("binary_f16", np.float16, {"rtol": 2e-3, "atol": 2e-3})],
)
def test_binary(pkit, rng, name, dtype, tol):
    a = rng.uniform(0.5, 2.0, size=(32, 64)).astype(dtype)
    b = rng.uniform(0.5, 2.0, size=(32, 64)).astype(dtype)
    o = np.zeros_like(a)
    pkit.pto_kernel(name)(a, b, o)
    r = a + b
    r = r - b
    r = r * a
    r = r / b
    r = np.maximum(r, a)
    r = np.minimum(r, b)
    np.testing.assert_allclose(o.astype(np.float32), r.astype(np.float32), **tol)


def test_scalar_f32(pkit, rng):
    a = f32(rng, 32, 32, lo=0.5, hi=2.0)
    o = np.zeros_like(a)
    s = np.float32(1.25)
    pkit.pto_kernel("scalar_f32")(a, o, s)
    r = a + s
    r = r - np.float32(2)
    r = r * np.float32(2)
    r = r / s
    r = s / r
    r = np.minimum(r, np.float32(2))
    np.testing.assert_allclose(o, r, **F32)


def test_scalar_f16_mixed_scalar_types(pkit, rng):
    a = rng.uniform(0.5, 2.0, size=(32, 64)).astype(np.float16)
    o = np.zeros_like(a)
    pkit.pto_kernel("scalar_f16")(a, o, 0.5, 3.0)
    h, f = np.float16(0.5), np.float16(3.0)
    r = ((a + h) / h) * f - f
    np.testing.assert_allclose(o.astype(np.float32), r.astype(np.float32), rtol=2e-3, atol=2e-3)


def test_unary_chain(pkit, rng):
    a = f32(rng, 32, 32, lo=-3.0, hi=3.0)
    o = np.zeros_like(a)
    pkit.pto_kernel("unary_f32")(a, o)
    r = np.abs(a)
    r = np.exp(r)
    r = np.log(r)
    r = np.sqrt(r)
    r = 1 / np.sqrt(r)
    r = 1 / r
    r = np.maximum(r, 0)
    r = -r
    np.testing.assert_allclose(o, r, rtol=1e-5, atol=1e-5)


def test_cast_f32_f16_rounds_to_nearest_even(pkit, rng):
    a = f32(rng, 32, 32, lo=-100.0, hi=100.0)
    a[0, :4] = [65504.0, 1e-8, 2049.0, -2051.0]
    o = np.zeros((32, 32), np.float16)
    pkit.pto_kernel("cast_f32_f16")(a, o)
    np.testing.assert_array_equal(o, a.astype(np.float16))


def test_reduce_and_expand(pkit, rng):
    a = f32(rng, 32, 64, lo=0.5, hi=2.0)
    rowsum = np.zeros((32, 1), np.float32)
    colsum = np.zeros((1, 64), np.float32)
    full = np.zeros((32, 64), np.float32)
    pkit.pto_kernel("reduce_f32")(a, rowsum, colsum, full)
    np.testing.assert_allclose(rowsum[:, 0], a.sum(axis=1), rtol=1e-5)
    np.testing.assert_allclose(colsum[0], a.sum(axis=0), rtol=1e-5)
    # the last op broadcasts the column sums down every row
    np.testing.assert_allclose(full, np.broadcast_to(a.sum(axis=0), (32, 64)), rtol=1e-5)


@pytest.mark.parametrize("name", ["softmax_rows_64x128_f32", "kernel_softmax_rows_64x128_f32"])
def test_softmax(pkit, rng, name):
    x = f32(rng, 64, 128, lo=-4.0, hi=4.0)
    y = np.zeros_like(x)
    pkit.pto_kernel(name)(x, y)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(y, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize(("vr", "vc"), [(32, 32), (20, 32), (7, 13), (0, 32)])
def test_dynamic_valid_rows(pkit, rng, vr, vc):
    nblk = 3
    x = f32(rng, 32 * nblk, 32)
    y = np.full_like(x, -7.0)
    pkit.pto_kernel("dynamic_rows_f32")(x, y, 32 * nblk, nblk, vr, vc)
    want = np.full_like(x, -7.0)
    for b in range(nblk):
        want[b * 32 : b * 32 + vr, :vc] = np.exp(x[b * 32 : b * 32 + vr, :vc])
    np.testing.assert_allclose(y, want, rtol=1e-6)


@pytest.mark.parametrize("name", ["matmul_f16_64x64", "kernel_matmul_f16_64x64_f32acc"])
def test_matmul_f16_f32acc(pkit, rng, name):
    a = rng.uniform(-1, 1, size=(64, 64)).astype(np.float16)
    b = rng.uniform(-1, 1, size=(64, 64)).astype(np.float16)
    c = np.zeros((64, 64), np.float32)
    pkit.pto_kernel(name)(a, b, c)
    np.testing.assert_allclose(c, a.astype(np.float32) @ b.astype(np.float32), rtol=1e-5, atol=1e-5)


def test_matmul_splitk_loop_accumulates(pkit, rng):
    a = rng.uniform(-1, 1, size=(64, 256)).astype(np.float16)
    b = rng.uniform(-1, 1, size=(256, 64)).astype(np.float16)
    c = np.zeros((64, 64), np.float32)
    pkit.pto_kernel("matmul_f16_splitk_loop")(a, b, c)
    np.testing.assert_allclose(c, a.astype(np.float32) @ b.astype(np.float32), rtol=1e-5, atol=1e-4)


def test_sync_ops_run(pkit):
    pkit.pto_kernel("sync_ops")(np.zeros(4, np.float32))


def test_catalogue_vector_ops(pkit, rng):
    a = f32(rng, 32, 64, lo=0.5, hi=2.0)
    b = f32(rng, 32, 64, lo=0.5, hi=2.0)
    o = np.zeros_like(a)
    col = np.zeros((32, 1), np.float32)
    row = np.zeros((1, 64), np.float32)
    h = np.zeros((32, 64), np.float16)
    pkit.pto_kernel("catalogue", "vector_ops")(a, b, o, col, row, h, 1.5, 0.25, 3)
    # o ends as (a - rowmax) * rowmin / rowmin after TROWEXPAND* on the TROWMIN result
    rmin = a.min(axis=1, keepdims=True)
    np.testing.assert_allclose(col, rmin, rtol=1e-6)
    np.testing.assert_allclose(row[0], a[0], rtol=1e-6)  # tcolmax/tcolmin lower to TCOLEXPAND in 0.1.1
    np.testing.assert_allclose(o, (a - rmin) * rmin / rmin, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("kblocks", [1, 3])
def test_catalogue_matmul_ops(pkit, rng, kblocks):
    a = rng.uniform(-1, 1, size=(64, 64)).astype(np.float16)
    b = rng.uniform(-1, 1, size=(64, 64)).astype(np.float16)
    c = np.zeros((64, 64), np.float32)
    pkit.pto_kernel("catalogue", "matmul_ops")(a, b, c, kblocks)
    want = kblocks * (a.astype(np.float32) @ b.astype(np.float32))
    np.testing.assert_allclose(c, want, rtol=1e-5, atol=1e-4)
