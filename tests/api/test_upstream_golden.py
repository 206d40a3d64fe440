"""Upstream's golden.py writer and the harness entries its tests/st import (golden_writer, runner)."""

from __future__ import annotations

import runpy
import shutil
from pathlib import Path

import pytest

SCALE = 3.0  # read by golden_scaled: becomes a constant of golden.py


def _twice(x):
    return x * 2


def golden_scaled(tensors, params):
    tensors["out"][:] = _twice(tensors["a"]) * SCALE


class Case:
    """Like a PTOTestCase: its compute_expected is a bound method reading a literal attribute."""

    offset = 0.5

    def compute_expected(self, tensors, params) -> None:
        tensors["out"][:] = tensors["a"] + self.offset


def _run_golden(src: str, tmp_path: Path, name: str = "golden.py") -> dict:
    path = tmp_path / name
    path.write_text(src)
    return runpy.run_path(str(path))


def test_compute_golden_is_the_functions_own_source_with_its_constants_and_helpers(tmp_path, torch) -> None:
    from pypto.runtime.golden_writer import _extract_compute_golden

    src = _extract_compute_golden(golden_scaled)
    assert "def compute_golden(tensors, params):" in src and "SCALE = 3.0" in src and "def _twice(x):" in src
    ns = _run_golden("import torch\n" + src, tmp_path)
    t = {"a": torch.ones(2, 2), "out": torch.zeros(2, 2)}
    ns["compute_golden"](t, None)
    assert torch.equal(t["out"], torch.full((2, 2), 6.0))


def test_a_bound_method_loses_self_and_its_attributes_become_literals(tmp_path, torch) -> None:
    from pypto.runtime.golden_writer import _extract_compute_golden

    src = _extract_compute_golden(Case().compute_expected)
    assert "self" not in src and "-> None" not in src and "0.5" in src
    t = {"a": torch.ones(3), "out": torch.zeros(3)}
    _run_golden(src, tmp_path)["compute_golden"](t, None)
    assert torch.equal(t["out"], torch.full((3,), 1.5))
    case = Case()
    case.offset = object()  # not a literal: refused, not written as a repr that does not parse
    with pytest.raises(RuntimeError, match="non-literal attribute self.offset"):
        _extract_compute_golden(case.compute_expected)


def test_inline_inputs_from_init_values_and_data_files(tmp_path, torch) -> None:
    from pypto.runtime import ScalarSpec, TensorSpec
    from pypto.runtime.golden_writer import (
        _data_dir_has_files,
        _materialize_tensors,
        _save_data_files,
        generate_golden_source,
    )

    def ramp():
        return torch.arange(4, dtype=torch.float32)

    specs = [TensorSpec("a", [4], torch.float32, init_value=ramp), TensorSpec("b", [4], torch.float32, init_value=2.0),
             TensorSpec("c", [2, 2], torch.float32, init_value=torch.eye(2)),
             TensorSpec("out", [4], torch.float32, is_output=True)]
    with pytest.raises(ValueError, match="golden_fn or compute_golden_src"):
        generate_golden_source(specs, None, 1e-5, 1e-5)
    src = generate_golden_source(specs, golden_scaled, 1e-3, 1e-4, scalar_specs=[ScalarSpec("n", 7, "int32")])
    ns = _run_golden(src, tmp_path)
    named = ns["generate_inputs"]({})
    assert [n for n, _ in named] == ["a", "b", "c", "out", "n"] and ns["RTOL"] == 1e-3 and ns["__outputs__"] == ["out"]
    values = dict(named)
    assert values["a"].tolist() == [0, 1, 2, 3] and values["b"].tolist() == [2.0] * 4
    assert torch.equal(values["c"], torch.eye(2)) and values["n"].value == 7

    data = tmp_path / "data"
    assert not _data_dir_has_files(data, specs)
    made = _materialize_tensors(specs)
    _save_data_files({k: v for k, v in made.items() if k != "out"}, data / "in")
    assert not _data_dir_has_files(data, specs)  # out/out.pt is still missing
    _save_data_files({"out": made["out"]}, data / "out")
    assert _data_dir_has_files(data, specs)
    files = _run_golden(generate_golden_source(specs, golden_scaled, 1e-5, 1e-5, use_data_files=True), tmp_path, "g2.py")
    assert torch.equal(dict(files["generate_inputs"]({}))["a"], made["a"])


@pytest.fixture(scope="module")
def artifact(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from upstream_programs import AddProg

    from pypto.runtime import compile_program

    out = tmp_path_factory.mktemp("golden_rt") / "add"
    compile_program(AddProg, out)
    return out


def test_execute_on_device_runs_golden_inputs_persists_and_validates(artifact, tmp_path, torch) -> None:
    from pypto.runtime import TensorSpec
    from pypto.runtime.device_runner import compile_and_assemble
    from pypto.runtime.golden_writer import write_golden
    from pypto.runtime.runner import _execute_on_device, validate_persisted_outputs

    work = tmp_path / "w"
    shutil.copytree(artifact, work)
    specs = [TensorSpec("a", [64, 64], torch.float32, init_value=torch.randn),
             TensorSpec("b", [64, 64], torch.float32, init_value=torch.randn),
             TensorSpec("out", [64, 64], torch.float32, is_output=True)]

    def add_golden(tensors, params):
        tensors["out"][:] = tensors["a"] + tensors["b"]

    write_golden(specs, add_golden, work / "golden.py")
    callable_, runtime, _ = compile_and_assemble(work, "a2a3sim")
    with pytest.raises(AssertionError, match="missing actual"):
        validate_persisted_outputs(work, 1e-5, 1e-5)
    _execute_on_device(work, work / "golden.py", callable_, runtime, "a2a3sim", 0, validate=False,
                       actual_out_dir=work / "data" / "actual")
    validate_persisted_outputs(work, 1e-5, 1e-5)
    torch.save(torch.zeros(64, 64), work / "data" / "out" / "out.pt")  # a wrong expected output
    with pytest.raises(AssertionError, match="Output 'out' does not match golden"):
        validate_persisted_outputs(work, 1e-5, 1e-5)

    def wrong(tensors, params):
        tensors["out"][:] = tensors["a"] - tensors["b"]

    write_golden(specs, wrong, work / "golden.py")  # same data files, a compute_golden that disagrees
    with pytest.raises(AssertionError, match="Output 'out' does not match golden"):
        _execute_on_device(work, work / "golden.py", callable_, runtime, "a2a3sim", 0)
