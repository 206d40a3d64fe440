"""A kernel whose tile buffers overflow the core's UB in ptoas 0.1.1 (its PlanMemory shares bytes only between
tiles of one dtype) is cut into tasks, its tiles crossing through GM; one whose buffers only add up past the
capacity stays whole; one that cannot be cut gets a located error with the bytes."""

from __future__ import annotations

import numpy as np
import pytest
from cut_helpers import FRONT, front, program_calls, run_passes

import pypto.language as pl
from pypto.codegen.ub_budget import UB_BYTES, ub_bytes, ub_overflows
from pypto.errors import UserError
from pypto.ir import MemoryPlanner
from pypto.passes._ub_cut import region_key, ub_cut_plan
from pypto.runtime import RunConfig, run

# two phases of 64 KiB tiles of different shapes (MemoryReuse shares a buffer only between equal tiles):
# 256 KiB of buffers in one kernel, past a2a3's 192 KiB and a5's 248 KiB; 128 KiB in each half
TWO = '''
import pypto.language as pl

@pl.program
class TwoPhases:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[32, 512], pl.FP32], y: pl.Tensor[[64, 256], pl.FP32],
             out: pl.Out[pl.Tensor[[32, 1], pl.FP32]]) -> pl.Tensor[[32, 1], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            a = x[:, :]
            b = pl.mul(a, 2.0)
            c = pl.add(a, b)
            s1 = pl.row_sum(c)
            d = y[:, :]
            e = pl.mul(d, 3.0)
            f = pl.add(d, e)
            s2 = pl.row_sum(f)
            t = pl.row_sum(pl.reshape(s2, [32, 2]))
            out[:, :] = pl.add(s1, t)
        return out
'''

# the same phases in a loop over two row blocks, each storing into an output: the loop is the kernel's only
# statement, so there is nowhere to cut
LOOP = '''
import pypto.language as pl

@pl.program
class Loop:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[64, 512], pl.FP32], y: pl.Tensor[[128, 256], pl.FP32],
             o1: pl.Out[pl.Tensor[[64, 512], pl.FP32]], o2: pl.Out[pl.Tensor[[128, 256], pl.FP32]]):
        with pl.at(level=pl.Level.CORE_GROUP):
            for i in pl.range(2):
                a = x[i * 32 : i * 32 + 32, :]
                o1[i * 32 : i * 32 + 32, :] = pl.add(a, pl.mul(a, 2.0))
                d = y[i * 64 : i * 64 + 64, :]
                o2[i * 64 : i * 64 + 64, :] = pl.add(d, pl.mul(d, 3.0))
        return o1, o2
'''


# the second phase in INT32 (ptoas shares no bytes between tiles of different dtypes): a2a3's PlanMemory really
# overflows, so the kernel is cut between the phases; a5's 248 KiB holds it whole
TWO_DTYPES = TWO.replace("y: pl.Tensor[[64, 256], pl.FP32]", "y: pl.Tensor[[64, 256], pl.INT32]").replace(
    "e = pl.mul(d, 3.0)", "e = pl.mul(d, 3)").replace(
    "s2 = pl.row_sum(f)", "s2 = pl.row_sum(pl.cast(f, pl.FP32))")

CAPACITY = {"a2a3sim": 192 * 1024, "a5sim": 248 * 1024}


def _inputs() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(7)
    return (rng.standard_normal((32, 512)).astype(np.float32), rng.standard_normal((64, 256)).astype(np.float32))


def test_without_a_plan_the_kernel_stays_whole() -> None:
    prog = front(TWO)
    assert program_calls(prog.get_function("main")) == ["main_incore_0"]


def test_a_plan_cuts_the_kernel_between_the_phases() -> None:
    plain = front(TWO, FRONT[:-1])
    key = region_key(plain.get_function("main_incore_0").span)
    with ub_cut_plan({key: 2}):
        prog = run_passes(plain, FRONT[-1:])
    assert program_calls(prog.get_function("main")) == ["main_incore_0_head", "main_incore_0"]
    head, rest = prog.get_function("main_incore_0_head"), prog.get_function("main_incore_0")
    assert [p.name for p in head.params[-1:]] == ["s1_gm"]  # only the row sums cross, not a 64 KiB tile
    assert "x" not in {p.name for p in rest.params}


def test_the_budget_counts_top_level_buffers_rounded_to_32_bytes() -> None:
    spec = next(iter(UB_BYTES))
    body = ("  func.func @k(%arg0: index) {\n"
            "    %a = pto.alloc_tile : !pto.tile_buf<loc=ub, dtype=f32, rows=1, cols=1, v_row=1, v_col=1>\n"
            "    %b = pto.alloc_tile : !pto.tile_buf<loc=ub, dtype=f16, rows=128, cols=512, v_row=128, v_col=512>\n"
            "    scf.for %i = %c0 to %c1 step %c1 {\n"
            "      %c = pto.alloc_tile : !pto.tile_buf<loc=ub, dtype=f32, rows=64, cols=64, v_row=64, v_col=64>\n"
            "    }\n"
            "    %m = pto.alloc_tile : !pto.tile_buf<loc=mat, dtype=f32, rows=64, cols=64, v_row=64, v_col=64>\n")
    assert ub_bytes(body) == 32 + 128 * 512 * 2
    module = f'module attributes {{"pto.device-spec" = "{spec}"}} {{\n{body}  }}\n}}\n'
    assert ub_overflows(module) == []
    over = ub_overflows(module.replace("cols=512", "cols=1024"))
    assert [(o.func, o.needed, o.available) for o in over] == [("k", 32 + 128 * 1024 * 2, UB_BYTES[spec])]


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_the_cut_kernel_matches_numpy(platform: str) -> None:
    x, y = _inputs()
    out = np.zeros((32, 1), np.float32)
    run(pl.parse_program(TWO), x, y, out, config=RunConfig(platform=platform))
    want = 3 * x.sum(1, keepdims=True) + (4 * y.sum(1)).reshape(32, 2).sum(1, keepdims=True)
    np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_a_kernel_that_cannot_be_cut_names_its_bytes_and_region(platform: str) -> None:
    x, y = np.ones((64, 512), np.float32), np.ones((128, 256), np.float32)
    with pytest.raises(UserError) as err:
        run(pl.parse_program(LOOP), x, y, np.zeros_like(x), np.zeros_like(y), config=RunConfig(platform=platform))
    text = str(err.value)
    assert "kernel 'main_incore_0" in text and "needs 262144 bytes (256.0 KiB)" in text and "of on-chip vector memory (UB)" in text
    assert f"the {platform} vector core has {CAPACITY[platform]}" in text and "split the pl.at" in text
    assert ":9:9:" in text  # the pl.at line
    assert err.value.__context__ is None  # not chained to the driver's internal retry signal


def _kernels(tmp_path) -> list[str]:
    return sorted(p.stem for p in tmp_path.rglob("*.pto"))


@pytest.mark.parametrize(("platform", "cut"), [("a2a3sim", True), ("a5sim", False)])
def test_a_kernel_is_cut_only_when_ptoas_reports_the_overflow(platform: str, cut: bool, tmp_path) -> None:
    x = _inputs()[0]
    y = np.random.default_rng(3).integers(-5, 5, (64, 256)).astype(np.int32)
    out = np.zeros((32, 1), np.float32)
    run(pl.parse_program(TWO_DTYPES), x, y, out, config=RunConfig(platform=platform, save_kernels_dir=str(tmp_path)))
    want = 3 * x.sum(1, keepdims=True) + (4 * y.sum(1)).reshape(32, 2).sum(1, keepdims=True)
    np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-3)
    assert ("main_incore_0_head" in _kernels(tmp_path)) is cut


def test_buffers_past_the_capacity_that_ptoas_fits_stay_whole(tmp_path) -> None:
    # 256 KiB of FP32 buffers in two phases: their sum is over a2a3's 192 KiB, but ptoas shares bytes between
    # the phases' equal-dtype tiles, so nothing is cut
    x, y = _inputs()
    out = np.zeros((32, 1), np.float32)
    run(pl.parse_program(TWO), x, y, out, config=RunConfig(platform="a2a3sim", save_kernels_dir=str(tmp_path)))
    assert _kernels(tmp_path) == ["main_incore_0"]


def test_under_ptoas_the_kernel_stays_whole_and_ptoas_plans_its_lifetimes(tmp_path) -> None:
    # addr-less tiles: ptoas 0.1.1 shares bytes between tiles that are not live together, so the buffers' sum
    # (256 KiB) is no overflow and nothing is cut; a5's 248 KiB holds the larger phase
    x, y = _inputs()
    out = np.zeros((32, 1), np.float32)
    compiled = pl.parse_program(TWO)
    config = RunConfig(platform="a5sim", memory_planner=MemoryPlanner.PTOAS, save_kernels_dir=str(tmp_path))
    run(compiled, x, y, out, config=config)
    want = 3 * x.sum(1, keepdims=True) + (4 * y.sum(1)).reshape(32, 2).sum(1, keepdims=True)
    np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-3)
    kernels = sorted(p.stem for p in tmp_path.rglob("*.pto"))
    assert kernels and not any(k.endswith("_head") for k in kernels), kernels
