"""Kernel shapes of an A8W8 decode layer: a concat cast before its store, two int8 accumulations whose
weight blocks exceed L0B, and a mixed (cube + vector) launch bound to a task id."""

from __future__ import annotations

import numpy as np
import pytest

import pypto.language as pl
from pypto.errors import PyptoError
from pypto.runtime import RunConfig, run

PLATFORMS = ["a2a3sim", "a5sim"]

CONCAT = '''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 64], pl.FP32], b: pl.Tensor[[16, 64], pl.FP32],
             out: pl.Out[pl.Tensor[[16, 128], pl.FP16]]) -> pl.Tensor[[16, 128], pl.FP16]:
        with pl.at(level=pl.Level.CORE_GROUP):
            c = pl.concat(pl.add(a, a), pl.mul(b, b))
            out = pl.assemble(out, pl.cast(pl.mul(c, 0.5), target_type=pl.FP16), [0, 0])
        return out
'''


@pytest.mark.parametrize("platform", PLATFORMS)
def test_ops_on_a_concat_run_on_its_halves(platform: str) -> None:
    rng = np.random.default_rng(7)
    a, b = rng.standard_normal((16, 64)).astype(np.float32), rng.standard_normal((16, 64)).astype(np.float32)
    out = np.zeros((16, 128), np.float16)
    run(pl.parse(CONCAT), a, b, out, config=RunConfig(platform=platform))
    want = (np.concatenate([a + a, b * b], axis=1) * 0.5).astype(np.float16)
    np.testing.assert_allclose(out.astype(np.float32), want.astype(np.float32), rtol=1e-3, atol=1e-3)


def test_a_concat_as_a_binary_operand_keeps_the_located_error() -> None:
    text = CONCAT.replace("pl.cast(pl.mul(c, 0.5), target_type=pl.FP16)", "pl.cast(pl.add(c, c), target_type=pl.FP16)")
    z = np.zeros((16, 64), np.float32)
    with pytest.raises(PyptoError, match=r"tile\.concat.*is used as a tile operand") as exc:
        run(pl.parse(text), z, z, np.zeros((16, 128), np.float16))
    assert ":11:" in str(exc.value)  # the use, where the joined tile would be needed


GATE_UP = '''
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 1024], pl.INT8], wg: pl.Tensor[[1024, 256], pl.INT8],
             wu: pl.Tensor[[1024, 256], pl.INT8], out: pl.Out[pl.Tensor[[16, 256], pl.FP32]],
             out2: pl.Out[pl.Tensor[[16, 256], pl.FP32]],
             ) -> tuple[pl.Tensor[[16, 256], pl.FP32], pl.Tensor[[16, 256], pl.FP32]]:
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="gate_up") as tid:
            g = pl.matmul(x[:, 0:512], wg[0:512, :], out_dtype=pl.INT32)  # a [512, 256] int8 block: 128 KiB
            u = pl.matmul(x[:, 0:512], wu[0:512, :], out_dtype=pl.INT32)
            for kk in pl.range(512, 1024, 512):
                a = x[:, kk:kk + 512]
                g = pl.matmul_acc(g, a, wg[kk:kk + 512, :])
                u = pl.matmul_acc(u, a, wu[kk:kk + 512, :])
            s = pl.add(pl.cast(g, target_type=pl.FP32), pl.mul(pl.cast(u, target_type=pl.FP32), 0.5))
            out = pl.assemble(out, s, [0, 0])
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="after", deps=[tid]):
            out2 = pl.assemble(out2, pl.mul(out, 2.0), [0, 0])
        return out, out2
'''


def test_the_weight_blocks_are_chained_over_k_within_l0b() -> None:
    from pypto.driver import lower
    from pypto.ir.stmt import AssignStmt, preorder

    program = lower(pl.parse(GATE_UP))
    calls = [s.value for f in program.functions if f.is_incore for s in preorder(f.body)
             if isinstance(s, AssignStmt) and getattr(s.value, "op", None) in ("tile.load", "tile.matmul_acc")]
    loads = [c.type.nbytes() for c in calls if c.op == "tile.load"]
    assert max(loads) <= 32 * 1024  # half of L0B: [128, 256] int8 blocks
    assert sum(c.op == "tile.matmul_acc" for c in calls) >= 2 * (4 - 1) + 2 * 4  # both chains, in and before the loop


@pytest.mark.parametrize("platform", PLATFORMS)
def test_two_int8_accumulations_and_a_task_id_match_numpy(platform: str) -> None:
    rng = np.random.default_rng(8)
    x = rng.integers(-4, 5, (16, 1024)).astype(np.int8)
    wg, wu = (rng.integers(-4, 5, (1024, 256)).astype(np.int8) for _ in range(2))
    out, out2 = np.zeros((16, 256), np.float32), np.zeros((16, 256), np.float32)
    run(pl.parse(GATE_UP), x, wg, wu, out, out2, config=RunConfig(platform=platform))
    xi = x.astype(np.int64)
    want = (xi @ wg.astype(np.int64) + 0.5 * (xi @ wu.astype(np.int64))).astype(np.float32)
    np.testing.assert_array_equal(out, want)
    np.testing.assert_array_equal(out2, want * 2)


def test_a_mixed_launch_bound_to_a_task_id_joins_its_stage_tasks() -> None:
    from pypto.driver import lower
    from pypto.ir.stmt import AssignStmt, preorder

    main = next(f for f in lower(pl.parse(GATE_UP)).functions if f.name == "main")
    values = [s.value for s in preorder(main.body) if isinstance(s, AssignStmt)]
    join = next(v for v in values if getattr(v, "op", None) == "system.task_dummy")
    assert len(join.args[0].elements) == 2  # the cube stage's task and the vector stage's
    after = next(v for v in values if getattr(getattr(v, "op", None), "name", None) == "after")
    assert len(after.attrs["manual_dep_edges"]) == 1
