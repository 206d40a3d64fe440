"""``pl.set_validshape`` of a tensor in a region narrows what ``pl.assemble`` writes: only the valid region
of the source (also of an elementwise result of narrowed operands) lands in the target, which may be
sized to that region."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import UserError
from pypto.runtime import RunConfig, run

ROWS, STATIC, VALID = 16, 8, 4

NARROW = f'''
import pypto.language as pl

@pl.program
class Narrow:
    @pl.function(type=pl.FunctionType.Opaque)
    def main(self, a: pl.Tensor[[{ROWS}, {STATIC}], pl.FP32], b: pl.Tensor[[{ROWS}, {STATIC}], pl.FP32],
             out: pl.InOut[pl.Tensor[[OUT_R, OUT_C], pl.FP32]]) -> pl.Tensor[[OUT_R, OUT_C], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            na = pl.set_validshape(a, {ROWS}, {VALID})
            nb = pl.set_validshape(b, {ROWS}, {VALID})
            BODY
        return out
'''

CASES = {
    "direct": ((64, 32), "out = pl.assemble(out, na, [8, 0])", lambda a, b: a),
    "subscript": ((64, 32), f"out[8:{8 + ROWS}, 0:{VALID}] = na", lambda a, b: a),
    "exact": ((ROWS, VALID), "out = pl.assemble(out, na, [0, 0])", lambda a, b: a),
    "scalar": ((ROWS, VALID), "out = pl.assemble(out, pl.add(na, 1.0), [0, 0])", lambda a, b: a + 1),
    "binary": ((ROWS, VALID), "out = pl.assemble(out, pl.mul(na, nb), [0, 0])", lambda a, b: a * b),
}


def _program(out_shape: tuple[int, int], body: str):
    text = NARROW.replace("OUT_R", str(out_shape[0])).replace("OUT_C", str(out_shape[1])).replace("BODY", body)
    return pl.parse_program(text)


@pytest.mark.parametrize("case", sorted(CASES))
def test_only_the_valid_region_is_written(case: str) -> None:
    shape, body, fn = CASES[case]
    rng = np.random.default_rng(3)
    a = np.full((ROWS, STATIC), -1000.0, np.float32)
    b = np.full((ROWS, STATIC), -1000.0, np.float32)
    a[:, :VALID] = rng.standard_normal((ROWS, VALID))
    b[:, :VALID] = rng.standard_normal((ROWS, VALID))
    out = np.zeros(shape, np.float32)
    run(_program(shape, body), a, b, out, config=RunConfig(platform="a2a3sim"))
    want = np.zeros(shape, np.float32)
    r0 = 8 if shape[0] > ROWS else 0
    want[r0:r0 + ROWS, :VALID] = fn(a[:, :VALID], b[:, :VALID])
    np.testing.assert_allclose(out, want, rtol=1e-6, atol=1e-6)


def test_a_narrowed_source_still_past_the_target_is_a_located_error() -> None:
    with pytest.raises(UserError, match=r"window \[0:16, 2:6\] is out of bounds of the target tensor"):
        _program((ROWS, VALID), "out = pl.assemble(out, na, [0, 2])")
