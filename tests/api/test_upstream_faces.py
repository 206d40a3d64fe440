"""Upstream's public import paths resolve to our modules; hardware platforms may run on the simulator."""

from __future__ import annotations

import warnings

import pytest

from pypto.errors import PartialCodegenError, UserError
from pypto.ir.function import Function, Program
from pypto.ir.options import BackendType, OptimizationStrategy
from pypto.ir.stmt import SeqStmts
from pypto.runtime import RunConfig
from pypto.runtime.config import HardwareOnSimWarning


def test_upstream_module_paths_are_faces_over_ours() -> None:
    from pypto.backend import BackendType as Bt
    from pypto.backend.pto_backend import PartialCodegenError as Pce
    from pypto.ir.pass_manager import OptimizationStrategy as Os
    from pypto.ir.pass_manager import PassManager
    from pypto.passes.manager import PassManager as OurPassManager

    assert (Bt, Pce, Os, PassManager) == (BackendType, PartialCodegenError, OptimizationStrategy, OurPassManager)


def test_distributed_config_validates_and_from_dir_needs_a_distributed_artifact(tmp_path) -> None:
    from pypto.ir.distributed_compiled_program import DistributedCompiledProgram, DistributedConfig

    assert DistributedConfig(device_ids=[0, 1]).device_ids == [0, 1]
    for bad in ({"device_ids": []}, {"device_ids": [1, 1]}, {"device_ids": [-1]}, {"aicpu_thread_num": 1},
                {"num_sub_workers": -2}):
        with pytest.raises(ValueError, match="DistributedConfig"):
            DistributedConfig(**bad)
    with pytest.raises(FileNotFoundError, match="distributed_meta.json"):
        DistributedCompiledProgram.from_dir(tmp_path)


def _fn(name: str) -> Function:
    return Function(name, (), (), (), SeqStmts(()))


def test_program_functions_read_as_a_tuple_and_as_a_name_map() -> None:
    prog = Program("p", (_fn("a"), _fn("b")))
    a, b = prog.functions
    assert prog.functions[0] is a and prog.functions["b"] is b and len(prog.functions) == 2
    assert prog.functions.keys() == ["a", "b"] and prog.functions.values() == [a, b]
    assert prog.functions.items() == [("a", a), ("b", b)] and prog.functions.get("c") is None
    assert prog.with_functions([b]).functions.values() == [b]
    with pytest.raises(KeyError):
        prog.functions["c"]


def test_hardware_platform_stays_hardware_unless_the_setting_is_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PYPTO_RUN_HW_ON_SIM", raising=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert RunConfig(platform="a2a3").platform == "a2a3"
    monkeypatch.setenv("PYPTO_RUN_HW_ON_SIM", "1")
    with pytest.warns(HardwareOnSimWarning, match=r"platform='a5'\) runs on 'a5sim'"):
        cfg = RunConfig(platform="a5")
    assert (cfg.platform, cfg.backend_type) == ("a5sim", "Ascend950")
    with pytest.warns(HardwareOnSimWarning, match="'a2a3sim'"):
        assert RunConfig(platform="a2a3").platform == "a2a3sim"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert RunConfig(platform="a5sim").platform == "a5sim"  # a simulator is left alone, silently


def test_a_bad_run_hw_on_sim_value_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYPTO_RUN_HW_ON_SIM", "sometimes")
    with pytest.raises(UserError, match="PYPTO_RUN_HW_ON_SIM"):
        RunConfig(platform="a2a3")


def test_run_platform_setting_moves_only_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PYPTO_RUN_PLATFORM", raising=False)
    assert RunConfig().platform == "a2a3sim"  # upstream's default
    monkeypatch.setenv("PYPTO_RUN_PLATFORM", "a5sim")
    assert (RunConfig().platform, RunConfig().backend_type) == ("a5sim", "Ascend950")
    assert RunConfig(platform="a2a3sim").platform == "a2a3sim"  # a named platform is kept
    monkeypatch.setenv("PYPTO_RUN_PLATFORM", "a6sim")
    with pytest.raises(UserError, match="PYPTO_RUN_PLATFORM"):
        RunConfig()


def test_tensor_spec_builds_its_tensor(torch) -> None:
    from pypto.runtime import ScalarSpec, TensorSpec

    assert TensorSpec("x", [2, 3], torch.float32).create_tensor().abs().sum().item() == 0
    assert TensorSpec("x", [2], torch.int32, init_value=7).create_tensor().tolist() == [7, 7]
    assert TensorSpec("x", [4, 4], torch.float16, init_value=torch.randn).create_tensor().dtype == torch.float16
    made = TensorSpec("x", [3], torch.float32, init_value=lambda: [1, 2, 3]).create_tensor()
    assert made.tolist() == [1.0, 2.0, 3.0]
    given = TensorSpec("x", [2], torch.float16, init_value=torch.ones(2)).create_tensor()
    assert given.dtype == torch.float16
    with pytest.raises(TypeError, match="init_value"):
        TensorSpec("x", [2], torch.float32, init_value="zeros").create_tensor()
    with pytest.raises(ValueError, match="unsupported ctype 'char'"):
        ScalarSpec("n", 3, "char")
