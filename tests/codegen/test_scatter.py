"""scatter (index and mask forms), scatter_update and mscatter: typing, the ptoas 0.1.1 lowering (a copy
and one index-form tscatter at flat positions) on both simulators against numpy, the generated-PyTorch
rendering, located type errors and mscatter's located refusal."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.errors import UnsupportedFeatureError, UserError

H = "import pypto.language as pl\n"


def _index(rows: int, k: int, cols: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)  # distinct positions per row: the result does not depend on the order
    return np.stack([rng.permutation(cols)[:k] for _ in range(rows)]).astype(np.int32)


def _scatter_program(dt: str, it: str, rows: int, cols: int, k: int, irows: int) -> str:
    return H + f"""
@pl.program
class S:
    @pl.function(type=pl.FunctionType.Opaque)
    def main(self, base: pl.Tensor[[{rows}, {cols}], pl.{dt}], idx: pl.Tensor[[{irows}, {k}], pl.{it}],
             val: pl.Tensor[[{irows}, {k}], pl.{dt}],
             output: pl.Out[pl.Tensor[[{rows}, {cols}], pl.{dt}]]) -> pl.Tensor[[{rows}, {cols}], pl.{dt}]:
        with pl.at(level=pl.Level.CORE_GROUP):
            out = pl.scatter(base, dim=-1, index=idx, src=val)
            output = pl.assemble(output, out, [0, 0])
        return output
"""


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
@pytest.mark.parametrize(("dt", "it", "rows", "cols", "k", "irows"), [
    ("FP32", "INT32", 8, 16, 8, 8), ("INT32", "INT32", 4, 32, 8, 2), ("FP16", "INT16", 16, 32, 16, 16)])
def test_scatter_along_the_last_axis(dt, it, rows, cols, k, irows, platform, tmp_path: Path,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    compiled = ir.compile(pl.parse(_scatter_program(dt, it, rows, cols, k, irows)), platform=platform)
    text = "\n".join(p.read_text() for p in Path(compiled.output_dir).glob("ptoas/*.pto"))
    assert text.count("pto.tscatter ") == 1
    npdt = {"FP32": np.float32, "INT32": np.int32, "FP16": np.float16}[dt]
    rng = np.random.default_rng(rows)
    base = (rng.standard_normal((rows, cols)) * 8).astype(npdt)
    idx = _index(irows, k, cols, cols).astype(np.int16 if it == "INT16" else np.int32)
    val = (rng.standard_normal((irows, k)) * 8).astype(npdt)
    out = np.zeros((rows, cols), npdt)
    compiled(base, idx, val, out)
    want = base.copy()
    np.put_along_axis(want[:irows], idx.astype(np.int64), val, axis=1)
    np.testing.assert_array_equal(out, want)


MASK = H + """
@pl.program
class M:
    @pl.function(type=pl.FunctionType.Opaque)
    def main(self, even: pl.Tensor[[8, 8], pl.FP32], odd: pl.Tensor[[8, 8], pl.FP32],
             dst: pl.Tensor[[8, 16], pl.FP32], wide: pl.Tensor[[8, 32], pl.FP32],
             output: pl.Out[pl.Tensor[[8, 16], pl.FP32]], fourth: pl.Out[pl.Tensor[[8, 32], pl.FP32]]
             ) -> pl.Tensor[[8, 16], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            out = pl.tensor.scatter(even, mask_pattern=pl.tile.MaskPattern.P0101, dst=dst)
            out = pl.tensor.scatter(odd, mask_pattern=pl.tile.MaskPattern.P1010, dst=out)
            output = pl.assemble(output, out, [0, 0])
            f = pl.scatter(even, mask_pattern=pl.tile.MaskPattern.P1000, dst=wide)
            fourth = pl.assemble(fourth, f, [0, 0])
        return output
"""


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_mask_scatters_interleave(platform, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    compiled = ir.compile(pl.parse(MASK), platform=platform)
    rng = np.random.default_rng(2)
    even, odd = rng.standard_normal((8, 8)).astype(np.float32), rng.standard_normal((8, 8)).astype(np.float32)
    dst, wide = np.zeros((8, 16), np.float32), rng.standard_normal((8, 32)).astype(np.float32)
    output, fourth = np.zeros((8, 16), np.float32), np.zeros((8, 32), np.float32)
    compiled(even, odd, dst, wide, output, fourth)
    want = np.empty((8, 16), np.float32)
    want[:, 0::2], want[:, 1::2] = even, odd
    np.testing.assert_array_equal(output, want)
    want4 = wide.copy()
    want4[:, 3::4] = even
    np.testing.assert_array_equal(fourth, want4)


UPDATE = H + """
@pl.program
class U:
    @pl.function(type=pl.FunctionType.Opaque)
    def main(self, base: pl.Tensor[[32, 16], pl.FP32], index: pl.Tensor[[2, 8], pl.INT32],
             src: pl.Tensor[[16, 16], pl.FP32], output: pl.Out[pl.Tensor[[32, 16], pl.FP32]]
             ) -> pl.Tensor[[32, 16], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            out = pl.scatter_update(base, -2, index, src)
            output = pl.assemble(output, out, [0, 0])
        return output
"""


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_scatter_update_overwrites_rows(platform, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    compiled = ir.compile(pl.parse(UPDATE), platform=platform)
    rng = np.random.default_rng(9)
    base, src = rng.standard_normal((32, 16)).astype(np.float32), rng.standard_normal((16, 16)).astype(np.float32)
    index = rng.permutation(32)[:16].reshape(2, 8).astype(np.int32)
    out = np.zeros((32, 16), np.float32)
    compiled(base, index, src, out)
    want = base.copy()
    want[index.reshape(-1)] = src
    np.testing.assert_array_equal(out, want)


MSCATTER = H + """
@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, s: pl.Tensor[[8, 32], pl.FP32], i: pl.Tensor[[8, 32], pl.INT32],
               output: pl.Out[pl.Tensor[[256], pl.FP32]]) -> pl.Tensor[[256], pl.FP32]:
        st: pl.Tile[[8, 32], pl.FP32] = pl.load(s, [0, 0], [8, 32])
        it: pl.Tile[[8, 32], pl.INT32] = pl.load(i, [0, 0], [8, 32])
        out: pl.Tensor[[256], pl.FP32] = pl.mscatter(st, it, output)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, s: pl.Tensor[[8, 32], pl.FP32], i: pl.Tensor[[8, 32], pl.INT32],
             output: pl.Out[pl.Tensor[[256], pl.FP32]]) -> pl.Tensor[[256], pl.FP32]:
        output = self.kernel(s, i, output)
        return output
"""


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_mscatter_stores_at_element_offsets(platform, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    compiled = ir.compile(pl.parse(MSCATTER), platform=platform)
    text = "\n".join(p.read_text() for p in Path(compiled.output_dir).glob("ptoas/*.pto"))
    assert "pto.tscatter " in text and "pto.tload " in text and "pto.tstore " in text
    rng = np.random.default_rng(4)
    s = rng.standard_normal((8, 32)).astype(np.float32)
    i = rng.permutation(256)[:256].reshape(8, 32).astype(np.int32)
    i[0, :4] = [250, 251, 252, 253]
    out = np.full(256, 7.0, np.float32)
    compiled(s, i, out)
    want = np.full(256, 7.0, np.float32)
    want[i.reshape(-1)] = s.reshape(-1)
    np.testing.assert_array_equal(out, want)


def test_mscatter_into_a_large_output_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    program = pl.parse(MSCATTER.replace("[256]", "[32768]"))  # 128 KiB: more than the on-chip copy may take
    with pytest.raises(UnsupportedFeatureError, match=r"pl\.mscatter.*at most 64 KiB") as e:
        ir.compile(program, platform="a2a3sim")
    assert ":10:" in str(e.value) and "pl.slice" in str(e.value)


@pytest.mark.parametrize(("call", "msg"), [
    ("pl.scatter(b, dim=0, index=i, src=v)", "along the last axis"),
    ("pl.scatter(b, dim=-1, index=v, src=v)", "INT32 or INT16"),
    ("pl.scatter(b, dim=-1, index=i, src=w)", "must share one 2-D shape"),
    ("pl.scatter(b)", "give dim= with index= and src="),
    ("pl.scatter(w, mask_pattern=pl.tile.MaskPattern.P0101, dst=b)", "times its columns"),
    ("pl.scatter_update(b, -1, i, v)", "whole rows"),
])
def test_scatter_type_errors_are_located(call: str, msg: str) -> None:
    text = H + f"""
@pl.program
class E:
    @pl.function
    def main(self, b: pl.Tensor[[8, 16], pl.FP32], i: pl.Tensor[[8, 8], pl.INT32], v: pl.Tensor[[8, 8], pl.FP32],
             w: pl.Tensor[[8, 4], pl.FP32]) -> pl.Tensor[[8, 16], pl.FP32]:
        return {call}
"""
    with pytest.raises(UserError, match=msg) as e:
        pl.parse(text)
    assert ":8:" in str(e.value)


@pytest.mark.torch
def test_torch_rendering_of_the_scatters(torch) -> None:
    from pypto.debug import torch_codegen
    from pypto.driver import lower

    base, src = torch.randn(32, 16), torch.randn(16, 16)
    index = torch.randperm(32)[:16].reshape(2, 8).to(torch.int32)
    even, odd = torch.randn(8, 8), torch.randn(8, 8)
    program, mask = pl.parse(UPDATE), pl.parse(MASK)
    for prog, mprog in ((program, mask), (lower(program), lower(mask))):
        ns: dict = {}
        exec(torch_codegen(prog, check_shapes=True), ns)  # noqa: S102
        out = torch.zeros(32, 16)
        ns["main"](base, index, src, out)
        want = base.clone()
        want[index.reshape(-1).long()] = src
        assert torch.equal(out, want)
        ns = {}
        exec(torch_codegen(mprog, check_shapes=True), ns)  # noqa: S102
        out, fourth = torch.zeros(8, 16), torch.zeros(8, 32)
        ns["main"](even, odd, torch.zeros(8, 16), torch.zeros(8, 32), out, fourth)
        assert torch.equal(out[:, 0::2], even) and torch.equal(out[:, 1::2], odd)
        assert torch.equal(fourth[:, 3::4], even)
    ns = {}
    exec(torch_codegen(pl.parse(MSCATTER), check_shapes=True), ns)  # noqa: S102
    s, perm = torch.randn(8, 32), torch.randperm(256).reshape(8, 32).to(torch.int32)
    out = torch.zeros(256)
    ns["main"](s, perm, out)
    assert torch.equal(out[perm.reshape(-1).long()], s.reshape(-1))
