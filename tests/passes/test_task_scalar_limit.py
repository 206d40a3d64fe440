"""A task takes at most 16 scalars: a kernel whose top-level reads (each moved to the orchestration as a
scalar parameter) or own parameters pass that fails with a located error, at the first value that does not
fit or at the kernel; 16 reads still run."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.errors import UserError


def _reads(n: int) -> str:
    reads = "\n".join(f"        i{k} = pl.read(idx, [{k}])\n"
                      f"        acc = pl.add(acc, pl.load(x, [i{k}, 0], [1, 32]))" for k in range(n))
    return f"""import pypto.language as pl

@pl.program
class Gather:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, idx: pl.Tensor[[{n}], pl.INT32], x: pl.Tensor[[64, 32], pl.FP32],
          o: pl.Out[pl.Tensor[[1, 32], pl.FP32]]) -> pl.Tensor[[1, 32], pl.FP32]:
        acc = pl.load(x, [0, 0], [1, 32])
{reads}
        o = pl.store(acc, [0, 0], o)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, idx: pl.Tensor[[{n}], pl.INT32], x: pl.Tensor[[64, 32], pl.FP32],
             o: pl.Out[pl.Tensor[[1, 32], pl.FP32]]) -> pl.Tensor[[1, 32], pl.FP32]:
        o = self.k(idx, x, o)
        return o
"""


def test_seventeen_reads_name_the_first_that_does_not_fit(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="kernel 'k' would take 17 scalars") as ei:
        ir.compile(pl.parse(_reads(17)), output_dir=str(tmp_path), skip_ptoas=True)
    assert ei.value.span.line == 9 + 2 * 16 and "pl.read(idx, [16])" in str(ei.value)
    assert "at most 16" in (ei.value.hint or "")


def test_own_scalars_count_too(tmp_path: Path) -> None:
    src = _reads(9).replace("idx: pl.Tensor[[9], pl.INT32], x", "idx: pl.Tensor[[9], pl.INT32], " + ", ".join(
        f"s{j}: pl.Scalar[pl.FP32]" for j in range(8)) + ", x")
    src = src.replace("self.k(idx, x, o)", "self.k(idx, " + ", ".join("1.0" for _ in range(8)) + ", x, o)")
    with pytest.raises(UserError, match=r"would take 17 scalars.*\(8 are its own\)") as ei:
        ir.compile(pl.parse(src), output_dir=str(tmp_path), skip_ptoas=True)
    assert "pl.read(idx, [8])" in str(ei.value)


def test_seventeen_scalar_parameters_are_a_located_error(tmp_path: Path) -> None:
    params = ", ".join(f"s{j}: pl.Scalar[pl.FP32]" for j in range(17))
    src = f"""import pypto.language as pl

@pl.program
class Many:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[1, 32], pl.FP32], {params},
          o: pl.Out[pl.Tensor[[1, 32], pl.FP32]]) -> pl.Tensor[[1, 32], pl.FP32]:
        o = pl.store(pl.adds(pl.load(x, [0, 0], [1, 32]), s16), [0, 0], o)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[1, 32], pl.FP32], o: pl.Out[pl.Tensor[[1, 32], pl.FP32]]) -> pl.Tensor[[1, 32], pl.FP32]:
        o = self.k(x, {", ".join("1.0" for _ in range(17))}, o)
        return o
"""
    with pytest.raises(Exception, match="kernel 'k' takes 17 scalars; a task takes at most 16") as ei:
        ir.compile(pl.parse(src), output_dir=str(tmp_path), skip_ptoas=True)
    err = getattr(ei.value, "user_error", None) or ei.value
    assert isinstance(err, UserError) and err.span.line == 6


@pytest.mark.sim
def test_sixteen_reads_match_numpy(tmp_path: Path) -> None:
    idx = np.arange(16, dtype=np.int32) * 3 + 1
    x = np.random.default_rng(3).standard_normal((64, 32)).astype(np.float32)
    o = np.zeros((1, 32), np.float32)
    ir.compile(pl.parse(_reads(16)), output_dir=str(tmp_path), platform="a2a3sim")(idx, x, o)
    np.testing.assert_allclose(o[0], x[0] + x[idx].sum(0), rtol=1e-5, atol=1e-5)
