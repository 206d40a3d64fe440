"""Real kernels: .pto -> ptoas -> wrap_kernel -> g++ -> ChipWorker, compared with numpy; harness run/benchmark."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest
import simkit as sk
from rt_marks import needs_gxx

from pypto.backend.kernel_wrapper import KernelParam, wrap_kernel
from pypto.runtime import ChipWorker, KernelFaultError, RunConfig, benchmark, run
from pypto.toolchain.ptoas import find_ptoas

DATA = Path(__file__).parent / "data"
PTOAS = find_ptoas()
pytestmark = [needs_gxx, pytest.mark.sim, pytest.mark.ptoas,
              pytest.mark.skipif(PTOAS is None, reason="needs the pinned ptoas")]

CASES = {
    # name: (pto file, ptoas function, param specs, orchestration inputs, output, params for meta)
    "add": ("add_128x128_f32.pto", "add_128x128_f32", [("a", "float"), ("b", "float"), ("c", "float")], "aiv",
            [("a", "In", [128, 128], "fp32"), ("b", "In", [128, 128], "fp32"), ("c", "Out", [128, 128], "fp32")]),
    "softmax": ("softmax_rows_64x128_f32.pto", "softmax_rows_64x128", [("x", "float"), ("y", "float")], "aiv",
                [("x", "In", [64, 128], "fp32"), ("y", "Out", [64, 128], "fp32")]),
    "matmul": ("matmul_f16_64x64_f32acc.pto", "matmul_f16_64x64", [("a", "half"), ("b", "half"), ("c", "float")],
               "aic", [("a", "In", [64, 64], "fp16"), ("b", "In", [64, 64], "fp16"), ("c", "Out", [64, 64], "fp32")]),
}


def _ptoas_cpp(pto: Path, out: Path) -> str:
    proc = subprocess.run([str(PTOAS), str(pto), "-o", str(out)], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    return out.read_text()


def _orchestration(params: list[tuple[str, str, list[int], str]], core: str) -> str:
    lines = [f"    const ChipTensor& ext_{n} = orch_args.tensor({i}).ref();" for i, (n, *_rest) in enumerate(params)]
    lines += ["", "    PTO2_SCOPE() {", "        CoreTaskArgs params_t0;"]
    for n, direction, *_ in params:
        lines.append(f"        params_t0.add_{'input' if direction == 'In' else 'output'}(ext_{n});")
    lines += [f"        rt_submit_{core}_task(0, params_t0);", "    }", ""]
    return sk.orchestration(len(params), "\n".join(lines))


def make_artifact(root: Path, case: str, platform: str = "a2a3sim", cpp_edit=None) -> Path:
    pto, func, kparams, core, params = CASES[case]
    root.mkdir(parents=True, exist_ok=True)
    cpp = _ptoas_cpp(DATA / pto, root / f"{func}.ptoas.cpp")
    if cpp_edit is not None:
        cpp = cpp_edit(cpp)
    source = wrap_kernel(cpp, func, [KernelParam(n, "tensor", t) for n, t in kparams])
    meta = [sk.tensor_param(n, d, s, dt) for n, d, s, dt in params]
    return sk.write_artifact(root, case, _orchestration(params, core), [sk.Kernel(0, func, core, source)], meta,
                             platform=platform)


@pytest.fixture(scope="module")
def arts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("ptoas")
    return {case: make_artifact(base / case, case) for case in CASES}


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def test_add_softmax_matmul_match_numpy(arts: dict[str, Path]) -> None:
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((128, 128), np.float32), rng.standard_normal((128, 128), np.float32)
    x = rng.standard_normal((64, 128), np.float32) * 4
    ma, mb = (rng.standard_normal((64, 64)).astype(np.float16) for _ in range(2))
    with ChipWorker() as w:
        np.testing.assert_allclose(w.run(arts["add"], a, b), a + b, rtol=1e-6, atol=0)
        np.testing.assert_allclose(w.run(arts["softmax"], x), _softmax(x), rtol=1e-5, atol=1e-7)
        got = w.run(arts["matmul"], ma, mb)
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, ma.astype(np.float32) @ mb.astype(np.float32), rtol=1e-4, atol=1e-4)


def test_a5sim_builds_and_runs(tmp_path: Path) -> None:
    art = make_artifact(tmp_path / "add5", "add", platform="a5sim")
    a = np.ones((128, 128), np.float32)
    with ChipWorker(RunConfig(platform="a5sim")) as w:
        np.testing.assert_array_equal(w.run(art, a, a), a * 2)
    assert (art / "kernels" / "aiv" / "add_128x128_f32.so").is_file()


def test_tile_overflow_becomes_kernel_fault(tmp_path: Path) -> None:
    art = make_artifact(tmp_path / "ovf", "add", cpp_edit=lambda s: s.replace("= 131072;", "= 16777216;"))
    a = np.ones((128, 128), np.float32)
    with ChipWorker() as w, pytest.raises(KernelFaultError) as exc:
        w.run(art, a, a)
    assert "kernel fault in task 0 (kernel 'add_128x128_f32', func_id 0)" in str(exc.value)


def test_harness_run_and_benchmark(arts: dict[str, Path]) -> None:
    rng = np.random.default_rng(1)
    x = rng.standard_normal((64, 128), np.float32)
    res = run(arts["softmax"], x, golden=_softmax, config=RunConfig(rtol=1e-5, atol=1e-6))
    assert res.max_error < 1e-6 and res.outputs[0].shape == (64, 128) and res.device_s > 0
    with pytest.raises(AssertionError, match="out of tolerance"):
        run(arts["softmax"], x, golden=lambda x: _softmax(x) + 1e-3, config=RunConfig(rtol=1e-5, atol=1e-6))
    a = np.ones((128, 128), np.float32)
    out = np.zeros_like(a)
    nan_golden = np.full_like(a, 2.0)
    nan_golden[0, 0] = np.nan  # don't care
    assert run(arts["add"], a, a, out, golden=nan_golden).max_error == 0.0
    bench = benchmark(arts["add"], a, a, out, warmup=1, rounds=5)
    assert bench.rounds == 5 and bench.host_median_us >= bench.device_median_us > 0
    assert "rounds" in str(bench)
