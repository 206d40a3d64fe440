"""benchmarks/_compat_st.py and the st adapter: a fake upstream st tree of our own, run through both.

The cases are ours: a tile add that passes, the same program with a wrong golden (a located
comparison failure), an input-in/out case (the golden sees the inputs as they were before the run),
a platform-parametrized case filtered by ``--platform``, a file that fails at import, a file upstream
restricts to hardware (its own ``pytest_generate_tests`` refuses any other platform: listed, not counted)
and one whose generator refuses a platform its marker allows (a failure, as before).
"""

from __future__ import annotations

import importlib.util
import shutil
import sys
import textwrap
from pathlib import Path

import pytest

from pypto.toolchain.ptoas import find_ptoas

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"

CASES = '''
import pypto.language as pl
import pytest
import torch
from harness.core.harness import PLATFORMS, DataType, PTOTestCase, TensorSpec

N = 16


@pl.program
class AddProgram:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, a: pl.Tensor[[N, N], pl.FP32], b: pl.Tensor[[N, N], pl.FP32],
               out: pl.Out[pl.Tensor[[N, N], pl.FP32]]) -> pl.Tensor[[N, N], pl.FP32]:
        t = pl.add(pl.load(a, [0, 0], [N, N]), pl.load(b, [0, 0], [N, N]))
        out = pl.store(t, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def orchestrator(self, a: pl.Tensor[[N, N], pl.FP32], b: pl.Tensor[[N, N], pl.FP32],
                     out: pl.Out[pl.Tensor[[N, N], pl.FP32]]) -> pl.Tensor[[N, N], pl.FP32]:
        out = self.kernel(a, b, out)
        return out


class AddCase(PTOTestCase):
    __test__ = False

    def __init__(self, offset=0.0, **kw):
        super().__init__(**kw)
        self.offset = offset

    def get_name(self):
        return "add"

    def define_tensors(self):
        return [TensorSpec("b", [N, N], DataType.FP32, init_value=torch.randn),
                TensorSpec("a", [N, N], DataType.FP32, init_value=2.0),
                TensorSpec("out", [N, N], DataType.FP32, is_output=True)]

    def get_program(self):
        return AddProgram

    def compute_expected(self, tensors, params=None):
        tensors["out"][:] = tensors["a"] + tensors["b"] + self.offset


def test_passes(test_runner):
    result = test_runner.run(AddCase())
    assert result.passed, result.error


def test_wrong_golden(test_runner):
    result = test_runner.run(AddCase(offset=1.0))
    assert result.passed, result.error


@pytest.mark.parametrize("platform", PLATFORMS)
def test_per_platform(test_runner, platform):
    result = test_runner.run(AddCase(platform=platform))
    assert result.passed, result.error
'''


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def compat_st():
    return _load("_compat_st")


REFUSING = '''
import pytest


def pytest_generate_tests(metafunc):
    if "platform" in metafunc.fixturenames:
        raise pytest.UsageError("this file only supports --platform=a2a3")


@pytest.mark.platforms({ids})
def test_board(platform):
    assert platform == "a2a3"
'''


def _tree(root: Path) -> Path:
    ops = root / "tests" / "st" / "runtime" / "ops"
    ops.mkdir(parents=True)
    (ops / "test_add.py").write_text(CASES)
    (ops / "test_broken.py").write_text("from harness.core.harness import NoSuchName\n")
    (ops / "test_board_only.py").write_text(REFUSING.format(ids='"a2a3"'))
    (ops / "test_refuses_a_sim.py").write_text(REFUSING.format(ids='"a2a3", "a5sim"'))
    return root


def test_junit_is_read_per_case(compat_st) -> None:
    xml = textwrap.dedent("""\
        <testsuites><testsuite>
          <testcase classname="tests.st.runtime.ops.test_x.T" name="test_ok"/>
          <testcase classname="tests.st.runtime.ops.test_x.T" name="test_bad">
            <failure message="AssertionError: x">E   AssertionError: output 'out' differs</failure></testcase>
          <testcase classname="tests.st.runtime.ops.test_x.T" name="test_skip"><skipped message="no hw"/></testcase>
          <testcase classname="" name="tests.st.runtime.ops.test_y"><error message="collection failure">ImportError: nope</error></testcase>
        </testsuite></testsuites>""")
    got = compat_st.read_junit(xml)
    assert got["tests.st.runtime.ops.test_x.T::test_ok"] == ("passed", "")
    assert got["tests.st.runtime.ops.test_x.T::test_bad"] == ("failed", "AssertionError: output 'out' differs")
    assert got["tests.st.runtime.ops.test_x.T::test_skip"][0] == "skipped"
    assert got["::tests.st.runtime.ops.test_y"] == ("import", "ImportError: nope")


def test_fold_groups_like_failures(compat_st) -> None:
    a = compat_st.fold("UserError: /a/b.py:12:3: error: 'k1' needs 64 KiB")
    b = compat_st.fold("UserError: /c/d.py:9:1: error: 'k2' needs 128 KiB")
    assert a == b == "UserError: <path>:N:N: error: '…' needs N KiB"


def test_a_checkout_without_st_is_refused(compat_st, tmp_path: Path, capsys) -> None:
    assert compat_st.main(tmp_path, "a2a3sim", "", 1, 60, False) == 2
    assert "tests/st/runtime" in capsys.readouterr().err


@pytest.mark.sim
@pytest.mark.skipif(shutil.which("g++") is None or find_ptoas() is None, reason="needs ptoas and g++")
def test_a_fake_st_tree_runs_through_the_adapter(compat_st, tmp_path: Path, capsys, torch) -> None:
    """The cases (like upstream's) make their tensors with torch: skipped without it."""
    root = _tree(tmp_path)
    code = compat_st.main(root, "a5sim", "", 1, 600, True)
    out = capsys.readouterr().out
    assert code == 1
    # test_passes and the a5sim variant pass; the wrong golden fails with where and by how much;
    # the other three platform variants are deselected; the broken file is one import failure, and so is
    # the file whose generator refuses a5sim while its marker allows it; the board-only file is listed only.
    assert "   2/3   " in out and "tests/st/runtime/ops/test_add.py" in out
    assert "output 'out': 256/256 elements differ beyond rtol=1e-05, atol=1e-05" in out
    assert "   0/1   " in out and "import: " in out
    assert "ops/test_board_only.py  [hardware-only (a2a3), not run on a5sim]" in out
    assert "ops/test_refuses_a_sim.py" in out and "UsageError: this file only supports --platform=a2a3" in out
    assert "not run on a5sim: 1 file(s) restricted by upstream's platforms marker (not counted)" in out
    assert "st ops 2/5" in out and out.rstrip().endswith("st total 2/5 (a5sim)")


def test_restricted_files_are_read_from_the_plugin_lines(compat_st) -> None:
    lines = "x\npypto-st restricted: t.py::T::test_a -> a2a3\npypto-st restricted: t.py::test_b -> a5,a5sim\n"
    got = compat_st.read_restricted(lines)
    assert got == {"t.py::T::test_a": ("a2a3",), "t.py::test_b": ("a5", "a5sim")}
    board = compat_st.FileOutcome("tests/st/runtime/ops/t.py", 1.0, {}, {"t.py::T::test_a": ("a2a3",)})
    assert compat_st.restriction(board, "a2a3sim") == "hardware-only (a2a3), not run on a2a3sim"
    other = compat_st.FileOutcome("tests/st/runtime/ops/t.py", 1.0, {}, got)
    assert compat_st.restriction(other, "a2a3sim") == "for a2a3, a5, a5sim only, not run on a2a3sim"
    ran = compat_st.FileOutcome("tests/st/runtime/ops/t.py", 1.0, {"c": ("passed", "")}, got)
    assert compat_st.restriction(ran, "a2a3sim") == ""


@pytest.fixture(scope="module")
def st_harness():
    sys.path.insert(0, str(BENCH / "st_adapter"))
    try:
        from harness.core import harness, test_runner
        yield harness, test_runner
    finally:
        sys.path.remove(str(BENCH / "st_adapter"))


def _case(harness, spec_dtype, rtol=1e-5, atol=1e-5):
    from pypto.runtime.runner import RunConfig

    class Case(harness.PTOTestCase):
        def get_name(self):
            return "c"

        def define_tensors(self):
            return [harness.TensorSpec("out", [2, 2], spec_dtype, is_output=True)]

        def get_program(self):
            return None

        def compute_expected(self, tensors, params=None):
            pass

    return Case(RunConfig(rtol=rtol, atol=atol))


def test_nan_in_the_golden_is_dont_care_but_never_a_pass_by_itself(st_harness, torch) -> None:
    harness, runner = st_harness
    case = _case(harness, harness.DataType.FP32)
    nan = float("nan")
    got = {"out": torch.tensor([[1.0, 5.0], [3.0, 9.0]])}
    assert runner.compare_outputs(case, got, {"out": torch.tensor([[1.0, nan], [3.0, nan]])}) is None
    msg = runner.compare_outputs(case, got, {"out": torch.tensor([[1.0, nan], [4.0, nan]])})
    assert msg == ("output 'out': 1/4 elements differ beyond rtol=1e-05, atol=1e-05 (2 don't-care skipped); "
                   "e.g. at [1, 0] got 3.0 expected 4.0")
    assert "nothing was compared" in runner.compare_outputs(case, got, {"out": torch.full((2, 2), nan)})


def test_integer_outputs_compare_exactly_at_zero_tolerance(st_harness, torch) -> None:
    harness, runner = st_harness
    case = _case(harness, harness.DataType.INT32, rtol=0.0, atol=0.0)
    got = {"out": torch.tensor([[1, 2], [3, 4]], dtype=torch.int32)}
    assert runner.compare_outputs(case, got, {"out": got["out"].clone()}) is None
    want = torch.tensor([[1, 2], [3, 5]], dtype=torch.int32)
    assert "1/4 elements differ" in runner.compare_outputs(case, got, {"out": want})


def test_an_onboard_platform_runs_on_its_simulator(st_harness) -> None:
    harness, runner = st_harness
    from pypto.runtime.runner import RunConfig

    assert runner.resolve_platform(RunConfig(platform="a5sim")) == "a5sim"
    case = _case(harness, harness.DataType.FP32)
    case._override_platform = "a2a3"
    assert runner.resolve_platform(RunConfig(platform="a5sim"), case) == "a2a3sim"
    assert harness.platform_to_backend("a5sim").name == "Ascend950"
    with pytest.raises(ValueError, match="Unknown platform 'a9'"):
        harness.platform_to_backend("a9")


def test_large_inputs_are_shared_with_the_golden_and_outputs_copied(st_harness, torch, monkeypatch) -> None:
    harness, runner = st_harness
    monkeypatch.setattr(runner, "SHARED_INPUT_ELEMENTS", 4)
    case = _case(harness, harness.DataType.FP32)
    case.tensor_specs.extend([harness.TensorSpec("big", [2, 2], harness.DataType.FP32),
                              harness.TensorSpec("small", [3], harness.DataType.FP32)])
    tensors = {"out": torch.zeros(2, 2), "big": torch.ones(2, 2), "small": torch.ones(3)}
    golden, shared = runner.golden_tensors(case, tensors)
    assert golden["big"] is tensors["big"] and shared == {"big": tensors["big"]._version}
    assert golden["out"] is not tensors["out"] and golden["small"] is not tensors["small"]


def test_a_golden_writing_a_shared_input_fails(st_harness, torch, monkeypatch) -> None:
    harness, runner = st_harness
    monkeypatch.setattr(runner, "SHARED_INPUT_ELEMENTS", 4)
    monkeypatch.setattr(runner, "compile_program", lambda *a, **k: None)
    monkeypatch.setattr(runner, "execute_compiled", lambda *a, **k: pytest.fail("ran after a bad golden"))
    case = _case(harness, harness.DataType.FP32)
    case.tensor_specs.append(harness.TensorSpec("big", [2, 2], harness.DataType.FP32))
    case.get_program = lambda: object()
    case.compute_expected = lambda t, params=None: t["big"].add_(1.0)
    result = runner.TestRunner(runner.RunConfig(platform="a2a3sim")).run(case)
    assert not result.passed and "modified the input tensor(s) ['big'] in place" in result.error
