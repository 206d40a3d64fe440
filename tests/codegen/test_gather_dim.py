"""tensor.gather(src, dim=d, index=i) (torch.gather semantics) and the mask-pattern form over several rows:
typing, ptoas 0.1.1 lowering (one index-form tgather at flat positions) and both simulators against numpy;
the generated-PyTorch rendering before and after the pipeline; the compare form's located refusal."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.errors import UnsupportedFeatureError, UserError


def _shape(s: tuple[int, ...]) -> str:
    return "[" + ", ".join(map(str, s)) + "]"


def _program(src: tuple[int, ...], idx: tuple[int, ...], dim: int, window: bool = False) -> str:
    zero = ", ".join("0" for _ in idx)
    body = f"out = pl.tensor.gather(inp, dim={dim}, index=idx)"
    if window:  # a column window of a tile the kernel computed (the row pitch is the whole tile's)
        body = (f"t = pl.mul(inp, 2.0)\n            w = t[:, {src[1] // 2}:{src[1]}]\n"
                f"            out = pl.tensor.gather(w, dim={dim}, index=idx)")
    return f"""import pypto.language as pl

@pl.program
class G:
    @pl.function(type=pl.FunctionType.Opaque)
    def main(self, inp: pl.Tensor[{_shape(src)}, pl.FP32], idx: pl.Tensor[{_shape(idx)}, pl.INT32],
             output: pl.Out[pl.Tensor[{_shape(idx)}, pl.FP32]]) -> pl.Tensor[{_shape(idx)}, pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            {body}
            output = pl.assemble(output, out, [{zero}])
        return output
"""


def _want(x: np.ndarray, i: np.ndarray, dim: int) -> np.ndarray:
    d = dim % x.ndim
    box = tuple(slice(0, n) if k != d else slice(None) for k, n in enumerate(i.shape))
    return np.take_along_axis(x[box], i, axis=d)


CASES = [((4, 16), (4, 8), -1), ((4, 16), (2, 8), -1), ((4, 32), (4, 64), 1), ((2, 3, 16), (2, 3, 8), -1),
         ((2, 8, 8), (2, 3, 8), 1), ((8, 2, 8), (3, 2, 8), -3), ((2, 4, 16), (2, 3, 8), 2), ((8, 16), (4, 8), 0)]


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
@pytest.mark.parametrize(("src", "idx", "dim"), CASES)
def test_gather_along_an_axis_matches_take_along_axis(src, idx, dim, platform, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    compiled = ir.compile(pl.parse(_program(src, idx, dim)), platform=platform)
    text = "\n".join(p.read_text() for p in Path(compiled.output_dir).glob("ptoas/*.pto"))
    assert text.count("pto.tgather ") == 1 and "pto.tci " in text
    rng = np.random.default_rng(len(src) + dim)
    x = rng.standard_normal(src).astype(np.float32)
    i = rng.integers(0, src[dim % len(src)], idx).astype(np.int32)
    out = np.zeros(idx, np.float32)
    compiled(x, i, out)
    np.testing.assert_array_equal(out, _want(x, i, dim))


def test_gather_from_a_column_window_of_a_computed_tile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    compiled = ir.compile(pl.parse(_program((16, 128), (16, 64), -1, window=True)), platform="a2a3sim")
    rng = np.random.default_rng(3)
    x = rng.standard_normal((16, 128)).astype(np.float32)
    i = (np.arange(64)[None, :] ^ 1).repeat(16, 0).astype(np.int32)  # the rope pair swap
    out = np.zeros((16, 64), np.float32)
    compiled(x, i, out)
    np.testing.assert_array_equal(out, np.take_along_axis(2 * x[:, 64:], i, axis=1))


MASK = """import pypto.language as pl

@pl.program
class M:
    @pl.function(type=pl.FunctionType.Opaque)
    def main(self, x: pl.Tensor[[8, 16], pl.FP32], even: pl.Out[pl.Tensor[[8, 8], pl.FP32]],
             third: pl.Out[pl.Tensor[[8, 4], pl.UINT32]]) -> pl.Tensor[[8, 8], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            even = pl.assemble(even, pl.gather(x, mask_pattern=pl.tile.MaskPattern.P0101), [0, 0])
            g = pl.tensor.gather(x, mask_pattern=pl.tile.MaskPattern.P0100, output_dtype=pl.UINT32)
            third = pl.assemble(third, g, [0, 0])
        return even
"""


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_mask_pattern_gather_of_several_rows(platform, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    compiled = ir.compile(pl.parse(MASK), platform=platform)
    x = np.random.default_rng(5).standard_normal((8, 16)).astype(np.float32)
    even, third = np.zeros((8, 8), np.float32), np.zeros((8, 4), np.uint32)
    compiled(x, even, third)
    np.testing.assert_array_equal(even, x[:, 0::2])
    np.testing.assert_array_equal(third, x[:, 2::4].view(np.uint32))


COMPARE = """import pypto.language as pl

@pl.program
class C:
    @pl.function(type=pl.FunctionType.Opaque)
    def main(self, src: pl.Tensor[[16, 64], pl.INT32], kv: pl.Tensor[[1], pl.INT32],
             dst: pl.Out[pl.Tensor[[16, 8], pl.INT32]], cnt: pl.Out[pl.Tensor[[1, 16], pl.INT32]]
             ) -> tuple[pl.Tensor[[16, 8], pl.INT32], pl.Tensor[[1, 16], pl.INT32]]:
        with pl.at(level=pl.Level.CORE_GROUP):
            k: pl.Scalar[pl.INT32] = pl.tensor.read(kv, [0])
            d, c = pl.tensor.gather(src, kvalue=k, cmp_mode="eq", out_cols=8)
            dst = pl.assemble(dst, d, [0, 0])
            cnt = pl.assemble(cnt, c, [0, 0])
        return dst, cnt
"""


def test_compare_form_parses_and_is_refused_at_compile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    program = pl.parse(COMPARE)  # defining it works: a file holding it imports
    assert "cmp_mode='eq'" in program.as_python() or 'cmp_mode="eq"' in program.as_python()
    with pytest.raises(UnsupportedFeatureError, match=r"compare form.*ptoas 0\.1\.1.*pending a PTOAS fix") as e:
        ir.compile(program, platform="a2a3sim")
    assert ":11:" in str(e.value) and "torch.nonzero" in str(e.value)


@pytest.mark.parametrize(("src", "idx", "dim", "msg"), [
    ("[4, 16], pl.FP32", "[4, 8], pl.INT32", 2, "dim must be an integer axis"),
    ("[4, 16], pl.FP32", "[4, 8, 1], pl.INT32", -1, "the source's rank 2"),
    ("[4, 16], pl.FP32", "[4, 8], pl.FP32", -1, "the index must be INT32"),
    ("[4, 16], pl.FP32", "[4, 16], pl.INT16", -1, "INT16 only with a 16-bit source"),
    ("[4, 16], pl.FP32", "[8, 8], pl.INT32", -1, "index extent 8 on axis 0 exceeds the source's 4"),
])
def test_gather_dim_type_errors_are_located(src, idx, dim, msg) -> None:
    text = f"""import pypto.language as pl

@pl.program
class E:
    @pl.function
    def main(self, a: pl.Tensor[{src}], i: pl.Tensor[{idx}]) -> pl.Tensor[[4, 8], pl.FP32]:
        return pl.tensor.gather(a, dim={dim}, index=i)
"""
    with pytest.raises(UserError, match=msg) as e:
        pl.parse(text)
    assert ":7:" in str(e.value)


@pytest.mark.torch
def test_torch_rendering_of_the_gather_forms(torch) -> None:
    from pypto.debug import torch_codegen
    from pypto.driver import lower

    x = torch.randn(2, 8, 8)
    i = torch.randint(0, 8, (2, 3, 8), dtype=torch.int32)
    ns: dict = {}
    exec(torch_codegen(pl.parse(_program((2, 8, 8), (2, 3, 8), 1)), check_shapes=True), ns)  # noqa: S102
    out = torch.zeros(2, 3, 8)
    ns["main"](x, i, out)
    assert torch.equal(out, torch.gather(x, 1, i.long()))
    x, i = torch.randn(16, 128), torch.randint(0, 64, (16, 64), dtype=torch.int32)
    program = pl.parse(_program((16, 128), (16, 64), -1, window=True))
    for prog in (program, lower(program)):  # lowered: the window's column offset on the tile op
        ns = {}
        exec(torch_codegen(prog, check_shapes=True), ns)  # noqa: S102
        out = torch.zeros(16, 64)
        ns["main"](x, i, out)
        assert torch.equal(out, torch.gather(2 * x[:, 64:], 1, i.long()))
    ns = {}
    exec(torch_codegen(pl.parse(COMPARE), check_shapes=True), ns)  # noqa: S102
    src = torch.randint(0, 4, (16, 64), dtype=torch.int32)
    dst, cnt = torch.zeros(16, 8, dtype=torch.int32), torch.zeros(1, 16, dtype=torch.int32)
    ns["main"](src, torch.tensor([2], dtype=torch.int32), dst, cnt)
    hits = src == 2
    assert torch.equal(cnt[0], hits.sum(1).to(torch.int32))
    first = torch.nonzero(hits[0]).flatten()[:8].to(torch.int32)  # a row may hold fewer than 8 hits
    assert torch.equal(dst[0, : len(first)], first)


FLAT = """import pypto.language as pl

@pl.program
class F:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, x: pl.Tensor[[8, 64], pl.FP32], i: pl.Tensor[[8, 32], pl.INT32],
               vals: pl.Out[pl.Tensor[[8, 32], pl.FP32]], odd: pl.Out[pl.Tensor[[8, 32], pl.FP32]]
               ) -> tuple[pl.Tensor[[8, 32], pl.FP32], pl.Tensor[[8, 32], pl.FP32]]:
        xt: pl.Tile[[8, 64], pl.FP32] = pl.load(x, [0, 0], [8, 64])
        it: pl.Tile[[8, 32], pl.INT32] = pl.load(i, [0, 0], [8, 32])
        g: pl.Tile[[8, 32], pl.FP32] = pl.tile.gather(xt, it, it)
        m: pl.Tile[[8, 32], pl.FP32] = pl.tile.gather_mask(xt, mask_pattern=pl.tile.MaskPattern.P1010)
        vals = pl.store(g, [0, 0], vals)
        odd = pl.store(m, [0, 0], odd)
        return vals, odd

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[8, 64], pl.FP32], i: pl.Tensor[[8, 32], pl.INT32],
             vals: pl.Out[pl.Tensor[[8, 32], pl.FP32]], odd: pl.Out[pl.Tensor[[8, 32], pl.FP32]]
             ) -> tuple[pl.Tensor[[8, 32], pl.FP32], pl.Tensor[[8, 32], pl.FP32]]:
        vals, odd = self.kernel(x, i, vals, odd)
        return vals, odd
"""


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_tile_gather_by_flat_position_and_gather_mask(platform, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    compiled = ir.compile(pl.parse(FLAT), platform=platform)
    x = np.random.default_rng(1).standard_normal((8, 64)).astype(np.float32)
    flat = (np.arange(8)[:, None] * 64 + np.arange(32)[None, :] * 2).astype(np.int32)  # upstream's test_sort layout
    vals, odd = np.zeros((8, 32), np.float32), np.zeros((8, 32), np.float32)
    compiled(x, flat, vals, odd)
    np.testing.assert_array_equal(vals, x[:, 0::2])
    np.testing.assert_array_equal(odd, x[:, 1::2])


DYN_MERGE = """import pypto.language as pl

@pl.program
class D:
    @pl.function(type=pl.FunctionType.Opaque)
    def main(self, src: pl.Tensor[[1, 256], pl.FP32], idx: pl.Tensor[[1, 256], pl.UINT32],
             out: pl.Out[pl.Tensor[[1, 512], pl.FP32]]) -> pl.Tensor[[1, 512], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            s = pl.tensor.sort32(src, idx)
            for i, (acc,) in pl.range(1, init_values=(s,)):
                merged = pl.tensor.mrgsort(acc, block_len=1 << (6 + i * 2))
                r = pl.yield_(merged)
            out = pl.assemble(out, r, [0, 0])
        return out
"""


def test_mrgsort_with_a_run_time_block_len_parses_and_is_refused_when_lowered(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    program = pl.parse(DYN_MERGE)  # a file defining it imports
    with pytest.raises(UserError, match=r"block_len is a run-time value.*constant attribute") as e:
        ir.compile(program, platform="a2a3sim")
    assert ":11:" in str(e.value) and "pl.unroll" in str(e.value)
