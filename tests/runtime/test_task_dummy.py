"""``pl.system.task_dummy(deps=[...])``: a dependency join with no work, on both sim runtimes."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from rt_marks import needs_gxx

import pypto.language as pl
from pypto import ir
from pypto.errors import ParserTypeError, UserError
from pypto.runtime import ChipWorker, RunConfig

ROWS, COLS, STRIPE = 128, 32, 32


@pl.program
class TwoPhases:
    @pl.function(type=pl.FunctionType.InCore)
    def stripe(self, src: pl.Tensor[[ROWS, COLS], pl.FP32], row: pl.Scalar[pl.INDEX], add: pl.Scalar[pl.FP32],
               dst: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]) -> pl.Tensor[[ROWS, COLS], pl.FP32]:
        t: pl.Tile[[STRIPE, COLS], pl.FP32] = pl.load(src, [row, 0], [STRIPE, COLS])
        r: pl.Tile[[STRIPE, COLS], pl.FP32] = pl.add(t, add)
        ret: pl.Tensor[[ROWS, COLS], pl.FP32] = pl.store(r, [row, 0], dst)
        return ret

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[ROWS, COLS], pl.FP32],
             y: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]) -> pl.Tensor[[ROWS, COLS], pl.FP32]:
        with pl.manual_scope():
            first = pl.array.create(4, pl.TASK_ID)
            for b in pl.range(4):
                y, tid = pl.submit(self.stripe, x, b * STRIPE, 1.0, y)
                first[b] = tid
            gate = pl.system.task_dummy(deps=[first])
            for b in pl.range(4):
                y, tid2 = pl.submit(self.stripe, y, b * STRIPE, 10.0, y, deps=[gate])
        return y


def _compile(tmp_path: Path, runtime: str = "tensormap_and_ringbuffer"):
    return ir.compile(TwoPhases, output_dir=tmp_path / runtime, runtime=runtime)


def test_orchestration_submits_one_dummy_task_waiting_for_the_array(tmp_path: Path) -> None:
    c = ir.compile(TwoPhases, output_dir=tmp_path / "o", skip_ptoas=True)
    cpp = (Path(c.output_dir) / "orchestration" / "main.cpp").read_text()
    assert cpp.count("rt_submit_dummy_task(") == 1
    assert "params_t1_deps[params_t1_ndeps++] = first[first_k];" in cpp
    assert "PTO2TaskId gate = rt_submit_dummy_task(params_t1);" in cpp
    assert "PTO2TaskId params_t2_deps[1] = {gate};" in cpp


def test_printed_program_parses_back_with_deps_keyword() -> None:
    text = TwoPhases.as_python()
    assert "pl.system.task_dummy(deps=[first])" in text
    ir.assert_structural_equal(pl.parse(text), TwoPhases)


@needs_gxx
@pytest.mark.sim
@pytest.mark.parametrize("runtime", ["tensormap_and_ringbuffer", "host_build_graph"])
def test_consumers_wait_on_the_join_only(tmp_path: Path, runtime: str) -> None:
    c = _compile(tmp_path, runtime)
    x = np.random.default_rng(3).random((ROWS, COLS), dtype=np.float32)
    y = np.zeros_like(x)
    cfg = RunConfig(enable_dep_gen=True)
    with ChipWorker(cfg, runtime=runtime) as w:
        w.run(c, x, y, config=cfg)
    np.testing.assert_allclose(y, x + 11.0, rtol=1e-6, atol=0)
    deps = json.loads((Path(c.output_dir) / "dfx_outputs" / "deps.json").read_text())
    dummies = [int(t["task_id"]) for t in deps["tasks"] if all(k < 0 for k in t["kernel_ids"])]
    edges = {(int(e["pred"]), int(e["succ"])) for e in deps["edges"]}
    assert len(dummies) == 1, deps["tasks"]
    (gate,) = dummies
    preds = {p for p, s in edges if s == gate}
    succs = {s for p, s in edges if p == gate}
    assert len(preds) == 4 and len(succs) == 4
    assert not {(p, s) for p in preds for s in succs} & edges  # fan-in compressed: no producer->consumer edge


@pytest.mark.parametrize(("call", "message"), [
    ("pl.system.task_dummy(first)", "takes no positional arguments"),
    ("pl.system.task_dummy()", "needs deps=[...]"),
    ("pl.system.task_dummy(deps=[first], name='g')", "unexpected keyword argument 'name'"),
    ("pl.system.task_dummy(deps=[x])", "every dependency must be a task id"),
])
def test_bad_calls_are_located_user_errors(call: str, message: str) -> None:
    src = f"""import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 16], pl.FP32]) -> pl.Tensor[[16, 16], pl.FP32]:
        first = pl.array.create(2, pl.TASK_ID)
        gate = {call}
        return x
"""
    with pytest.raises(UserError, match=re.escape(message)) as ei:
        pl.parse(src)
    assert ei.value.span is not None and ei.value.span.line == 8
    if "positional" in message or "keyword" in message:
        assert isinstance(ei.value, ParserTypeError)


def test_task_dummy_inside_a_kernel_is_rejected(tmp_path: Path) -> None:
    src = """import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 16], pl.FP32], o: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        g = pl.system.task_dummy(deps=[])
        t = pl.load(x, [0, 0], [16, 16])
        o = pl.store(t, [0, 0], o)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 16], pl.FP32], o: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        o = self.k(x, o)
        return o
"""
    with pytest.raises(UserError, match="pl.system.task_dummy") as ei:
        ir.compile(pl.parse(src), output_dir=tmp_path / "o", skip_ptoas=True)
    assert ei.value.span is not None and ei.value.span.line == 7
