"""Internal errors the example fuzzing found, each pinned as a regression (in-process, no ptoas)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import UserError
from pypto.runtime import RunConfig


@pl.jit
def matmul_extra_arg(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        ta = pl.move(pl.load(a, [0, 0], [64, 64], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Left)
        tb = pl.move(pl.load(b, [0, 0], [64, 64], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Right)
        pl.store(pl.matmul(ta, tb, [0, 0]), [0, 0], c)  # a list where out_dtype goes
    return c


@pl.jit
def unread_task_id(a: pl.Tensor, b: pl.Tensor, out1: pl.Out[pl.Tensor], out2: pl.Out[pl.Tensor]):
    tmp = pl.create_tensor([64, 64], dtype=pl.FP32)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="scale") as t_scale:  # noqa: F841 - the id is never used
        tmp[:] = pl.mul(a, 2.0)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="combine"):
        out1[:] = pl.add(tmp, b)
        out2[:] = pl.add(b, 1.0)
    return out1, out2


def _cfg(tmp_path: Path) -> RunConfig:
    return RunConfig(save_kernels_dir=str(tmp_path / "out"))


def test_a_stray_positional_in_a_dtype_keyword_is_a_user_error(tmp_path: Path) -> None:
    x = np.zeros((64, 64), np.float32)
    with pytest.raises(UserError, match=r"'out_dtype' must be a dtype such as pl.FP32, got \(0, 0\)"):
        matmul_extra_arg.compile(x, x, x.copy(), config=_cfg(tmp_path))


def test_a_region_task_id_nothing_reads_compiles(tmp_path: Path) -> None:
    x = np.zeros((64, 64), np.float32)
    compiled = unread_task_id.compile(x, x, x.copy(), x.copy(), config=_cfg(tmp_path))
    orch = next((Path(compiled.output_dir) / "orchestration").glob("*.cpp")).read_text()
    assert orch.count("rt_submit_aiv_task(") == 2


@pl.jit
def negative_scratch(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        scratch = pl.create_tile([-64, 64], dtype=pl.FP32, target_memory=pl.Mem.Vec)
        pl.store(pl.row_sum(pl.load(x, [0, 0], [64, 64]), scratch), [0, 0], out)
    return out


def test_a_negative_tile_extent_is_a_user_error_not_a_ptoas_failure(tmp_path: Path) -> None:
    x = np.zeros((64, 64), np.float32)
    with pytest.raises(UserError, match=r"tile.create: 'shape' extent -64 on axis 0 must be positive"):
        negative_scratch.compile(x, np.zeros((64, 1), np.float32), config=_cfg(tmp_path))


@pl.jit
def int8_scratch(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [64, 64])
        scratch = pl.create_tile([64, 64], dtype=pl.INT8, target_memory=pl.Mem.Vec)
        pl.store(pl.row_expand_sub(t, pl.row_max(t, scratch)), [0, 0], out)
    return out


def test_a_reduction_scratch_of_another_dtype_is_a_user_error(tmp_path: Path) -> None:
    x = np.zeros((64, 64), np.float32)
    with pytest.raises(UserError, match=r"tile.row_max: scratch tile dtype INT8 does not match the operand's FP32"):
        int8_scratch.compile(x, x.copy(), config=_cfg(tmp_path))
