"""RunConfig validation, artifact parsing, build caching and g++ errors, header compatibility, scalars."""

from __future__ import annotations

import ctypes
import importlib
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import simkit as sk
from rt_marks import needs_gxx

from pypto.artifact.directory import load_artifact
from pypto.errors import ToolchainError
from pypto.runtime import RunConfig, build
from pypto.runtime.dispatch import scalar_bits
from pypto.simpler_fallback import install_fallback, is_fallback

REFERENCE_ORCH = """\
    const ChipTensor& ext_x = orch_args.tensor(0).ref();
    const ChipTensor& ext_y = orch_args.tensor(1).ref();
    int64_t M = (int64_t)orch_args.tensor(0).ref().shapes[0];
    union { uint64_t u64; float val; } alpha_conv;
    alpha_conv.u64 = orch_args.scalar(0);
    float alpha = alpha_conv.val;
    PTO2_SCOPE() {
        uint32_t c_ci_shapes[2] = {16, 16};
        TensorCreateInfo c_ci(c_ci_shapes, 2, DataType::FLOAT32);
        TaskOutputTensors alloc_0 = alloc_tensors(c_ci);
        const ChipTensor& c = alloc_0.get_ref(0);
        ChipTensor acc = ext_y;
        for (int64_t i = 0; i < M; i += 16) {
            PTO2_SCOPE(PTO2ScopeMode::MANUAL) {
                uint32_t s[2] = {16, 16};
                uint32_t o[2] = {(uint32_t)i, 0};
                PTO2TaskId params_t0_deps[1];
                uint32_t params_t0_deps_count = 0;
                if (alloc_0.task_id().is_valid()) params_t0_deps[params_t0_deps_count++] = alloc_0.task_id();
                CoreTaskArgs params_t0;
                params_t0.add_input(ext_x.view(s, o).transpose(0, 1));
                params_t0.add_inout(c);
                params_t0.add_no_dep(acc);
                params_t0.add_scalar(to_u64(alpha));
                params_t0.launch_spec.set_block_num(2);
                params_t0.set_dependencies(params_t0_deps, params_t0_deps_count);
                MixedKernels mixed_0 = {0, 1, INVALID_KERNEL_ID};
                TaskOutputTensors task_0_outs = rt_submit_task(mixed_0, params_t0);
                if (params_t0_deps_count > 0) rt_submit_dummy_task(params_t0);
                (void)task_0_outs;
            }
        }
        LOG_INFO("clusters=%d aiv=%d", rt_available_cluster_count(), rt_available_aiv_count());
        uint32_t r[1] = {256};
        ChipTensor flat = c.reshape(r, 1);
        uint32_t idx[1] = {3};
        float v = get_tensor_data<float>(flat, 1, idx);
        (void)from_u64<float>(to_u64(v));
    }
"""


def test_run_config_defaults_and_backend() -> None:
    cfg = RunConfig()
    assert (cfg.platform, cfg.backend_type, cfg.rtol, cfg.atol, cfg.device_id) == ("a2a3sim", "Ascend910B", 1e-5,
                                                                                   1e-5, 0)
    assert RunConfig(platform="a5sim").backend_type == "Ascend950"
    assert RunConfig(platform="a5", backend_type="Ascend910B").backend_type == "Ascend950"
    assert RunConfig(enable_dep_gen=True).save_kernels is True
    assert RunConfig(enable_chip_swimlane=True).enable_chip_swimlane == 4
    assert RunConfig(ring_task_window=[0, 8, 0, 4]).task_window == 8
    with pytest.warns(DeprecationWarning):
        assert RunConfig(enable_l2_swimlane=2).enable_chip_swimlane == 2


@pytest.mark.parametrize(("kw", "match"), [
    ({"platform": "x"}, r"Invalid platform 'x'. Expected 'a2a3sim', 'a2a3', 'a5sim', or 'a5'."),
    ({"ring_task_window": 6}, "power of 2 >= 4"),
    ({"ring_task_window": [4, 4]}, "list of 4"),
    ({"ring_heap": 512}, "power of 2 >= 1024"),
    ({"ring_dep_pool": 2}, r"ring_dep_pool must be in \[4"),
    ({"aicpu_thread_num": 1}, r"0 \(auto\) or in range \[2, 5\]"),
    ({"enable_chip_swimlane": 7}, "0-4"),
    ({"enable_dump_args": 3}, "0, 1 or 2"),
    ({"deadlock_timeout_s": 0}, "deadlock_timeout_s"),
])
def test_run_config_errors(kw: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        RunConfig(**kw)


def test_load_artifact(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="Cannot execute PyPTO artifact .* was not generated"):
        load_artifact(tmp_path)
    art = sk.write_artifact(tmp_path / "a", "add", sk.orchestration(3, ""), [sk.Kernel(0, "add_k", "aiv", "")],
                            [sk.tensor_param("a", "In", [4]), sk.tensor_param("o", "Out", [4], "fp16")],
                            runtime="host_build_graph")
    info = load_artifact(art)
    assert info.runtime == "host_build_graph" and info.output_indices == (1,)
    assert info.kernels[0].source == art / "kernels" / "aiv" / "add_k.cpp"
    assert info.orchestration == art / "orchestration" / "add.cpp"
    assert load_artifact(art) is info  # cached while unchanged
    upstream = (art / "kernel_config.py").read_text().replace(
        "from pypto.runtime.kernel_config import", "from simpler.task_interface import")
    (art / "kernel_config.py").write_text(upstream)
    assert load_artifact(art).runtime == "host_build_graph"  # upstream import spelling is accepted
    install_fallback()
    stand_in = importlib.import_module("simpler")  # pypto's stand-in: it has no task_interface
    assert is_fallback(stand_in)
    (art / "kernel_config.py").write_text(upstream + "\n")
    os.utime(art / "kernel_config.py", (time.time() + 5, time.time() + 5))  # not the cached parse
    assert load_artifact(art) is not info
    assert sys.modules["simpler"] is stand_in and "simpler.task_interface" not in sys.modules  # put back as found
    del sys.modules["simpler"]


def test_scalar_bits() -> None:
    assert scalar_bits(0, 1.5, None) == 0x3FC00000
    assert scalar_bits(0, -1, None) == (1 << 64) - 1
    assert scalar_bits(0, ctypes.c_int32(-1), None) == 0xFFFFFFFF
    assert scalar_bits(0, np.float16(1.0), None) == 0x3C00
    assert scalar_bits(0, True, None) == 1
    with pytest.raises(TypeError, match="unsupported type"):
        scalar_bits(0, "x", None)


@needs_gxx
def test_reference_style_orchestration_compiles(tmp_path: Path) -> None:
    src = tmp_path / "orch.cpp"
    src.write_text(sk.orchestration(3, REFERENCE_ORCH))
    proc = subprocess.run([*build.orchestration_argv(src)[:-1], "-fsyntax-only", "-Wall", "-Werror", str(src)],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr


@needs_gxx
def test_build_cache_and_compile_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    art = sk.write_artifact(tmp_path / "c", "add", sk.orchestration(3, ""), [sk.Kernel(0, "add_k", "aiv",
                            sk.ADD_KERNEL)], [])
    info = load_artifact(art)
    first = build.build_artifact(info, "a2a3sim")
    assert (art / "kernels" / "aiv" / "add_k.so").is_file() and (art / "orchestration" / "add.so").is_file()

    def no_compiler(*a: object, **k: object) -> None:
        raise AssertionError("compiler invoked on a warm cache")

    monkeypatch.setattr(build, "compile_so", no_compiler)
    assert build.build_artifact(info, "a2a3sim") == first
    monkeypatch.undo()
    (art / "kernels" / "aiv" / "add_k.cpp").write_text("int broken(\n")
    with pytest.raises(ToolchainError, match=r"compilation failed: g\+\+ could not build kernel 'add_k'") as exc:
        build.build_kernel(info.kernels[0], "a2a3sim")
    assert "Repro command:" in str(exc.value) and "-D__DAV_VEC__" in exc.value.repro and exc.value.stderr
    with pytest.raises(ToolchainError, match="only a2a3sim and a5sim are simulated"):
        build.build_kernel(info.kernels[0], "a2a3")
