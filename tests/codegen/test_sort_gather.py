"""sort32 / mrgsort / mask-pattern gather / set_validshape: registry typing, ptoas 0.1.1 lowering and sim
numerics against numpy (a row-wise top-k and a ragged-tail fill)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from ptocheck import checker, verify

import pypto.language as pl
from pypto import ir
from pypto.errors import UnsupportedFeatureError, UserError

N, K, ROWS = 512, 16, 4
TOPK = f"""import pypto.language as pl

@pl.program
class TopK:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[{ROWS}, {N}], pl.FP32], vals: pl.Out[pl.Tensor[[{ROWS}, {K}], pl.FP32]],
             idx: pl.Out[pl.Tensor[[{ROWS}, {K}], pl.INT32]]) -> pl.Tensor[[{ROWS}, {K}], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            ramp = pl.arange(0, [1, {N}], dtype=pl.UINT32)
            for r in pl.range({ROWS}):
                s = pl.sort32(x[r:r + 1, :], ramp)
                s = pl.mrgsort(s, block_len=64)
                s = pl.mrgsort(s, block_len=256)
                head = s[:, 0:{2 * K}]
                vals[r:r + 1, :] = pl.gather(head, mask_pattern=pl.tile.MaskPattern.P0101)
                idx[r:r + 1, :] = pl.gather(head, mask_pattern=pl.tile.MaskPattern.P1010, output_dtype=pl.INT32)
        return vals
"""


def _compile(src: str, platform: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.chdir(tmp_path)
    compiled = ir.compile(pl.parse(src), platform=platform)
    ptos = sorted(Path(compiled.output_dir).glob("ptoas/*.pto"))
    if checker()[0] is not None:
        verify(*ptos)
    return compiled, "\n".join(p.read_text() for p in ptos)


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_row_topk_matches_a_stable_descending_argsort(platform, tmp_path, monkeypatch):
    compiled, text = _compile(TOPK, platform, tmp_path, monkeypatch)
    assert all(f"pto.{op} " in text for op in ("tsort32", "tmrgsort", "tgather", "treshape"))
    assert "blockLen = 64" in text and "blockLen = 256" in text
    writers: dict[str, set[str]] = {}
    for op, handle in re.findall(r"pto\.(\w+) ins\(.*?\) outs\(%(\w+)", text):
        writers.setdefault(handle, set()).add(op)
    views = [ops for ops in writers.values() if "treshape" in ops]
    assert views and all(ops == {"treshape"} for ops in views)  # TRESHAPE rebinds its handle for good
    rng = np.random.default_rng(7)
    x = rng.standard_normal((ROWS, N)).astype(np.float32)
    x[1, 10] = x[1, 200] = 9.0  # a tie: the lower index comes first
    vals, idx = np.zeros((ROWS, K), np.float32), np.zeros((ROWS, K), np.int32)
    compiled(x, vals, idx)
    order = np.argsort(-x, axis=1, kind="stable")[:, :K]
    np.testing.assert_array_equal(idx, order)
    np.testing.assert_array_equal(vals, np.take_along_axis(x, order, axis=1))
    assert list(idx[1, :2]) == [10, 200]


TAIL = """import pypto.language as pl

@pl.program
class Tail:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[8, 64], pl.FP32], n: pl.Scalar[pl.INDEX],
             out: pl.Out[pl.Tensor[[8, 64], pl.FP32]]) -> pl.Tensor[[8, 64], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            t = pl.mul(x, 2.0)
            out = pl.assemble(out, pl.fillpad(pl.set_validshape(t, 8, n), pad_value=pl.PadValue.min), [0, 0])
        return out
"""


def test_set_validshape_narrows_a_computed_tile_for_fillpad(tmp_path, monkeypatch):
    compiled, text = _compile(TAIL, "a2a3sim", tmp_path, monkeypatch)
    assert "v_col=?" in text and "pto.treshape" in text and "pto.tfillpad" in text
    x = np.random.default_rng(1).standard_normal((8, 64)).astype(np.float32)
    out = np.zeros_like(x)
    compiled(x, 37, out)
    want = np.full_like(x, -np.inf)
    want[:, :37] = 2 * x[:, :37]
    np.testing.assert_array_equal(out, want)


def test_a_full_validshape_of_a_matmul_operand_changes_nothing(tmp_path, monkeypatch):
    src = """import pypto.language as pl

@pl.program
class Mm:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 128], pl.FP16], b: pl.Tensor[[64, 32], pl.FP16],
             c: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            c = pl.assemble(c, pl.matmul(pl.tensor.set_validshape(a[:, 64:128], 16, 64), b), [0, 0])
        return c
"""
    compiled, text = _compile(src, "a2a3sim", tmp_path, monkeypatch)
    assert "treshape" not in text
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((16, 128)).astype(np.float16), rng.standard_normal((64, 32)).astype(np.float16)
    c = np.zeros((16, 32), np.float32)
    compiled(a, b, c)
    np.testing.assert_allclose(c, a[:, 64:].astype(np.float32) @ b.astype(np.float32), rtol=1e-3, atol=1e-3)


def _body(stmts: str) -> str:
    return f"""import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[1, 256], pl.FP32], o: pl.Out[pl.Tensor[[1, 512], pl.FP32]]) -> pl.Tensor[[1, 512], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            ramp = pl.arange(0, [1, 256], dtype=pl.UINT32)
{stmts}
        return o
"""


@pytest.mark.parametrize(("stmts", "err", "needle"), [
    ("            s = pl.sort32(pl.cast(x, pl.FP16), pl.cast(ramp, pl.INT32))", UserError, "sorts FP32 values"),
    ("            s = pl.sort32(x[:, 0:48], ramp[:, 0:48])", UserError, "multiple of 32"),
    ("            s = pl.mrgsort(pl.sort32(x, ramp), block_len=96)", UserError, "multiple of 64"),
    ("            s = pl.mrgsort(pl.sort32(x, ramp), block_len=256)", UserError, "multiple of 1024"),
    ("            s = pl.sort32(x, ramp)\n            for i in pl.range(2):\n                s = pl.mrgsort(s[:, 0:256], "
     "s[:, 256:512])", UserError, "inside a loop or an if of a kernel"),
    ("            s = pl.sort32(x, ramp)\n            s = pl.mrgsort(s[:, 0:128], s[:, 128:256], s[:, 256:320])",
     UserError, "v0.57"),
    ("            s = pl.sort32(x, ramp)\n            s = pl.mrgsort(s[:, 0:256], s[:, 256:512], exhausted=True)",
     UserError, "exhausted=True"),
    ("            s = pl.sort32(x, ramp)\n            g = pl.gather(s[:, 64:128], mask_pattern=pl.tile.MaskPattern.P0101)",
     UnsupportedFeatureError, "leading columns"),
    ("            g = pl.gather(x, mask_pattern=pl.tile.MaskPattern.P0101, output_dtype=pl.FP16)", UserError,
     "as wide as"),
])
def test_sort_and_gather_misuse_is_a_located_error(stmts, err, needle, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(err) as info:
        ir.compile(pl.parse(_body(stmts)), platform="a2a3sim")
    assert needle in str(info.value)
    assert ":" in str(info.value).split("error")[0]  # file:line:col before the message
    if "separate sorted lists" in str(info.value):  # the hint is the GM rewrite MERGE_IN_GM runs
        assert "pl.create_tensor([1, 4 * L]" in str(info.value) and "block_len=L)[:, 0:k * L]" in str(info.value)


# The rewrite the multi-list error suggests: two sorted lists side by side in a GM row the orchestration
# creates (the unused runs below every score), merged with block_len = L in a second scope.
L2 = 256  # slots per list (128 pairs)
MERGE_IN_GM = f"""import pypto.language as pl

@pl.program
class MergeInGm:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[1, {L2}], pl.FP32], vals: pl.Out[pl.Tensor[[1, {L2}], pl.FP32]],
             idx: pl.Out[pl.Tensor[[1, {L2}], pl.INT32]]) -> pl.Tensor[[1, {L2}], pl.FP32]:
        row = pl.create_tensor([1, {4 * L2}], dtype=pl.FP32)
        with pl.at(level=pl.Level.CORE_GROUP):
            first = pl.mrgsort(pl.sort32(x[:, 0:{L2 // 2}], pl.arange(0, [1, {L2 // 2}], dtype=pl.UINT32)),
                               block_len=64)
            second = pl.mrgsort(pl.sort32(x[:, {L2 // 2}:{L2}], pl.arange({L2 // 2}, [1, {L2 // 2}],
                                                                           dtype=pl.UINT32)), block_len=64)
            row[:, {2 * L2}:{4 * L2}] = pl.full([1, {2 * L2}], dtype=pl.FP32, value=-3.402823e38)
            row[:, 0:{L2}] = first
            row[:, {L2}:{2 * L2}] = second
        with pl.at(level=pl.Level.CORE_GROUP):
            merged = pl.mrgsort(row, block_len={L2})[:, 0:{2 * L2}]
            vals[:, :] = pl.gather(merged, mask_pattern=pl.tile.MaskPattern.P0101)
            idx[:, :] = pl.gather(merged, mask_pattern=pl.tile.MaskPattern.P1010, output_dtype=pl.INT32)
        return vals
"""


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_the_multi_list_hint_merges_two_sorted_lists_in_gm(platform, tmp_path, monkeypatch):
    compiled, text = _compile(MERGE_IN_GM, platform, tmp_path, monkeypatch)
    assert f"blockLen = {L2}" in text
    x = np.random.default_rng(3).standard_normal((1, L2)).astype(np.float32)
    x[0, 5] = x[0, L2 // 2 + 9] = 7.0  # a tie across the lists: the first list's entry comes first
    vals, idx = np.zeros((1, L2), np.float32), np.zeros((1, L2), np.int32)
    compiled(x, vals, idx)
    order = np.argsort(-x, axis=1, kind="stable")
    np.testing.assert_array_equal(idx, order)
    np.testing.assert_array_equal(vals, np.take_along_axis(x, order, axis=1))
    assert list(idx[0, :2]) == [5, L2 // 2 + 9]


BCAST = """import pypto.language as pl

@pl.program
class B:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 64], pl.FP32], r: pl.Tensor[[16, 1], pl.FP32], c: pl.Tensor[[1, 64], pl.FP32],
             o1: pl.Out[pl.Tensor[[16, 64], pl.FP32]], o2: pl.Out[pl.Tensor[[16, 64], pl.FP32]],
             o3: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            o1[:, :] = pl.mul(x, r)
            o2[:, :] = pl.add(c, x)
            o3[:, :] = pl.sub(x, c)
        return o1
"""


def test_binary_ops_broadcast_a_row_or_column_operand(tmp_path, monkeypatch):
    compiled, _ = _compile(BCAST, "a2a3sim", tmp_path, monkeypatch)
    rng = np.random.default_rng(4)
    x, r, c = (rng.standard_normal(s).astype(np.float32) for s in ((16, 64), (16, 1), (1, 64)))
    outs = [np.zeros((16, 64), np.float32) for _ in range(3)]
    compiled(x, r, c, *outs)
    for got, want in zip(outs, (x * r, c + x, x - c), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def test_a_broadcast_operand_first_in_sub_stays_a_shape_error(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    src = BCAST.replace("pl.sub(x, c)", "pl.sub(c, x)")
    with pytest.raises(UserError, match="shape mismatch"):
        ir.compile(pl.parse(src), platform="a2a3sim")

