"""pypto.debug: torch_codegen renders IR as runnable PyTorch; validate_ir names the pass that diverges."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

import pypto.language as pl
from pypto.debug import torch_codegen, validate_pass_ir_codegen_results
from pypto.debug.torch_codegen import RULES
from pypto.ir.ops.registry import all_ops
from pypto.runtime import RunConfig

torch = pytest.importorskip("torch", reason="torch is not installed (pip install torch==2.13.0)")

ROWS, COLS = 32, 64


@pl.jit
def softmax_rows(x: pl.Tensor[[ROWS, COLS], pl.FP32], out: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        t = pl.load(x, [0, 0], [ROWS, COLS])
        m = pl.row_max(t)
        e = pl.exp(pl.row_expand_sub(t, m))
        s = pl.row_sum(e)
        pl.store(pl.row_expand_div(e, s), [0, 0], out)
    return out


@pl.jit
def looped(x: pl.Tensor[[64, COLS], pl.FP32], y: pl.Tensor[[64, COLS], pl.FP32],
           out: pl.Out[pl.Tensor[[64, COLS], pl.FP32]]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for r in pl.range(0, 64, 16):
            a = pl.load(x, [r, 0], [16, COLS])
            b = pl.load(y, [r, 0], [16, COLS])
            pl.store(pl.relu(pl.add(pl.muls(a, 3.0), b)), [r, 0], out)
    return out


def _softmax(x: torch.Tensor) -> torch.Tensor:
    return torch.softmax(x, dim=-1)


@pytest.fixture(autouse=True)
def _workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def test_every_registry_op_has_a_rule() -> None:
    torch_codegen(looped.lower(torch.zeros(64, COLS), torch.zeros(64, COLS), torch.zeros(64, COLS)))
    assert set(all_ops()) <= set(RULES), sorted(set(all_ops()) - set(RULES))


def test_lowered_program_runs_and_matches_torch() -> None:
    x = torch.randn(ROWS, COLS)
    src = torch_codegen(softmax_rows.lower(x, torch.zeros(ROWS, COLS)), check_shapes=True)
    assert "import torch" in src and "def softmax_rows(" in src and "_check(" in src
    ns: dict = {}
    exec(src, ns)  # noqa: S102
    out = torch.zeros(ROWS, COLS)
    ns["softmax_rows"](x, out)
    torch.testing.assert_close(out, _softmax(x), rtol=1e-5, atol=1e-6)


def test_loops_and_function_input() -> None:
    x, y = torch.randn(64, COLS), torch.randn(64, COLS)
    prog = looped.lower(x, y, torch.zeros(64, COLS))
    ns: dict = {}
    exec(torch_codegen(prog), ns)  # noqa: S102
    out = torch.zeros(64, COLS)
    ns["looped"](x, y, out)
    torch.testing.assert_close(out, torch.relu(x * 3.0 + y))
    kernel = next(f for f in prog.functions if f.is_incore)
    single = torch_codegen(kernel)
    assert f"def {kernel.name}(" in single and "def looped(" not in single


def test_unknown_op_is_named() -> None:
    from pypto.errors import UserError
    from pypto.ir.expr import Call
    from pypto.ir.function import Function
    from pypto.ir.stmt import EvalStmt

    fn = Function("f", (), (), (), EvalStmt(Call("tile.no_such_op", ())))
    with pytest.raises(UserError, match="op 'tile.no_such_op' has no torch handler"):
        torch_codegen(fn)
    with pytest.raises(TypeError, match="Program or Function"):
        torch_codegen("not ir")  # type: ignore[arg-type]


def _compiled_softmax(tmp: Path):
    x = np.random.default_rng(3).standard_normal((ROWS, COLS)).astype(np.float32)
    compiled = softmax_rows.compile(x, np.zeros_like(x), config=RunConfig(save_kernels_dir=str(tmp / "art"),
                                                                          jit_cache=False))
    return compiled, torch.from_numpy(x)


def test_validate_ir_every_pass(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    compiled, x = _compiled_softmax(tmp_path)
    dumps = sorted((Path(compiled.output_dir) / "passes_dump").glob("*.py"))
    compiled.validate_ir({"x": x, "out": torch.zeros(ROWS, COLS)}, {"out": _softmax(x)}, rtol=1e-5, atol=1e-5)
    text = capsys.readouterr().out
    assert text.count("validate tensor: 'out'") == len(dumps) and "pass: False" not in text
    assert f"{'=' * 20} 00_frontend {'=' * 20}" in text


def test_validate_names_the_diverging_pass(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    compiled, x = _compiled_softmax(tmp_path)
    src = Path(compiled.output_dir) / "passes_dump"
    broken = tmp_path / "broken"
    shutil.copytree(src, broken)
    candidates = [p for p in sorted(broken.glob("*.py")) if "pl.tile.row_expand_div(" in p.read_text()]
    victim = candidates[len(candidates) // 2]  # a middle pass: the earlier dumps still match
    victim.write_text(victim.read_text().replace("pl.tile.row_expand_div(", "pl.tile.row_expand_mul(", 1))
    with pytest.raises(AssertionError, match=victim.name):
        validate_pass_ir_codegen_results(broken, {"x": x, "out": torch.zeros(ROWS, COLS)}, None,
                                         rtol=1e-5, atol=1e-5)
    printed = capsys.readouterr().out
    assert "pass: False" in printed and printed.count("pass: True") >= 1


def test_validate_ir_without_dumps(tmp_path: Path) -> None:
    from pypto.debug import validate_ir

    with pytest.raises(FileNotFoundError, match="passes_dump"):
        validate_ir(tmp_path, {}, {})


def test_cross_core_pipes_render_as_fifos_and_syncall_refuses_several_blocks() -> None:
    from tests.passes.pipe_programs import TwoPipes

    src = torch_codegen(TwoPipes)
    assert "_pipe_push('v2c', 1," in src and "_pipe_pop('v2c', 0)" in src
    ns: dict = {}
    exec(src, ns)  # noqa: S102
    first, second = torch.ones(2, 2), torch.zeros(2, 2)
    ns["_pipe_push"]("c2v", 0, first)
    ns["_pipe_push"]("c2v", 0, second)
    first.add_(5)  # a push copies the tile
    torch.testing.assert_close(ns["_pipe_pop"]("c2v", 0), torch.ones(2, 2))
    torch.testing.assert_close(ns["_pipe_pop"]("c2v", 0), second)
    with pytest.raises(RuntimeError, match="pop before any push"):
        ns["_pipe_pop"]("c2v", 0)
    assert ns["_syncall"]() is None  # one block: nothing to wait for
    with pytest.raises(NotImplementedError, match="syncall across the blocks"):
        ns["_spmd"](2, ns["_syncall"])
