"""``predicate=`` on ``pl.submit`` / ``pl.spmd_submit`` and on the ``with pl.spmd(...)`` scope.

The orchestration evaluates the predicate at the dispatch point and submits the kernel only when it
holds; otherwise a dependency-only task with the same deps stands in, so the task id exists and its
consumers are released. A skipped kernel writes nothing (``orch_predicate``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import pypto.language as pl
from pypto import ir
from pypto.errors import ParserTypeError

SCOPE = """import pypto.language as pl

@pl.program
class Gated:
    @pl.function(type=pl.FunctionType.InCore)
    def fill(self, x: pl.Out[pl.Tensor[[8, 64], pl.FP32]]) -> pl.Tensor[[8, 64], pl.FP32]:
        return pl.store(pl.tile.full([8, 64], dtype=pl.FP32, value=1.0), [0, 0], x)

    @pl.function(type=pl.FunctionType.InCore)
    def bump(self, x: pl.InOut[pl.Tensor[[8, 64], pl.FP32]]) -> pl.Tensor[[8, 64], pl.FP32]:
        t = pl.load(x, [0, 0], [8, 64])
        return pl.store(pl.tile.adds(t, 10.0), [0, 0], x)

    @pl.function(type=pl.FunctionType.InCore)
    def copy(self, x: pl.Tensor[[8, 64], pl.FP32], out: pl.Out[pl.Tensor[[8, 64], pl.FP32]]) -> pl.Tensor[[8, 64], pl.FP32]:
        return pl.store(pl.load(x, [0, 0], [8, 64]), [0, 0], out)

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Out[pl.Tensor[[8, 64], pl.FP32]], gate: pl.Tensor[[8, 64], pl.INT32],
             out: pl.Out[pl.Tensor[[8, 64], pl.FP32]]) -> pl.Tensor[[8, 64], pl.FP32]:
        with pl.spmd(1) as t0:
            x = self.fill(x)
        with pl.spmd(1, deps=[t0], predicate=(gate[0, 0] > 0)) as t1:
            x = self.bump(x)
        with pl.spmd(1, deps=[t1]) as _:
            out = self.copy(x, out)
        return out
"""

SUBMIT = SCOPE.replace(
    """        with pl.spmd(1) as t0:
            x = self.fill(x)
        with pl.spmd(1, deps=[t0], predicate=(gate[0, 0] > 0)) as t1:
            x = self.bump(x)
        with pl.spmd(1, deps=[t1]) as _:
            out = self.copy(x, out)
""", """        with pl.manual_scope():
            x, t0 = pl.spmd_submit(self.fill, x, core_num=1)
            x, t1 = pl.submit(self.bump, x, deps=[t0], predicate=(gate[0, 0] > 0))
            out, _ = pl.spmd_submit(self.copy, x, out, core_num=1, deps=[t1])
""")


@pytest.mark.sim
@pytest.mark.parametrize("form", ["scope", "submit"])
@pytest.mark.parametrize("platform", ["a2a3sim", "a5sim"])
def test_the_task_runs_only_when_the_predicate_holds(form: str, platform: str, tmp_path: Path) -> None:
    assert "manual_scope" in SUBMIT
    compiled = ir.compile(pl.parse(SCOPE if form == "scope" else SUBMIT), output_dir=str(tmp_path),
                          platform=platform)
    cpp = (Path(compiled.output_dir) / "orchestration" / "main.cpp").read_text()
    assert "rt_submit_dummy_task" in cpp and "if (" in cpp
    for gate, want in ((0, 1.0), (3, 11.0)):
        x = np.zeros((8, 64), np.float32)
        out = np.zeros((8, 64), np.float32)
        compiled(x, np.full((8, 64), gate, np.int32), out)
        np.testing.assert_array_equal(out, np.full((8, 64), want, np.float32))


def test_the_scope_predicate_prints_and_parses_back() -> None:
    prog = pl.parse(SCOPE)
    text = prog.as_python()
    assert "predicate=predicate) as t1:" in text
    again = pl.parse(text)
    assert again.as_python() == text


@pytest.mark.parametrize("form", ["scope", "submit"])
def test_a_predicate_that_is_not_a_scalar_is_a_located_error(form: str) -> None:
    bad = (SCOPE.replace("predicate=(gate[0, 0] > 0)", "predicate=gate") if form == "scope"
           else SUBMIT.replace("predicate=(gate[0, 0] > 0)", "predicate=gate"))
    with pytest.raises(ParserTypeError) as ei:
        pl.parse(bad)
    assert "predicate=...) takes a boolean scalar" in ei.value.message
    assert ei.value.span.line == 23


def test_the_loop_form_takes_no_predicate() -> None:
    bad = SCOPE.replace("""        with pl.spmd(1) as t0:
            x = self.fill(x)""", """        for i in pl.spmd(1, predicate=True):
            x = self.fill(x)""")
    with pytest.raises(ParserTypeError) as ei:
        pl.parse(bad)
    assert "predicate= is only accepted by the `with pl.spmd(n" in ei.value.message
