"""``t.bind_dynamic(axis, N)`` makes an axis of a bare ``pl.Tensor`` parameter of a ``@pl.jit`` dynamic.

One compile serves every size on that axis (the cache key leaves it out), the generated signature
names the ``pl.dynamic``, and the call itself is a checked no-op in the body.
"""

from __future__ import annotations

import pytest

import pypto.language as pl
from pypto.errors import ParserTypeError
from pypto.jit.specialize import bound_dynamic, dynamic_axes, source_info
from pypto.runtime import RunConfig

ROWS = pl.dynamic("ROWS")


@pl.jit
def halves_to_fp32(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    x.bind_dynamic(0, ROWS)
    out.bind_dynamic(0, ROWS)
    n = pl.tensor.dim(x, 0)
    for idx in pl.spmd(n // 2, name_hint="pairs"):
        r = idx * 2
        out[r : r + 2, :] = pl.cast(x[r : r + 2, :], target_type=pl.FP32)
    return out


@pl.jit
def bad_axis(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    x.bind_dynamic(2, ROWS)
    out = pl.store(pl.load(x, [0, 0], [16, 16]), [0, 0], out)
    return out


def test_the_body_calls_are_read_per_parameter() -> None:
    info = source_info(halves_to_fp32.func)
    assert bound_dynamic(info) == {"x": {0: "ROWS"}, "out": {0: "ROWS"}}
    assert dynamic_axes(info, halves_to_fp32.func.__globals__) == {"x": (0,), "out": (0,)}


def test_one_compile_serves_every_row_count(torch) -> None:
    cfg = RunConfig(platform="a2a3sim")
    for rows in (4, 10):
        x = torch.randn(rows, 64, generator=torch.Generator().manual_seed(rows)).to(torch.bfloat16)
        out = torch.zeros(rows, 64)
        halves_to_fp32(x, out, config=cfg)
        torch.testing.assert_close(out, x.float(), rtol=0, atol=0)
    assert len(halves_to_fp32._cache) == 1


def test_an_axis_out_of_range_is_located(torch) -> None:
    x, out = torch.zeros(16, 16), torch.zeros(16, 16)
    with pytest.raises(ParserTypeError, match="axis 2 is out of range for a rank-2 tensor") as e:
        bad_axis.compile(x, out)
    assert "test_bind_dynamic.py" in str(e.value)
