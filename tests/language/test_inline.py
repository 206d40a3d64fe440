"""``pl.inline`` helpers: added as Inline functions, spliced by InlineFunctions, run on the sim."""

from __future__ import annotations

import numpy as np
import pytest
from inline_kernels import Axpy, axpy

from pypto import ir
from pypto.driver import lower
from pypto.ir.enums import FunctionType


def test_inline_helper_becomes_an_inline_function_then_disappears():
    assert Axpy.get_function("axpy").func_type is FunctionType.Inline
    lowered = lower(Axpy)
    assert lowered.get_function("axpy") is None
    text = lowered.as_python()
    assert "self.axpy" not in text and text.count("pl.tile.muls") == 2


def test_inline_helper_is_not_callable_from_python():
    with pytest.raises(TypeError, match="pl.inline helper"):
        axpy(1, 2)


@pytest.mark.sim
def test_inline_program_runs(tmp_path):
    compiled = ir.compile(Axpy, output_dir=tmp_path / "o", dump_passes=False)
    rng = np.random.default_rng(0)
    a, b = rng.random((64, 64), np.float32), rng.random((64, 64), np.float32)
    out = np.zeros_like(a)
    compiled(a, b, out)
    np.testing.assert_allclose(out, 2 * (2 * a + b) + b, rtol=1e-6, atol=1e-6)
