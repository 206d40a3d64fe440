"""pl.spmd, pl.array, pl.pipeline, pl.MemRef(..., slots=N)[k] and cross-layout tile.reshape, end to end.

Each program is compiled with ROUNDTRIP verification (every pass dump is printed, re-parsed and
compared), its .pto files go through the ptoas 0.1.1 dialect checker, and it runs on both CPU
simulation platforms with the result compared to numpy.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.errors import UserError
from pypto.ir import ForStmt, SpmdScopeStmt
from pypto.ir.enums import ForKind
from pypto.ir.options import VerificationLevel
from pypto.ir.printer import python_print
from pypto.ir.stmt import preorder
from pypto.ir.structural import assert_structural_equal

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "codegen"))
from ptocheck import checker, verify  # noqa: E402

PLATFORMS = ["a2a3sim", "a5sim"]
H = "import pypto.language as pl\n"
T = "pl.Tensor[[256, 64], pl.FP32]"
RNG = np.random.default_rng(7)


@pytest.fixture(autouse=True)
def _cwd(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


def _run(src: str, platform: str, *arrays: np.ndarray) -> ir.CompiledProgram:
    prog = pl.parse(H + src)
    assert_structural_equal(pl.parse(python_print(prog)), prog)
    compiled = ir.compile(prog, platform=platform, verification_level=VerificationLevel.ROUNDTRIP)
    if checker()[0] is not None:  # the dialect checker is optional here; the sim run below is not
        verify(*sorted(Path(compiled.output_dir).glob("ptoas/*.pto")))
    compiled(*arrays)
    return compiled


def _inputs(*shapes: tuple[int, ...]) -> list[np.ndarray]:
    return [RNG.standard_normal(s).astype(np.float32) for s in shapes]


def _orch(compiled: ir.CompiledProgram) -> str:
    return next(Path(compiled.output_dir).glob("orchestration/*.cpp")).read_text()


SPMD_LOOP = f"""
@pl.program
class SpmdLoop:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: {T}, b: {T}, out: pl.Out[{T}]) -> {T}:
        for i in pl.spmd(4):
            off = i * 64
            out = pl.store(pl.add(pl.load(a, [off, 0], [64, 64]), pl.load(b, [off, 0], [64, 64])), [off, 0], out)
        return out
"""


@pytest.mark.parametrize("platform", PLATFORMS)
def test_spmd_loop_runs_one_task_of_n_blocks(platform):
    a, b = _inputs((256, 64), (256, 64))
    out = np.zeros((256, 64), np.float32)
    compiled = _run(SPMD_LOOP, platform, a, b, out)
    np.testing.assert_allclose(out, a + b, rtol=1e-6, atol=1e-6)  # every block wrote its own rows
    cpp = _orch(compiled)
    setter = "set_core_num" if platform == "a5sim" else "set_block_num"  # a5's runtime names it core_num
    assert cpp.count("rt_submit_aiv_task") == 1 and f"launch_spec.{setter}(4);" in cpp
    pto = next(Path(compiled.output_dir).glob("ptoas/*.pto")).read_text()
    assert "pto.get_block_idx" in pto and "arith.index_cast" in pto


SPMD_WITH = f"""
@pl.program
class SpmdWith:
    @pl.function(type=pl.FunctionType.InCore)
    def scale_rows(self, a: {T}, out: pl.Out[{T}]) -> {T}:
        i = pl.tile.get_block_idx()
        out = pl.store(pl.mul(pl.load(a, [i * 64, 0], [64, 64]), 2.0), [i * 64, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: {T}, out: pl.Out[{T}]) -> {T}:
        tmp = pl.create_tensor([256, 64], dtype=pl.FP32)
        with pl.spmd(core_num=4) as first:
            tmp = self.scale_rows(a, tmp)
        with pl.spmd(4, name_hint="plus_one", sync_start=True, deps=[first]) as second:
            k = pl.tile.get_block_idx()
            out = pl.store(pl.add(pl.load(tmp, [k * 64, 0], [64, 64]), 1.0), [k * 64, 0], out)
        return out
"""


@pytest.mark.parametrize("platform", PLATFORMS)
def test_spmd_with_dispatch_and_inline_forms(platform):
    (a,) = _inputs((256, 64))
    out = np.zeros((256, 64), np.float32)
    compiled = _run(SPMD_WITH, platform, a, out)
    np.testing.assert_allclose(out, a * 2 + 1, rtol=1e-6, atol=1e-6)
    cpp = _orch(compiled)
    assert cpp.count("_num(4);") == 2 and "set_require_sync_start(true);" in cpp
    assert "set_dependencies" in cpp and "plus_one" in cpp


def test_spmd_scope_is_kept_until_outlining_and_prints_back():
    prog = pl.parse(H + SPMD_WITH)
    scopes = [s for s in preorder(prog["main"].body) if isinstance(s, SpmdScopeStmt)]
    assert [s.task_var is not None for s in scopes] == [True, True]
    assert scopes[1].sync_start and scopes[1].deps and ir.python_print(prog).count("pl.spmd(4") == 2


ARRAY_DEPS = f"""
@pl.program
class ArrayDeps:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: {T}, out: pl.Out[{T}]) -> {T}:
        scratch = pl.create_tensor([256, 64], dtype=pl.FP32)
        writers: pl.Array[4, pl.TASK_ID] = pl.array.create(4, pl.TASK_ID)
        for i in pl.range(4):
            with pl.at(level=pl.Level.CORE_GROUP) as tid:
                scratch = pl.store(pl.muls(pl.load(a, [i * 64, 0], [64, 64]), 3.0), [i * 64, 0], scratch)
            writers[i] = tid
        last = writers[3]
        with pl.at(level=pl.Level.CORE_GROUP, deps=[writers, last]):
            for j in pl.range(4):
                out = pl.store(pl.load(scratch, [j * 64, 0], [64, 64]), [j * 64, 0], out)
        return out
"""


@pytest.mark.parametrize("platform", PLATFORMS)
def test_task_id_array_feeds_deps(platform):
    (a,) = _inputs((256, 64))
    out = np.zeros((256, 64), np.float32)
    compiled = _run(ARRAY_DEPS, platform, a, out)
    np.testing.assert_allclose(out, a * 3, rtol=1e-6, atol=1e-6)
    cpp = _orch(compiled)
    assert "PTO2TaskId writers[4];" in cpp and "writers[i] = task_0_outs.task_id();" in cpp
    assert "PTO2TaskId params_t1_deps[5];" in cpp


PIPELINE_TAIL = """
@pl.program
class PipeTail:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[448, 64], pl.FP32], out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            acc0 = pl.tile.full([64, 64], 0.0, dtype=pl.FP32)
            for i, (acc,) in pl.pipeline(7, stage=3, init_values=(acc0,)):
                acc_next = pl.add(acc, pl.load(a, [i * 64, 0], [64, 64]))
                acc_out = pl.yield_(acc_next)
            out = pl.store(acc_out, [0, 0], out)
        return out
"""

PIPELINE_DYNAMIC = """
@pl.program
class PipeDyn:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[320, 64], pl.FP32], n: pl.Scalar[pl.INDEX],
             out: pl.Out[pl.Tensor[[320, 64], pl.FP32]]) -> pl.Tensor[[320, 64], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            for i in pl.pipeline(n, stage=2):
                out = pl.store(pl.exp(pl.load(a, [i * 64, 0], [64, 64])), [i * 64, 0], out)
        return out
"""


def _kernel_loops(compiled: ir.CompiledProgram) -> list[ForStmt]:
    text = sorted(Path(compiled.output_dir).glob("passes_dump/*LowerPipelineLoops*.py"))[-1].read_text()
    prog = pl.parse(text)
    return [s for f in prog.functions for s in preorder(f.body) if isinstance(s, ForStmt)]


@pytest.mark.parametrize("platform", PLATFORMS)
def test_pipeline_static_tail_with_a_carried_tile(platform):
    (a,) = _inputs((448, 64))
    out = np.zeros((64, 64), np.float32)
    compiled = _run(PIPELINE_TAIL, platform, a, out)
    np.testing.assert_allclose(out, a.reshape(7, 64, 64).sum(0), rtol=1e-5, atol=1e-5)
    loops = [lp for lp in _kernel_loops(compiled) if lp.kind is ForKind.Pipeline]
    assert len(loops) == 1 and loops[0].attrs["pipeline_stages"] == 1  # lowered: 2 iterations of 3 + 1 tail
    assert (loops[0].stop.value, loops[0].step.value) == (6, 3)
    pto = next(Path(compiled.output_dir).glob("ptoas/*.pto")).read_text()
    loop_body = pto.split("scf.for")[1].split("\n    }")[0]
    load_bufs = re.findall(r"pto\.tload ins\([^)]*\) outs\(%(\w+)", loop_body)
    assert len(load_bufs) == 3 and len(set(load_bufs)) == 3  # every stage loads into its own buffer


@pytest.mark.parametrize("platform", PLATFORMS)
def test_pipeline_dynamic_bound_guards_the_later_stages(platform):
    (a,) = _inputs((320, 64))
    out = np.zeros((320, 64), np.float32)
    compiled = _run(PIPELINE_DYNAMIC, platform, a, np.int64(5), out)
    want = np.zeros_like(a)
    want[:320] = np.exp(a)
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)
    pto = next(Path(compiled.output_dir).glob("ptoas/*.pto")).read_text()
    assert "scf.if" in pto and pto.count("pto.tload") == 2  # stage 1 runs only while i + 1 < n


def test_pipeline_dynamic_bound_partial_trip():
    (a,) = _inputs((320, 64))
    out = np.zeros((320, 64), np.float32)
    _run(PIPELINE_DYNAMIC, "a2a3sim", a, np.int64(3), out)
    np.testing.assert_allclose(out[:192], np.exp(a[:192]), rtol=1e-5, atol=1e-5)
    assert not out[192:].any()  # the guard skipped stage 1 of the last group


SLOTS = """
@pl.program
class Slots:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[320, 64], pl.FP32], out: pl.Out[pl.Tensor[[320, 64], pl.FP32]]) -> pl.Tensor[[320, 64], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            for i in pl.range(5):
                t: pl.Tile[[64, 64], pl.FP32, pl.MemRef("ub", slots=2)[i % 2], pl.Mem.Vec] = pl.load(a, [i * 64, 0], [64, 64])
                out = pl.store(pl.exp(t), [i * 64, 0], out)
        return out
"""


@pytest.mark.parametrize("platform", PLATFORMS)
def test_memref_slots_unroll_the_loop_so_each_slot_owns_a_buffer(platform):
    (a,) = _inputs((320, 64))
    out = np.zeros((320, 64), np.float32)
    compiled = _run(SLOTS, platform, a, out)
    np.testing.assert_allclose(out, np.exp(a), rtol=1e-5, atol=1e-5)
    dump = sorted(Path(compiled.output_dir).glob("passes_dump/*LowerPipelineLoops*.py"))[-1].read_text()
    assert dump.count("slots=2)[0]") == 2 and dump.count("slots=2)[1]") == 1 and "% 2" not in dump
    pto = next(Path(compiled.output_dir).glob("ptoas/*.pto")).read_text()
    assert pto.count("pto.tload") == 3 and "arith.remsi" not in pto


SLOTS_SHARED = SLOTS.replace("pl.range(5)", "pl.range(k, 5)").replace(
    "out: pl.Out[pl.Tensor[[320, 64], pl.FP32]])", "k: pl.Scalar[pl.INDEX], out: pl.Out[pl.Tensor[[320, 64], pl.FP32]])")


def test_memref_slot_that_cannot_be_resolved_shares_one_buffer():
    (a,) = _inputs((320, 64))
    out = np.zeros((320, 64), np.float32)
    compiled = _run(SLOTS_SHARED, "a2a3sim", a, np.int64(1), out)
    np.testing.assert_allclose(out[64:], np.exp(a[64:]), rtol=1e-5, atol=1e-5)
    assert not out[:64].any()
    dump = sorted(Path(compiled.output_dir).glob("passes_dump/*LowerPipelineLoops*.py"))[-1].read_text()
    assert "slots=2)[0]" in dump and "% 2" not in dump


RESHAPE = """
@pl.program
class Reshape:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, a: pl.Tensor[[32, 64], pl.FP32], out: pl.Out[pl.Tensor[[1, 32], pl.FP32]]) -> pl.Tensor[[1, 32], pl.FP32]:
        s: pl.Tile[[32, 1], pl.FP32] = pl.row_sum(pl.load(a, [0, 0], [32, 64]))
        r: pl.Tile[[1, 32], pl.FP32] = pl.reshape(s, [1, 32])
        out = pl.store(pl.muls(r, 2.0), [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[32, 64], pl.FP32], out: pl.Out[pl.Tensor[[1, 32], pl.FP32]]) -> pl.Tensor[[1, 32], pl.FP32]:
        out = self.k(a, out)
        return out
"""


@pytest.mark.parametrize("platform", PLATFORMS)
def test_reshape_column_vector_to_row_vector_uses_treshape(platform):
    (a,) = _inputs((32, 64))
    out = np.zeros((1, 32), np.float32)
    compiled = _run(RESHAPE, platform, a, out)
    np.testing.assert_allclose(out[0], a.sum(1) * 2, rtol=1e-5, atol=1e-5)
    assert "pto.treshape" in next(Path(compiled.output_dir).glob("ptoas/*.pto")).read_text()


SUBMIT = f"""
@pl.program
class Submit:
    @pl.function(type=pl.FunctionType.InCore)
    def scale(self, a: {T}, out: pl.Out[{T}]) -> {T}:
        i = pl.tile.get_block_idx()
        out = pl.store(pl.muls(pl.load(a, [i * 64, 0], [64, 64]), 2.0), [i * 64, 0], out)
        return out

    @pl.function(type=pl.FunctionType.InCore)
    def inc(self, a: {T}, out: pl.Out[{T}]) -> {T}:
        out = pl.store(pl.adds(pl.load(a, [0, 0], [256, 64]), 1.0), [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: {T}, out: pl.Out[{T}]) -> {T}:
        with pl.manual_scope():
            tmp = pl.create_tensor([256, 64], dtype=pl.FP32)
            r = pl.spmd_submit(self.scale, a, tmp, core_num=4, allow_early_resolve=True)
            s = pl.submit(self.inc, r[0], out, deps=[r[1]])
        return s[0]
"""


@pytest.mark.parametrize("platform", PLATFORMS)
def test_submit_and_spmd_submit_yield_the_task_id(platform):
    (a,) = _inputs((256, 64))
    out = np.zeros((256, 64), np.float32)
    compiled = _run(SUBMIT, platform, a, out)
    np.testing.assert_allclose(out, a * 2 + 1, rtol=1e-6, atol=1e-6)
    cpp = _orch(compiled)
    assert "params_t0.launch_spec.set_" in cpp and "params_t0.set_allow_early_resolve(true);" in cpp
    assert "PTO2TaskId params_t1_deps[1] = {task_0_outs.task_id()};" in cpp


@pytest.mark.parametrize(("call", "message"), [
    ("pl.spmd_submit(self.scale, a, tmp)", "pl.spmd_submit() needs core_num=<positive integer>"),
    ("pl.submit(self.scale, a, tmp, core_num=2)", "pl.submit() takes no core_num=/sync_start=; use pl.spmd_submit"),
    ("pl.submit(a, tmp)", "pl.submit() launches a kernel: its first argument must be a function"),
])
def test_submit_misuse(call, message):
    src = H + SUBMIT.replace("pl.spmd_submit(self.scale, a, tmp, core_num=4, allow_early_resolve=True)", call)
    with pytest.raises(UserError) as ei:
        pl.parse(src)
    assert message in ei.value.message


PIPELINE_DYNAMIC_CARRY = """
@pl.program
class PipeDynCarry:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[320, 64], pl.FP32], n: pl.Scalar[pl.INDEX],
             out: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            acc0 = pl.tile.full([64, 64], 0.0, dtype=pl.FP32)
            for i, (acc,) in pl.pipeline(n, stage=2, init_values=(acc0,)):
                nxt = pl.add(acc, pl.load(a, [i * 64, 0], [64, 64]))
                total = pl.yield_(nxt)
            out = pl.store(total, [0, 0], out)
        return out
"""


@pytest.mark.parametrize(("platform", "n"), [("a2a3sim", 5), ("a5sim", 4), ("a2a3sim", 1)])
def test_pipeline_dynamic_bound_with_a_carried_tile(platform, n):
    (a,) = _inputs((320, 64))
    out = np.zeros((64, 64), np.float32)
    _run(PIPELINE_DYNAMIC_CARRY, platform, a, np.int64(n), out)
    np.testing.assert_allclose(out, a[: n * 64].reshape(n, 64, 64).sum(0), rtol=1e-5, atol=1e-5)


SPMD_BLOCK_NUM = f"""
@pl.program
class SpmdBlockNum:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: {T}, tail: pl.Out[pl.Tensor[[64, 64], pl.FP32]]) -> pl.Tensor[[64, 64], pl.FP32]:
        for i in pl.spmd(4):
            n = pl.tile.get_block_num()
            if i == n - 1:
                tail = pl.store(pl.load(a, [i * 64, 0], [64, 64]), [0, 0], tail)
        return tail
"""


@pytest.mark.parametrize("platform", PLATFORMS)
def test_spmd_blocks_see_the_block_count(platform):
    (a,) = _inputs((256, 64))
    tail = np.zeros((64, 64), np.float32)
    compiled = _run(SPMD_BLOCK_NUM, platform, a, tail)
    np.testing.assert_array_equal(tail, a[192:])  # only block n-1 stored
    assert "pto.get_block_num" in next(Path(compiled.output_dir).glob("ptoas/*.pto")).read_text()


SPMD_STRIDED = """
@pl.program
class SpmdStrided:
    @pl.function(type=pl.FunctionType.InCore)
    def rows(self, a: pl.Tensor[[448, 64], pl.FP32], n: pl.Scalar[pl.INDEX],
             out: pl.Out[pl.Tensor[[448, 64], pl.FP32]]) -> pl.Tensor[[448, 64], pl.FP32]:
        first = pl.tile.get_block_idx()
        stride = pl.tile.get_block_num()
        for b in pl.range(first, n, stride):
            out = pl.store(pl.exp(pl.load(a, [b * 64, 0], [64, 64])), [b * 64, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[448, 64], pl.FP32], n: pl.Scalar[pl.INDEX],
             out: pl.Out[pl.Tensor[[448, 64], pl.FP32]]) -> pl.Tensor[[448, 64], pl.FP32]:
        with pl.spmd(3):
            out = self.rows(a, n, out)
        return out
"""


@pytest.mark.parametrize("platform", PLATFORMS)
def test_spmd_strided_loop_over_blocks(platform):
    (a,) = _inputs((448, 64))
    out = np.zeros((448, 64), np.float32)
    compiled = _run(SPMD_STRIDED, platform, a, np.int64(7), out)
    np.testing.assert_allclose(out, np.exp(a), rtol=1e-5, atol=1e-5)  # blocks 0..2 took rows b, b+3, b+6
    pto = next(Path(compiled.output_dir).glob("ptoas/*.pto")).read_text()
    assert "pto.get_block_idx" not in pto and "arith.index_cast" not in pto  # ids arrive as index args
    kernel = next(Path(compiled.output_dir).glob("kernels/aiv/*.cpp")).read_text()
    assert "get_block_idx(args)" in kernel and "get_block_num(args)" in kernel


@pl.jit.incore
def _exp_rows(a: pl.Tensor, out: pl.Out[pl.Tensor]):
    i = pl.tile.get_block_idx()
    out = pl.store(pl.exp(pl.load(a, [i * 64, 0], [64, 64])), [i * 64, 0], out)
    return out


@pl.jit
def _spmd_dispatch(a: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.spmd(4):
        out = _exp_rows(a, out)
    return out


@pytest.mark.parametrize("platform", PLATFORMS)
def test_jit_entry_dispatches_a_jit_kernel_over_spmd_blocks(platform):
    from pypto.runtime import RunConfig

    (a,) = _inputs((256, 64))
    out = np.zeros((256, 64), np.float32)
    _spmd_dispatch(a, out, config=RunConfig(platform=platform))
    np.testing.assert_allclose(out, np.exp(a), rtol=1e-5, atol=1e-5)
