"""An index scalar (a kernel loop index, ``part * 64``) where an ``i32`` is needed is one ``arith.index_cast``
(``pl.tensor.arange(pl.cast(offset, pl.UINT32), ...)``); a conversion to a float stays a located error."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir

SRC = """import pypto.language as pl

@pl.program
class Ranked:
    @pl.function(type=pl.FunctionType.Opaque)
    def main(self, s: pl.Tensor[[1, 256], pl.FP32], out: pl.Out[pl.Tensor[[4, 128], pl.FP32]]) -> pl.Tensor[[4, 128], pl.FP32]:
        for part in pl.parallel(4):
            with pl.at(level=pl.Level.CORE_GROUP):
                offset = part * 64
                window = pl.slice(s, [1, 64], [0, offset])
                idx = pl.tensor.arange(pl.cast(offset, pl.UINT32), [1, 64], dtype=pl.UINT32)
                out = pl.assemble(out, pl.tensor.sort32(window, idx), [part, 0])
        return out
"""


def _sorted_blocks(s: np.ndarray) -> np.ndarray:
    out = np.zeros((4, 128), np.float32)
    for part in range(4):
        for blk in range(2):
            start = part * 64 + blk * 32
            vals = s[0, start:start + 32]
            order = sorted(range(32), key=lambda i: (-vals[i], i))
            pairs = out[part, blk * 64:(blk + 1) * 64]
            pairs[0::2] = vals[order]
            pairs[1::2] = (np.array(order, np.uint32) + start).view(np.float32)
    return out


@pytest.mark.sim
def test_an_index_offset_starts_the_ranks(tmp_path: Path) -> None:
    compiled = ir.compile(pl.parse(SRC), output_dir=str(tmp_path), platform="a2a3sim")
    pto = next(Path(compiled.output_dir).rglob("ptoas/*.pto")).read_text()
    assert "arith.index_cast" in pto and ": index to i32" in pto
    s = np.random.default_rng(4).permutation(256).astype(np.float32)[None] / 256
    out = np.zeros((4, 128), np.float32)
    compiled(s, out)
    np.testing.assert_array_equal(out.view(np.uint32), _sorted_blocks(s).view(np.uint32))


def test_an_index_as_a_float_is_a_located_error(tmp_path: Path) -> None:
    src = SRC.replace("idx = pl.tensor.arange(pl.cast(offset, pl.UINT32), [1, 64], dtype=pl.UINT32)\n",
                      "idx = pl.tensor.arange(0, [1, 64], dtype=pl.UINT32)\n"
                      "                window = pl.add(window, pl.cast(offset, pl.FP32))\n")
    with pytest.raises(Exception, match="cannot be lowered|cannot lower") as ei:
        ir.compile(pl.parse(src), output_dir=str(tmp_path), skip_ptoas=True)
    err = getattr(ei.value, "user_error", None) or ei.value
    assert err.span.line == 12
