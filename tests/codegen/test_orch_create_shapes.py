"""``pl.create_tensor`` in an orchestration loop, sized by a value read at run time."""

from __future__ import annotations

from pathlib import Path

import pypto.language as pl
from pypto import ir

N = pl.dynamic("N")


@pl.program
class DynCreate:
    @pl.function(type=pl.FunctionType.InCore)
    def fill(self, x: pl.Tensor[[16, 64], pl.FP32],
             t: pl.Out[pl.Tensor[[16, N], pl.FP32]]) -> pl.Tensor[[16, N], pl.FP32]:
        a = pl.load(x, [0, 0], [16, 64])
        t = pl.store(a, [0, 0], t)
        return t

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 64], pl.FP32], cfg: pl.Tensor[[2], pl.INT64]) -> pl.Tensor[[16, 64], pl.FP32]:
        n = pl.tensor.read(cfg, [0])
        for _i in pl.range(2):
            t = pl.create_tensor([16, n], dtype=pl.FP32)
            t = self.fill(x, t)
        return x


def test_the_alloc_uses_the_read_value(tmp_path: Path) -> None:
    """The tensor's type names ``n`` as written; the alloc must use the SSA value the read defined."""
    c = ir.compile(DynCreate, output_dir=tmp_path / "o", skip_ptoas=True)
    cpp = (Path(c.output_dir) / "orchestration" / "main.cpp").read_text()
    assert "int64_t n = get_tensor_data<int64_t>(" in cpp
    assert "uint32_t t_ci_shapes[2] = {16, n};" in cpp
