"""torch_codegen rules for the later registry ops (three-operand and part ops, ci/extract, SPMD ids, arrays).

Each program runs as generated PyTorch before and after the pass pipeline and is compared with numpy; the
semantics follow the simulator's tile ISA (tsubc/tsubsc lower to a - b - c, part ops cover the union of
the operands' valid regions, an SPMD launch runs every block).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import pypto.language as pl
from pypto.debug import torch_codegen
from pypto.driver import lower

torch = pytest.importorskip("torch", reason="torch is not installed (pip install torch==2.13.0)")

F = "pl.Tensor[[16, 64], pl.FP32]"
I = "pl.Tensor[[16, 64], pl.INT32]"  # noqa: E741
H = "import pypto.language as pl\n"


def _run_both(text: str, *args):
    """Run the program's entry ``main`` at both stages; yields (stage, args after the call)."""
    program = pl.parse(H + text)
    for stage, prog in (("frontend", program), ("lowered", lower(program))):
        ns: dict = {}
        exec(torch_codegen(prog, check_shapes=True), ns)  # noqa: S102
        fresh = [a.clone() if isinstance(a, torch.Tensor) else a for a in args]
        ns["main"](*fresh)
        yield stage, fresh


def _rand(*shape: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


TERNARY = f"""
@pl.program
class Ternary:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: {F}, y: {F}, z: {F}, q: {I}, o1: pl.Out[{F}], o2: pl.Out[{F}], o3: pl.Out[{F}],
             o4: pl.Out[{F}], o5: pl.Out[{F}], o6: pl.Out[{I}], o7: pl.Out[{I}]) -> {F}:
        with pl.at(level=pl.Level.CORE_GROUP):
            tx = pl.load(x, [0, 0], [16, 64])
            ty = pl.load(y, [0, 0], [16, 64])
            tz = pl.load(z, [0, 0], [16, 64])
            tq = pl.load(q, [0, 0], [16, 64])
            o1 = pl.store(pl.addc(tx, ty, tz), [0, 0], o1)
            o2 = pl.store(pl.tile.subc(tx, ty, tz), [0, 0], o2)
            o3 = pl.store(pl.addsc(tx, 2.5, ty), [0, 0], o3)
            o4 = pl.store(pl.subsc(tx, 0.75, tz), [0, 0], o4)
            o5 = pl.store(pl.prelu(tx, ty, tz), [0, 0], o5)
            o6 = pl.store(pl.xors(tq, 1234), [0, 0], o6)
        with pl.at(level=pl.Level.CORE_GROUP):
            o7[:] = pl.xors(q, -3)
        return o1
"""


def test_three_operand_prelu_and_xors_match_numpy() -> None:
    x, y, z = _rand(16, 64, seed=1), _rand(16, 64, seed=2), _rand(16, 64, seed=3)
    q = np.random.default_rng(4).integers(-5000, 5000, (16, 64)).astype(np.int32)
    want = [x + y + z, x - y - z, x + 2.5 + y, x - 0.75 - z, np.where(x > 0, x, x * y), q ^ 1234, q ^ -3]
    outs = [torch.zeros(16, 64) for _ in range(5)] + [torch.zeros(16, 64, dtype=torch.int32) for _ in range(2)]
    args = [torch.from_numpy(a) for a in (x, y, z, q)] + outs
    for stage, got in _run_both(TERNARY, *args):
        for i, (g, w) in enumerate(zip(got[4:], want, strict=True)):
            np.testing.assert_allclose(g.numpy(), w, rtol=1e-6, atol=1e-6, err_msg=f"o{i + 1} ({stage})")


SEQ = f"""
@pl.program
class Seq:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: {F}, s: pl.Scalar[pl.INT32], o1: pl.Out[pl.Tensor[[1, 32], pl.INT32]],
             o2: pl.Out[pl.Tensor[[1, 16], pl.INT16]], o3: pl.Out[pl.Tensor[[8, 16], pl.FP32]],
             o4: pl.Out[{F}]) -> pl.Tensor[[1, 32], pl.INT32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            o1 = pl.store(pl.tile.ci(s, [1, 32]), [0, 0], o1)
            o2 = pl.store(pl.tile.arange(-7, [1, 16], dtype=pl.INT16, descending=True), [0, 0], o2)
            t = pl.load(x, [0, 0], [16, 64])
            o3 = pl.store(pl.tile.extract(t, 6, 40, [8, 16], target_memory=pl.Mem.Vec), [0, 0], o3)
            p = pl.load(x, [0, 0], [16, 64], [10, 24])
            o4 = pl.store(pl.tile.fillpad_inplace(p, pad_value=pl.PadValue.max), [0, 0], o4)
        return o1
"""


def test_ci_extract_and_fillpad_inplace_match_numpy() -> None:
    x = _rand(16, 64, seed=5)
    padded = np.full((16, 64), np.finfo(np.float32).max, np.float32)
    padded[:10, :24] = x[:10, :24]
    args = [torch.from_numpy(x), 11, torch.zeros(1, 32, dtype=torch.int32), torch.zeros(1, 16, dtype=torch.int16),
            torch.zeros(8, 16), torch.zeros(16, 64)]
    for stage, got in _run_both(SEQ, *args):
        np.testing.assert_array_equal(got[2].numpy()[0], 11 + np.arange(32), err_msg=stage)
        assert got[3].dtype == torch.int16
        np.testing.assert_array_equal(got[3].numpy()[0], -7 - np.arange(16), err_msg=stage)
        np.testing.assert_array_equal(got[4].numpy(), x[6:14, 40:56], err_msg=stage)
        np.testing.assert_array_equal(got[5].numpy(), padded, err_msg=stage)


EXTRACT = f"""
@pl.program
class Window:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: {F}, o: pl.Out[pl.Tensor[[8, 16], pl.FP32]]) -> pl.Tensor[[8, 16], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            p = pl.load(x, [0, 0], [16, 64], [10, 24])
            o = pl.store(pl.tile.extract(p, 6, 20, [8, 16], target_memory=pl.Mem.Vec), [0, 0], o)
        return o
"""


def test_extract_outside_the_valid_region_is_an_error() -> None:
    """Inside the tile's capacity but past its valid region: the simulator's TEXTRACT fails, so does torch."""
    with pytest.raises(IndexError, match=r"window \(6, 20\) \+ \(8, 16\) exceeds the source valid region \(10, 24\)"):
        for _ in _run_both(EXTRACT, torch.from_numpy(_rand(16, 64)), torch.zeros(8, 16)):
            pass


PART = f"""
@pl.program
class Part:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: {F}, y: {F}, o1: pl.Out[{F}], o2: pl.Out[{F}], o3: pl.Out[{F}], o4: pl.Out[{F}]) -> {F}:
        with pl.at(level=pl.Level.CORE_GROUP):
            a = pl.load(x, [0, 0], [16, 64], [16, 40])
            b = pl.load(y, [0, 0], [16, 64], [12, 64])
            o1 = pl.store(pl.part_add(a, b), [0, 0], o1)
            o2 = pl.store(pl.tile.part_max(b, a), [0, 0], o2)
            o3 = pl.store(pl.part_min(a, b), [0, 0], o3)
        with pl.at(level=pl.Level.CORE_GROUP):
            o4[:] = pl.part_max(x, y)
        return o1
"""


def test_part_ops_cover_the_union_of_valid_regions() -> None:
    x, y = _rand(16, 64, seed=6), _rand(16, 64, seed=7)
    ina = np.arange(64)[None, :] < 40
    inb = np.arange(16)[:, None] < 12
    for stage, got in _run_both(PART, torch.from_numpy(x), torch.from_numpy(y), *(torch.zeros(16, 64) for _ in range(4))):
        for out, fn in zip(got[2:5], (np.add, np.maximum, np.minimum), strict=True):
            want = np.where(ina & inb, fn(x, y), np.where(ina, x, np.where(inb, y, 0)))
            np.testing.assert_allclose(out.numpy(), want, rtol=1e-6, atol=1e-6, err_msg=stage)
        np.testing.assert_array_equal(got[5].numpy(), np.maximum(x, y), err_msg=stage)


T = "pl.Tensor[[256, 64], pl.FP32]"
SPMD = f"""
@pl.program
class Spmd:
    @pl.function(type=pl.FunctionType.InCore)
    def flip(self, a: {T}, out: pl.Out[{T}]) -> {T}:
        i = pl.tile.get_block_idx()
        n = pl.tile.get_block_num()
        out = pl.store(pl.muls(pl.load(a, [i * 64, 0], [64, 64]), 2.0), [(n - 1 - i) * 64, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: {T}, out: pl.Out[{T}], side: pl.Out[{T}]) -> {T}:
        tmp = pl.create_tensor([256, 64], dtype=pl.FP32)
        with pl.spmd(core_num=4) as first:
            tmp = self.flip(a, tmp)
        with pl.spmd(4, deps=[first]) as second:
            k = pl.tile.get_block_idx()
            out = pl.store(pl.adds(pl.load(tmp, [k * 64, 0], [64, 64]), 1.0), [k * 64, 0], out)
        for b in pl.spmd(2):
            sub = pl.tile.get_subblock_idx()
            side = pl.store(pl.muls(pl.load(a, [b * 64, 0], [64, 64]), 3.0), [(b + sub * 2) * 64, 0], side)
        with pl.at(level=pl.Level.CORE_GROUP):
            one = pl.tile.get_block_num()
            side = pl.store(pl.load(a, [(one + 2) * 64, 0], [64, 64]), [(one + 2) * 64, 0], side)
        return out
"""


def _spmd_want(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    out = (a.reshape(4, 64, 64)[::-1] * 2 + 1).reshape(256, 64)  # block i wrote rows of block n - 1 - i
    side = np.zeros_like(a)
    side[:128] = a[:128] * 3  # sub-block 0 in both blocks
    side[192:] = a[192:]  # one block outside a launch
    return out, side


def test_spmd_runs_every_block_with_its_index() -> None:
    a = _rand(256, 64, seed=8)
    out_want, side_want = _spmd_want(a)
    for stage, got in _run_both(SPMD, torch.from_numpy(a), torch.zeros(256, 64), torch.zeros(256, 64)):
        np.testing.assert_allclose(got[1].numpy(), out_want, rtol=1e-6, atol=1e-6, err_msg=stage)
        np.testing.assert_allclose(got[2].numpy(), side_want, rtol=1e-6, atol=1e-6, err_msg=stage)


def test_lowered_spmd_launch_is_one_call_run_per_block() -> None:
    src = torch_codegen(lower(pl.parse(H + SPMD)))
    assert src.count("_spmd(4, lambda: flip(") == 1
    assert "_blocks(" not in src.split("def main", 1)[1]  # the scopes became launches


ARRAY = f"""
@pl.program
class Arr:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: {T}, out: pl.Out[{T}]) -> {T}:
        order: pl.Array[4, pl.INT32] = pl.array.create(4, pl.INT32)
        writers: pl.Array[4, pl.TASK_ID] = pl.array.create(4, pl.TASK_ID)
        for i in pl.range(4):
            order[i] = 3 - i
        for j in pl.range(4):
            src = order[j]
            with pl.at(level=pl.Level.CORE_GROUP) as tid:
                out = pl.store(pl.muls(pl.load(a, [src * 64, 0], [64, 64]), 2.0), [j * 64, 0], out)
            writers[j] = tid
        with pl.at(level=pl.Level.CORE_GROUP, deps=[writers]):
            out = pl.store(pl.adds(pl.load(out, [0, 0], [64, 64]), 0.5), [0, 0], out)
        return out
"""


def test_arrays_carry_values_through_loops() -> None:
    a = _rand(256, 64, seed=9)
    want = (a.reshape(4, 64, 64)[::-1] * 2).reshape(256, 64)
    want[:64] += 0.5
    for stage, got in _run_both(ARRAY, torch.from_numpy(a), torch.zeros(256, 64)):
        np.testing.assert_allclose(got[1].numpy(), want, rtol=1e-6, atol=1e-6, err_msg=stage)


def test_validate_ir_follows_spmd_through_every_pass(tmp_path, monkeypatch, capsys) -> None:
    """Every pass dump of an SPMD program (scopes, then launches with block_num) renders to the sim's result."""
    from pypto import ir

    monkeypatch.chdir(tmp_path)
    compiled = ir.compile(pl.parse(H + SPMD), platform="a2a3sim")
    a = _rand(256, 64, seed=10)
    out, side = np.zeros((256, 64), np.float32), np.zeros((256, 64), np.float32)
    compiled(a, out, side)  # the simulator's answer is the reference
    out_want, side_want = _spmd_want(a)
    np.testing.assert_allclose(out, out_want, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(side, side_want, rtol=1e-6, atol=1e-6)
    tensors = {"a": torch.from_numpy(a), "out": torch.zeros(256, 64), "side": torch.zeros(256, 64)}
    compiled.validate_ir(tensors, {"out": torch.from_numpy(out), "side": torch.from_numpy(side)}, rtol=1e-6, atol=1e-6)
    dumps = sorted((Path(compiled.output_dir) / "passes_dump").glob("*.py"))
    assert any("block_num" in d.read_text() for d in dumps)  # the launches, not only the scopes, were run
    text = capsys.readouterr().out
    assert text.count("pass: True") == 2 * len(dumps) > 2 and "pass: False" not in text


TOPK = """
@pl.program
class TopK:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[2, 256], pl.FP32], vals: pl.Out[pl.Tensor[[2, 8], pl.FP32]],
             idx: pl.Out[pl.Tensor[[2, 8], pl.INT32]]) -> pl.Tensor[[2, 8], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            ramp = pl.arange(0, [1, 256], dtype=pl.UINT32)
            for r in pl.range(2):
                s = pl.sort32(x[r:r + 1, :], ramp)
                s = pl.mrgsort(s, block_len=64)
                head = s[:, 0:16]
                vals[r:r + 1, :] = pl.gather(head, mask_pattern=pl.tile.MaskPattern.P0101)
                idx[r:r + 1, :] = pl.gather(head, mask_pattern=pl.tile.MaskPattern.P1010, output_dtype=pl.INT32)
        return vals
"""


def test_sort32_mrgsort_and_gather_give_the_top_of_each_row() -> None:
    x = _rand(2, 256, seed=4)
    x[1, 3] = x[1, 40] = 9.0  # a tie across 32-blocks: the lower index first
    order = np.argsort(-x, axis=1, kind="stable")
    for stage, (_, vals, idx) in _run_both(TOPK, torch.from_numpy(x), torch.zeros(2, 8), torch.zeros(2, 8, dtype=torch.int32)):
        # blocks of 32 are sorted, then runs of 4 blocks (128 values) merged: the top 8 of each 128
        for r in range(2):
            want = [i for i in order[r] if i < 128][:8]
            np.testing.assert_array_equal(idx[r].numpy(), want, err_msg=stage)
            np.testing.assert_array_equal(vals[r].numpy(), x[r, want], err_msg=stage)


MERGE = """
@pl.program
class Merge:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[1, 256], pl.FP32], vals: pl.Out[pl.Tensor[[1, 256], pl.FP32]],
             idx: pl.Out[pl.Tensor[[1, 256], pl.INT32]]) -> pl.Tensor[[1, 256], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            a = pl.mrgsort(pl.sort32(x[:, 0:128], pl.arange(0, [1, 128], dtype=pl.UINT32)), block_len=64)
            b = pl.mrgsort(pl.sort32(x[:, 128:256], pl.arange(128, [1, 128], dtype=pl.UINT32)), block_len=64)
            m = pl.mrgsort(a, b)
            vals[:, :] = pl.gather(m, mask_pattern=pl.tile.MaskPattern.P0101)
            idx[:, :] = pl.gather(m, mask_pattern=pl.tile.MaskPattern.P1010, output_dtype=pl.INT32)
        return vals
"""


def test_a_merge_of_two_sorted_lists_is_one_descending_row() -> None:
    x = _rand(1, 256, seed=5)
    x[0, 7] = x[0, 170] = 9.0  # a tie across the lists: the first list's entry first
    order = np.argsort(-x, axis=1, kind="stable")
    for stage, (_, vals, idx) in _run_both(MERGE, torch.from_numpy(x), torch.zeros(1, 256),
                                           torch.zeros(1, 256, dtype=torch.int32)):
        np.testing.assert_array_equal(idx.numpy(), order, err_msg=stage)
        np.testing.assert_array_equal(vals.numpy(), np.take_along_axis(x, order, axis=1), err_msg=stage)


PICK = """
@pl.program
class Pick:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[1, 64], pl.FP32], pos: pl.Tensor[[1, 16], pl.INT32],
             out: pl.Out[pl.Tensor[[1, 16], pl.FP32]]) -> pl.Tensor[[1, 16], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            where = pl.adds(pos, 1)
            picked = pl.create_tensor([1, 16], dtype=pl.FP32)
            for k in pl.range(16):
                p = pl.read(where, [0, k])
                pl.write(picked, [0, k], pl.read(x, [0, pl.cast(p, target_type=pl.INDEX)]))
            out[:, :] = picked
        return out
"""


def test_writes_at_positions_read_from_a_tile_gather_by_index() -> None:
    x = _rand(1, 64, seed=6)
    pos = np.random.default_rng(6).integers(0, 63, (1, 16)).astype(np.int32)
    for stage, (_, _, out) in _run_both(PICK, torch.from_numpy(x), torch.from_numpy(pos), torch.zeros(1, 16)):
        np.testing.assert_array_equal(out.numpy(), x[:, pos[0] + 1], err_msg=stage)
