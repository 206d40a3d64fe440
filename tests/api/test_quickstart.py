"""The compile page's quickstart and edge cases (the acceptance contract of ``kernel.compile``)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

import pypto.language as pl
from pypto.compiled import CompiledProgram
from pypto.passes.pipelines import DEFAULT
from pypto.runtime import RunConfig

HERE = Path(__file__).parent


@pl.jit
def add(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out[:] = pl.add(a, b)
    return out


@pytest.fixture()
def build_dir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _arrays():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((128, 128)).astype(np.float32)
    b = rng.standard_normal((128, 128)).astype(np.float32)
    return a, b, np.zeros((128, 128), np.float32)


def test_quickstart_as_written_with_torch(build_dir, capsys, torch):
    spec = importlib.util.spec_from_file_location("quickstart_torch", HERE / "quickstart_torch.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    compiled = module.compiled
    assert "artifacts in:" in capsys.readouterr().out
    dumps = sorted(p.name for p in (compiled.output_dir / "passes_dump").iterdir() if p.suffix == ".py")
    assert dumps[0] == "00_frontend.py"
    assert dumps[1:] == [f"{i:02d}_after_{name}.py" for i, name in enumerate(DEFAULT, 1)]
    assert len(dumps) == 55
    module.add(module.A, module.B, module.out, config=module.CFG)
    assert np.allclose(module.out.numpy(), (module.A + module.B).numpy(), rtol=1e-6, atol=1e-6)


def test_quickstart_numpy(build_dir):
    a, b, out = _arrays()
    cfg = RunConfig(platform="a2a3sim")
    compiled = add.compile(a, b, out, config=cfg)
    assert isinstance(compiled, CompiledProgram)
    assert compiled.platform == "a2a3sim" and compiled.param_names == ["a", "b", "out"]
    assert compiled.output_dir.parent == build_dir / "build_output"
    assert compiled.output_dir.name.startswith("_jit_add_")
    assert compiled.output_indices == [2] and compiled.has_return
    assert len(list((compiled.output_dir / "passes_dump").glob("*_after_*.py"))) == 54
    # the same specialization key returns the identical cached object
    assert add.compile(a, b, out, config=cfg) is compiled
    add(a, b, out, config=cfg)
    np.testing.assert_allclose(out, a + b, rtol=1e-6, atol=1e-6)


def test_compile_option_as_keyword_is_a_type_error(build_dir):
    a, b, out = _arrays()
    with pytest.raises(TypeError, match="@pl.jit function 'add': got an unexpected keyword argument 'skip_ptoas'"):
        add.compile(a, b, out, skip_ptoas=True)
    # exactly as the page writes it: no sample arguments; the keyword is checked before anything else
    # (before signature mode would complain about the bare pl.Tensor annotations)
    with pytest.raises(TypeError, match="^@pl.jit function 'add': got an unexpected keyword argument 'skip_ptoas'$"):
        add.compile(skip_ptoas=True)
    with pytest.raises(TypeError, match="got an unexpected keyword argument 'skip_ptoas'"):
        add.lower(skip_ptoas=True)
    assert not (build_dir / "build_output").exists()


def test_lower_returns_program_and_writes_nothing(build_dir):
    a, b, out = _arrays()
    program = add.lower(a, b, out)
    assert {f.func_type.value for f in program.functions} == {"AIV", "Orchestration"}
    assert not (build_dir / "build_output").exists()


def test_dump_passes_false_has_no_dumps(build_dir):
    a, b, out = _arrays()
    compiled = add.compile(a, b, out, config=RunConfig(platform="a2a3sim", dump_passes=False))
    assert not (compiled.output_dir / "passes_dump").exists()


def test_worker_rejects_other_platform(build_dir):
    from pypto.runtime import ChipWorker

    a, b, out = _arrays()
    compiled = add.compile(a, b, out, config=RunConfig(platform="a5sim"))
    with ChipWorker(config=RunConfig(platform="a2a3sim")) as worker, pytest.raises(ValueError) as ei:
        worker.run(compiled, a, b, out)
    assert str(ei.value).startswith(
        "CompiledProgram.platform='a5sim' does not match ChipWorker.platform='a2a3sim'.")


def test_from_dir_round_trip(build_dir):
    a, b, out = _arrays()
    compiled = add.compile(a, b, out, config=RunConfig(platform="a2a3sim"))
    again = CompiledProgram.from_dir(compiled.output_dir)
    assert again == compiled and again.param_names == compiled.param_names
    assert again.platform == "a2a3sim" and again.program is None
    again(a, b, out)
    np.testing.assert_allclose(out, a + b, rtol=1e-6, atol=1e-6)


def test_from_dir_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="not a complete pypto artifact directory"):
        CompiledProgram.from_dir(tmp_path)
    (tmp_path / "compiled_meta.json").write_text("{not json")
    with pytest.raises(ValueError, match="corrupt metadata"):
        CompiledProgram.from_dir(tmp_path)
    (tmp_path / "compiled_meta.json").write_text('{"schema": 99, "params": []}')
    with pytest.raises(ValueError, match="unsupported metadata schema 99"):
        CompiledProgram.from_dir(tmp_path)


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))
