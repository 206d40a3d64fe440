"""Upstream's ``pypto.runtime`` modules over the simulator: runner, bench, log_config, debug, execute_artifact, ..."""

from __future__ import annotations

import ctypes
import os
import runpy
import struct
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from pypto.errors import ToolchainError, UnsupportedFeatureError


@pytest.fixture(scope="module")
def artifact(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """AddProg (out = a + b, 64x64 fp32) compiled with upstream's compile_program."""
    from upstream_programs import AddProg

    from pypto.ir import OptimizationStrategy
    from pypto.ir.options import BackendType
    from pypto.runtime import compile_program

    out = tmp_path_factory.mktemp("upstream_rt") / "add"
    assert compile_program(AddProg, out, strategy=OptimizationStrategy.Default,
                           backend_type=BackendType.Ascend910B) is None
    return out


def _inputs():
    import torch
    return torch.randn(64, 64), torch.randn(64, 64), torch.zeros(64, 64)


def test_execute_compiled_writes_outputs_in_place(artifact: Path, torch) -> None:
    from pypto.runtime import execute_compiled

    a, b, c = _inputs()
    assert execute_compiled(artifact, [a, b, c], platform="a2a3sim", device_id=0) is None
    np.testing.assert_allclose(c.numpy(), (a + b).numpy(), rtol=1e-6, atol=1e-6)
    with pytest.raises(ValueError, match="only level=2"):
        execute_compiled(artifact, [a, b, c], platform="a2a3sim", device_id=0, level=3)
    with pytest.raises(ToolchainError, match="CANN"):
        execute_compiled(artifact, [a, b, c], platform="a2a3", device_id=0)


def test_execute_compiled_writes_requested_diagnostics(artifact: Path, torch) -> None:
    from pypto.runtime import execute_compiled
    from pypto.runtime.runner import _DfxOpts

    assert _DfxOpts(enable_chip_swimlane=True).enable_chip_swimlane == 4 and not _DfxOpts().any()
    a, b, c = _inputs()
    execute_compiled(artifact, [a, b, c], platform="a2a3sim", device_id=0, dfx=_DfxOpts(enable_dep_gen=True))
    assert (artifact / "dfx_outputs" / "deps.json").is_file()


def test_run_result_answers_like_upstreams(artifact: Path, torch) -> None:
    from pypto.runtime import run

    a, b, c = _inputs()
    result = run(artifact, a, b, c)
    assert result.passed and result.error is None and result.execution_time > 0
    a2, b2, c2 = _inputs()
    result(a2, b2, c2)  # upstream: run() hands back the program to call again
    np.testing.assert_allclose(c2.numpy(), (a2 + b2).numpy(), rtol=1e-6, atol=1e-6)


def test_benchmark_returns_span_trees(artifact: Path, torch) -> None:
    from pypto.runtime import BenchmarkStats, TraceInvocation, benchmark
    from pypto.runtime.bench import benchmark as bench

    a, b, c = _inputs()
    stats = bench(artifact, [a, b, c], rounds=4, warmup=1, platform="a2a3sim")
    assert isinstance(stats, BenchmarkStats) and (stats.rounds, stats.warmup) == (4, 1)
    assert len(stats.device_wall_us) == len(stats.host_wall_us) == len(stats.invocations) == 4
    assert all(0 < d <= h for d, h in zip(stats.device_wall_us, stats.host_wall_us, strict=True))
    inv = stats.invocations[0]
    assert isinstance(inv, TraceInvocation) and inv.root().name == "chip.run" and inv.effective_us > 0
    assert not stats.all_zero_device and stats.device_us_min <= stats.device_us_median <= stats.device_us_max
    assert stats.per_round("effective") == [iv.effective_us for iv in stats.invocations] and stats.per_rank() == {}
    assert "device_wall [dev]" in stats.format_tree(0) and "rounds=4" in str(stats)
    np.testing.assert_allclose(c.numpy(), (a + b).numpy(), rtol=1e-6, atol=1e-6)
    assert isinstance(benchmark(artifact, [a, b, c], rounds=2, warmup=0), BenchmarkStats)  # upstream's list form
    from pypto.runtime import BenchmarkResult, RunConfig

    assert isinstance(benchmark(artifact, a, b, c, rounds=2), BenchmarkResult)  # ours
    with pytest.raises(ValueError, match="not both"):
        bench(artifact, [a, b, c], config=RunConfig(), platform="a2a3sim")
    with pytest.raises(ValueError, match="rounds must be positive"):
        bench(artifact, [a, b, c], rounds=0)
    with pytest.raises(ValueError, match="only to a distributed"):
        bench(artifact, [a, b, c], persistent=True)
    with pytest.raises(ValueError, match="unknown metric"):
        stats.per_rank("wall")


def test_configure_log_moves_the_simulators_threshold() -> None:
    from pypto.runtime import configure_log, log_level
    from pypto.runtime.log_config import parse_level, sim_log_level

    before = log_level()
    try:
        for name, sim in (("debug", 3), ("v0", 2), ("info", 2), ("timing", 2), ("warn", 1), ("error", 0),
                          ("null", -1)):
            configure_log(name)
            assert sim_log_level() == sim, name
        configure_log(20)
        assert log_level() == 20 == parse_level("INFO")
        with pytest.raises(ValueError, match="unknown runtime log level 'loud'"):
            configure_log("loud")
    finally:
        configure_log(before)


def test_pto_isa_is_the_simulators_headers(monkeypatch: pytest.MonkeyPatch) -> None:
    from pypto.runtime import ensure_pto_isa_root, pto_isa_include_dir

    monkeypatch.delenv("PTO_ISA_ROOT", raising=False)
    root = ensure_pto_isa_root()
    assert os.environ["PTO_ISA_ROOT"] == root
    assert (pto_isa_include_dir() / "pto" / "pto-inst.hpp").is_file()


def test_every_compile_writes_a_run_script_that_reruns_it(artifact: Path) -> None:
    script = artifact / "debug" / "run.py"
    assert "def _inline_inputs" in script.read_text()
    proc = subprocess.run([sys.executable, str(script), "--platform", "a5sim"], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert "ran on a5sim" in proc.stdout and "[pto->cpp]" in proc.stdout


def test_pto_edit_is_spliced_into_the_kernel_source(artifact: Path, tmp_path: Path, torch) -> None:
    import shutil

    from pypto.runtime.debug import invalidate_binary_cache, rebuild_kernel_cpp_from_pto, replay
    from pypto.runtime.debug.pto_rebuild import PTOAS_BODY_BEGIN, PTOAS_BODY_END

    work = tmp_path / "copy"
    shutil.copytree(artifact, work)
    kernel = next((work / "kernels").rglob("add_kernel.cpp"))
    text = kernel.read_text()
    assert PTOAS_BODY_BEGIN in text and PTOAS_BODY_END in text
    assert rebuild_kernel_cpp_from_pto(work) == []  # nothing edited
    pto = next((work / "ptoas").glob("*.pto"))
    pto.write_text(pto.read_text().replace("pto.tadd", "pto.tsub"))
    os.utime(pto, (time.time() + 5, time.time() + 5))
    assert rebuild_kernel_cpp_from_pto(work) == [str(kernel.relative_to(work))]
    assert "TSUB" in kernel.read_text() and "TADD" not in kernel.read_text()
    a, b, c = _inputs()
    replay(work, a, b, c)  # the edited kernel is built and run: out = a - b now
    np.testing.assert_allclose(c.numpy(), (a - b).numpy(), rtol=1e-6, atol=1e-6)
    assert list((work / "kernels").rglob("*.so"))
    invalidate_binary_cache(work)
    assert not list((work / "kernels").rglob("*.so")) and not list((work / "orchestration").glob("*.so"))
    with pytest.raises(FileNotFoundError, match="golden.py"):
        replay(work, a, b, c, validate=True)
    with pytest.raises(FileNotFoundError, match="not an artifact directory"):
        replay(tmp_path, a, b, c)


def test_golden_py_drives_replay_and_execute_artifact(artifact: Path, tmp_path: Path, torch) -> None:
    import shutil

    from pypto.runtime import ScalarSpec, TensorSpec
    from pypto.runtime.debug import replay
    from pypto.runtime.golden_writer import generate_golden_source, write_golden

    work = tmp_path / "g"
    shutil.copytree(artifact, work)
    specs = [TensorSpec("a", [64, 64], torch.float32, init_value=torch.randn),
             TensorSpec("b", [64, 64], torch.float32, init_value=1.5),
             TensorSpec("out", [64, 64], torch.float32, is_output=True)]

    def golden(t: dict, _params: object) -> None:
        t["out"][:] = t["a"] + t["b"]

    with_scalar = generate_golden_source(specs, golden, 1e-3, 1e-4, scalar_specs=[ScalarSpec("s", 3, "int32")])
    assert "s = ctypes.c_int32(3)" in with_scalar and "RTOL = 0.001" in with_scalar
    write_golden(specs, golden, work / "golden.py")
    g = runpy.run_path(str(work / "golden.py"))
    named = g["generate_inputs"]({})
    assert [n for n, _ in named] == ["a", "b", "out"] and g["__outputs__"] == ["out"]
    assert torch.equal(named[1][1], torch.full((64, 64), 1.5)) and not named[2][1].any()
    replay(work, *[v for _, v in named], validate=True)
    with pytest.raises(ValueError, match="expected 3 tensors"):
        replay(work, named[0][1], validate=True)
    wrong = "def compute_golden(tensors, params):\n    tensors['out'][:] = tensors['a'] - tensors['b']\n"
    (work / "golden.py").write_text(generate_golden_source(specs, None, 1e-5, 1e-5, compute_golden_src=wrong,
                                                           use_data_files=True))
    with pytest.raises(AssertionError, match="Output 'out' does not match golden"):
        replay(work, *[v for _, v in g["generate_inputs"]({})], validate=True)

    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    run = [sys.executable, "-m", "pypto.runtime.execute_artifact"]
    fail = subprocess.run([*run, str(work)], capture_output=True, text=True, env=env, timeout=600)
    assert fail.returncode == 1 and "PYPTO_EXEC_RESULT=FAIL" in fail.stdout
    ok = subprocess.run([*run, "--work-dir", str(artifact), "--platform", "a2a3sim"], capture_output=True,
                        text=True, env=env, timeout=600)
    assert ok.returncode == 0 and "PYPTO_EXEC_RESULT=PASS device=0" in ok.stdout, ok.stderr
    assert (artifact / "data" / "actual" / "out.pt").is_file()
    infra = subprocess.run([*run, str(tmp_path / "missing")], capture_output=True, text=True, env=env, timeout=600)
    assert infra.returncode == 1 and "PYPTO_EXEC_RESULT=INFRA" in infra.stdout


def test_execute_artifact_api_and_batch(artifact: Path, tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from pypto.runtime.execute_artifact import (
        ArtifactSetupError,
        execute_artifact_dir,
        execute_batch_manifest,
    )

    execute_artifact_dir(artifact, "a2a3sim", 0)
    with pytest.raises(ArtifactSetupError):
        execute_artifact_dir(tmp_path, "a2a3sim", 0)
    manifest = tmp_path / "m.json"
    manifest.write_text(json.dumps([{"work_dir": str(artifact), "platform": "a5sim"},
                                    {"work_dir": str(tmp_path / "none"), "platform": "a2a3sim"}]))
    assert execute_batch_manifest(manifest, 0) is False
    out = capsys.readouterr().out
    assert f"PYPTO_EXEC_RESULT=PASS work_dir={artifact} device=0" in out and "PYPTO_EXEC_RESULT=INFRA" in out


def test_device_runner_kernel_compiler_and_elf_parser(artifact: Path, tmp_path: Path, torch) -> None:
    from pypto.runtime import elf_parser
    from pypto.runtime.device_runner import compile_and_assemble, execute_on_device
    from pypto.runtime.kernel_compiler import KernelCompiler

    callable_, runtime, config = compile_and_assemble(artifact, "a5sim")
    assert runtime == "tensormap_and_ringbuffer" and isinstance(config, dict)
    a, b, c = _inputs()
    execute_on_device(callable_, [a, b, c], "a5sim", runtime, 0)
    np.testing.assert_allclose(c.numpy(), (a + b).numpy(), rtol=1e-6, atol=1e-6)
    with pytest.raises(ValueError, match="does not match"):
        execute_on_device(callable_, [a, b, c], "a5sim", "host_build_graph", 0)

    kc = KernelCompiler("a2a3sim")
    source = next((artifact / "kernels").rglob("add_kernel.cpp"))
    obj = kc.compile_incore(str(source), "aiv", build_dir=str(tmp_path))
    assert obj[:4] == b"\x7fELF" and (tmp_path / "add_kernel.so").read_bytes() == obj
    with pytest.raises(ToolchainError, match="CANN"):
        KernelCompiler("a2a3")

    so = tmp_path / "add_kernel.so"
    text = elf_parser.extract_text_section(so)
    size = next(int(line.split()[5], 16) for line in subprocess.run(
        ["readelf", "-SW", str(so)], capture_output=True, text=True, check=True).stdout.splitlines()
        if " .text " in line)
    assert len(text) == size > 0
    notes = subprocess.run(["readelf", "-n", str(so)], capture_output=True, text=True, check=True).stdout
    build_id = next((ln.split(":")[1].strip() for ln in notes.splitlines() if "Build ID" in ln), None)
    if build_id is not None:
        assert elf_parser.elf_build_id_64(obj) == struct.unpack("<Q", bytes.fromhex(build_id)[:8])[0]
    assert elf_parser.elf_build_id_64(b"not an elf") == elf_parser.fnv1a_64(b"not an elf")
    assert elf_parser.fnv1a_64(b"") == 0xCBF29CE484222325 and elf_parser.fnv1a_64(b"a") == 0xAF63DC4C8601EC8C
    with pytest.raises(ValueError, match="not an ELF64"):
        elf_parser.extract_text_section(b"\0" * 80)


def test_compiled_program_extraction_surface(artifact: Path, torch) -> None:
    """chip_callable (built once per handle), runtime_name/runtime_config and build_call_config's precedence."""
    from pypto.compiled import CompiledProgram
    from pypto.runtime import RunConfig
    from pypto.runtime.device_runner import ChipCallable, execute_on_device

    compiled = CompiledProgram.from_dir(artifact, platform="a2a3sim")
    cc = compiled.chip_callable
    assert isinstance(cc, ChipCallable) and compiled.chip_callable is cc
    assert compiled.runtime_name == "tensormap_and_ringbuffer" and isinstance(compiled.runtime_config, dict)
    a, b, c = _inputs()
    cfg = compiled.build_call_config(aicpu_thread_num=3)
    assert cfg.aicpu_thread_num == 3 and cfg.platform == "a2a3sim"
    execute_on_device(cc, [a, b, c], compiled.platform, compiled.runtime_name, 0,
                      aicpu_thread_num=cfg.aicpu_thread_num)
    np.testing.assert_allclose(c.numpy(), (a + b).numpy(), rtol=1e-6, atol=1e-6)
    given = RunConfig(platform="a5sim", aicpu_thread_num=4)
    assert compiled.build_call_config(given).aicpu_thread_num == 4  # the config's own, over RUNTIME_CONFIG
    assert compiled.build_call_config(given, aicpu_thread_num=2).aicpu_thread_num == 2
    assert given.aicpu_thread_num == 4  # a copy, not the caller's config
    with pytest.raises(ValueError, match=r"aicpu_thread_num must be 0 \(auto\) or in range \[2, 5\], got 9"):
        compiled.build_call_config(aicpu_thread_num=9)
    with pytest.raises(FileNotFoundError):
        _ = CompiledProgram(None, artifact / "missing", platform="a2a3sim").chip_callable

    orch_args, coerced, return_style = compiled.build_orch_args(a, b)  # inputs only: the output is allocated
    assert return_style is True and len(coerced) == 3 and compiled.output_indices == [2]
    assert isinstance(coerced[2], torch.Tensor) and coerced[2].shape == (64, 64)
    execute_on_device(cc, orch_args, compiled.platform, compiled.runtime_name, 0)
    np.testing.assert_allclose(coerced[2].numpy(), (a + b).numpy(), rtol=1e-6, atol=1e-6)
    _, coerced, return_style = compiled.build_orch_args(a, b, c, worker=object())
    assert return_style is False and coerced[2] is c
    with pytest.raises(TypeError, match=r"takes 3 arguments \(a, b, out\) for an in-place call or 2 inputs"):
        compiled.build_orch_args(a)


def test_task_interface_and_tensor_arg(artifact: Path, torch) -> None:
    from pypto.runtime import ChipWorker, RunConfig
    from pypto.runtime import task_interface as ti
    from pypto.runtime.tensor_arg import make_tensor_arg

    t = torch.zeros(4, 6, dtype=torch.float16)
    ct = ti.make_chip_tensor_arg(t)
    assert ti.make_tensor_arg is ti.make_chip_tensor_arg and ti.Tensor is ti.ChipTensor
    assert (ct.buffer_addr, ct.buffer_size, ct.ndims, list(ct.shapes)[:2]) == (t.data_ptr(), 48, 2, [4, 6])
    assert ct.dtype == ti.torch_dtype_to_datatype(torch.float16).code
    assert ti.scalar_to_uint64(1.5) == struct.unpack("<I", struct.pack("<f", 1.5))[0]
    assert ti.scalar_to_uint64(ctypes.c_int32(-1)) == 0xFFFFFFFF and ti.scalar_to_uint64(7) == 7
    with pytest.raises(KeyError, match="complex64"):
        ti.torch_dtype_to_datatype(torch.complex64)
    for name in ("CallConfig", "ChipCallable", "ChipStorageTaskArgs", "CoreCallable", "TaskArgs", "Worker"):
        with pytest.raises(UnsupportedFeatureError, match=f"task_interface.{name} is a native object"):
            getattr(ti, name)()
    with ChipWorker(config=RunConfig(platform="a2a3sim")) as w, ChipWorker(config=RunConfig(platform="a5sim")) as w2:
        dev = w.alloc_tensor((8,), "fp32")
        assert ti.device_tensor_to_chip_tensor(dev).buffer_addr == dev.data_ptr
        assert make_tensor_arg(w, dev).buffer_addr == dev.data_ptr and make_tensor_arg(w, ct) is ct
        with pytest.raises(ValueError, match="another Worker"):
            make_tensor_arg(w2, dev)
        w.free_tensor(dev)
        with pytest.raises(ValueError, match="freed"):
            ti.device_tensor_to_chip_tensor(dev)


def test_workers_stacked_tensors_and_handles() -> None:
    from pypto.jit.distributed.worker import DistributedWorker
    from pypto.runtime import ChipWorker, DeviceTensor, DistributedRunHandle, StackedDeviceTensor, Worker

    assert issubclass(ChipWorker, Worker) and issubclass(DistributedWorker, Worker)
    shards = [DeviceTensor(0x1000 + 64 * i, (4, 4), "fp32") for i in range(2)]
    st = StackedDeviceTensor(shards, (2, 4, 4), (0, 1))
    assert st.shape == (2, 4, 4) and st.dtype.meta == "fp32" and st.contiguous_base() == 0x1000
    assert st[1] is shards[1] and st[1, ...] is shards[1] and st[0, 0:4, :] is shards[0]
    with pytest.raises(ValueError, match="whole-shard"):
        st[0, 0:2]
    with pytest.raises(IndexError, match="out of range"):
        st[2]
    with pytest.raises(ValueError, match="distinct"):
        StackedDeviceTensor(shards, (2, 4, 4), (0, 0))
    with pytest.raises(ValueError, match="expected"):
        StackedDeviceTensor(shards, (2, 4, 5), (0, 1))
    assert StackedDeviceTensor(shards[::-1], (2, 4, 4), (0, 1)).contiguous_base() is None
    DistributedRunHandle().result()
    failed = DistributedRunHandle(RuntimeError("rank 1 failed"))
    assert failed.done
    for _ in range(2):  # every waiter sees the same outcome
        with pytest.raises(RuntimeError, match="rank 1 failed"):
            failed.wait(1.0)
    with pytest.raises(ValueError, match="non-negative"):
        DistributedRunHandle().result(-1)


def test_execute_compiled_takes_a_jit_artifact_with_its_scalar(tmp_path: Path, torch) -> None:
    """pypto-lib's golden harness: fn.compile(x, a, y) and then execute_compiled(dir, [x, c_float(a), y])."""
    from upstream_programs import add_scalar

    from pypto.runtime import RunConfig, execute_compiled

    x, y = torch.randn(128, 64), torch.zeros(128, 64)
    compiled = add_scalar.compile(x, 2.5, y, config=RunConfig(save_kernels_dir=str(tmp_path / "k")))
    assert compiled.param_names == ["x", "a", "y"]  # the specialized pl.Scalar stays a parameter
    execute_compiled(compiled.output_dir, [x, ctypes.c_float(2.5), y], platform="a2a3sim", device_id=0)
    np.testing.assert_allclose(y.numpy(), x.numpy() + 2.5, rtol=1e-6, atol=1e-6)
    y2 = torch.zeros(128, 64)
    add_scalar(x, 2.5, y2)  # the jit call passes it too
    np.testing.assert_allclose(y2.numpy(), x.numpy() + 2.5, rtol=1e-6, atol=1e-6)


def test_pto_rebuild_runs_ptoas_under_the_deadline_setting(artifact: Path, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil

    from pypto.backend import ptoas_stage
    from pypto.runtime.debug import rebuild_kernel_cpp_from_pto

    work = tmp_path / "copy"
    shutil.copytree(artifact, work)
    pto = next((work / "ptoas").glob("*.pto"))
    os.utime(pto, (time.time() + 5, time.time() + 5))
    seen: list[float] = []
    real = ptoas_stage.run_ptoas

    def spy(exe, root, stem, *, timeout, **kw):  # noqa: ANN001, ANN202, ANN003
        seen.append(timeout)
        return real(exe, root, stem, timeout=timeout, **kw)

    monkeypatch.setattr(ptoas_stage, "run_ptoas", spy)
    monkeypatch.setenv("PYPTO_PTOAS_TIMEOUT_S", "77")
    rebuild_kernel_cpp_from_pto(work)
    assert seen == [77.0]
