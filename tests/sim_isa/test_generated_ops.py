"""ISA families the spec examples do not cover, via small generated PTO modules through ptoas."""

from __future__ import annotations

import numpy as np
import pytest
from pto_gen import INT_OPS, unary_stack_module
from sim_isa_kit import PTO_DIR

pytestmark = [pytest.mark.sim, pytest.mark.ptoas]

F32_OPS = {
    "prelu": (
        "pto.tprelu ins({a} : {t}, {b} : {t}) outs({o} : {t})",
        lambda a, b, s: np.where(a > 0, a, a * b),
    ),
    "rems": ("pto.trems ins({a} : {t}, {s}) outs({o} : {t})", lambda a, b, s: np.mod(a, np.float32(s))),
    "taddc": ("pto.taddc ins({a}, {b}, {a} : {t}, {t}, {t}) outs({o} : {t})", lambda a, b, s: a + b + a),
    "tsubc": ("pto.tsubc ins({a}, {b}, {a} : {t}, {t}, {t}) outs({o} : {t})", lambda a, b, s: a - b + a),
    "partadd": ("pto.tpartadd ins({a} : {t}, {b} : {t}) outs({o} : {t})", lambda a, b, s: a + b),
    "partmax": ("pto.tpartmax ins({a} : {t}, {b} : {t}) outs({o} : {t})", lambda a, b, s: np.maximum(a, b)),
    "partmin": ("pto.tpartmin ins({a} : {t}, {b} : {t}) outs({o} : {t})", lambda a, b, s: np.minimum(a, b)),
    "addsc": (
        "pto.taddsc ins({a}, {s}, {b} : {t}, f32, {t}) outs({o} : {t})",
        lambda a, b, s: a + np.float32(s) + b,
    ),
    "fillpad": ("pto.tfillpad ins({a} : {t}) outs({o} : {t})", lambda a, b, s: a),
    "expands": ("pto.texpands ins({s} : f32) outs({o} : {t})", lambda a, b, s: np.full_like(a, s)),
    "divs_lhs": (
        "pto.tdivs ins({a}, {s} : {t}, f32) outs({o} : {t}) scalar_lhs = true",
        lambda a, b, s: np.float32(s) / a,
    ),
}

F16_UNARY = {
    "exp": ("pto.texp ins({a} : {t}) outs({o} : {t})", np.exp),
    "log": ("pto.tlog ins({a} : {t}) outs({o} : {t})", np.log),
    "sqrt": ("pto.tsqrt ins({a} : {t}) outs({o} : {t})", np.sqrt),
    "rsqrt": ("pto.trsqrt ins({a} : {t}) outs({o} : {t})", lambda x: 1 / np.sqrt(x)),
    "recip": ("pto.trecip ins({a} : {t}) outs({o} : {t})", lambda x: 1 / x),
    "neg": ("pto.tneg ins({a} : {t}) outs({o} : {t})", np.negative),
    "relu": ("pto.trelu ins({a} : {t}) outs({o} : {t})", lambda x: np.maximum(x, 0)),
    "abs": ("pto.tabs ins({a} : {t}) outs({o} : {t})", np.abs),
}


def _stack_kernel(pkit, tmp_path, name, dtype, ops, scalar=None):
    path = tmp_path / f"{name}.pto"
    path.write_text(unary_stack_module(name, dtype, [op for op, _ in ops.values()], scalar=scalar))
    return pkit.kernel(pkit.ptoas_cpp(path), name)


def test_int32_elementwise_and_scalar(pkit, rng, tmp_path):
    k = _stack_kernel(pkit, tmp_path, "int_ops", "i32", INT_OPS, scalar="i32")
    a = rng.integers(-1000, 1000, size=(16, 64)).astype(np.int32)
    b = rng.integers(1, 9, size=(16, 64)).astype(np.int32)
    out = np.zeros((16 * len(INT_OPS), 64), np.int32)
    k(a, b, out, -17)
    for i, (name, (_, ref)) in enumerate(INT_OPS.items()):
        np.testing.assert_array_equal(out[16 * i : 16 * (i + 1)], ref(a, b, np.int32(-17)), err_msg=name)


def test_f32_binary_ternary_scalar_forms(pkit, rng, tmp_path):
    k = _stack_kernel(pkit, tmp_path, "f32_ops", "f32", F32_OPS, scalar="f32")
    a = rng.uniform(-3, 3, size=(16, 64)).astype(np.float32)
    a[np.abs(a) < 0.1] = 0.5
    b = rng.uniform(0.5, 2, size=(16, 64)).astype(np.float32)
    out = np.zeros((16 * len(F32_OPS), 64), np.float32)
    k(a, b, out, 0.75)
    for i, (name, (_, ref)) in enumerate(F32_OPS.items()):
        np.testing.assert_allclose(
            out[16 * i : 16 * (i + 1)], ref(a, b, 0.75), rtol=1e-6, atol=1e-6, err_msg=name
        )


def test_f16_unary(pkit, rng, tmp_path):
    k = _stack_kernel(pkit, tmp_path, "f16_unary", "f16", F16_UNARY)
    a = rng.uniform(0.25, 4, size=(16, 64)).astype(np.float16)
    out = np.zeros((16 * len(F16_UNARY), 64), np.float16)
    k(a, a, out)
    for i, (name, (_, ref)) in enumerate(F16_UNARY.items()):
        want = ref(a.astype(np.float32)).astype(np.float16)
        np.testing.assert_allclose(
            out[16 * i : 16 * (i + 1)].astype(np.float32),
            want.astype(np.float32),
            rtol=1e-3,
            atol=1e-3,
            err_msg=name,
        )


def test_matmul_bias_and_textract(pkit, rng):
    a = rng.uniform(-1, 1, size=(64, 64)).astype(np.float16)
    b = rng.uniform(-1, 1, size=(64, 64)).astype(np.float16)
    bias = rng.uniform(-1, 1, size=(1, 64)).astype(np.float32)
    c = np.zeros((64, 64), np.float32)
    d = np.zeros((32, 64), np.float32)
    k = pkit.kernel(pkit.ptoas_cpp(PTO_DIR / "matmul_bias_extract.pto"), "matmul_bias_extract")
    k(a, b, bias, c, d)
    af, bf = a.astype(np.float32), b.astype(np.float32)
    np.testing.assert_allclose(c, af @ bf + bias, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(d, af[32:] @ bf, rtol=1e-5, atol=1e-5)
