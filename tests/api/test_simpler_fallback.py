"""``from simpler.worker import Worker`` without upstream's simpler: pypto's stand-in, and a real one's precedence."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from pypto.errors import UserError
from pypto.simpler_fallback import SimplerFallbackFinder, install_fallback, is_fallback, uninstall_fallback


def _forget_simpler() -> None:
    for name in [n for n in sys.modules if n == "simpler" or n.startswith("simpler.")]:
        del sys.modules[name]


def _simpler_worker():
    """``simpler.worker``, imported by name: no extra installs it (the stand-in or a real one serves it)."""
    return importlib.import_module("simpler.worker")


@pytest.fixture(autouse=True)
def clean_simpler():
    _forget_simpler()
    install_fallback()
    yield
    _forget_simpler()
    install_fallback()


@pytest.fixture(scope="module", params=["a2a3sim", "a5sim"])
def compiled(request, tmp_path_factory: pytest.TempPathFactory):
    """AddProg (out = a + b, 64x64 fp32) compiled for each simulator."""
    from upstream_programs import AddProg

    from pypto.compiled import CompiledProgram
    from pypto.ir import OptimizationStrategy
    from pypto.ir.options import backend_for_platform
    from pypto.runtime import compile_program

    out = tmp_path_factory.mktemp("simpler_fallback") / request.param
    compile_program(AddProg, out, strategy=OptimizationStrategy.Default,
                    backend_type=backend_for_platform(request.param))
    return CompiledProgram.from_dir(out, platform=request.param)


def _manual(compiled, *args, cfg=None):
    Worker = _simpler_worker().Worker

    w = Worker(level=2, device_id=0, platform=compiled.platform, runtime=compiled.runtime_name)
    w.init()
    try:
        orch_args, coerced, return_style = compiled.build_orch_args(*args, worker=w)
        cid = w.register(compiled.chip_callable)
        w.run(cid, orch_args, cfg if cfg is not None else compiled.build_call_config())
        w.unregister(cid)
    finally:
        w.close()
    return coerced, return_style


def test_manual_worker_matches_direct_call(compiled, torch) -> None:
    a, b = torch.randn(64, 64), torch.randn(64, 64)
    c_manual, c_direct = torch.zeros(64, 64), torch.zeros(64, 64)
    coerced, return_style = _manual(compiled, a, b, c_manual, cfg=compiled.build_call_config(aicpu_thread_num=3))
    compiled(a, b, c_direct)
    assert return_style is False and coerced[2] is c_manual
    np.testing.assert_array_equal(c_manual.numpy(), c_direct.numpy())
    np.testing.assert_allclose(c_manual.numpy(), a.numpy() + b.numpy(), rtol=1e-6, atol=1e-6)
    assert is_fallback(sys.modules["simpler"]) and is_fallback(sys.modules["simpler.worker"])


def test_manual_worker_return_style_allocates_output(compiled, torch) -> None:
    a, b = torch.full((64, 64), 3.0), torch.full((64, 64), 4.0)
    coerced, return_style = _manual(compiled, a, b)
    assert return_style is True and compiled.chip_callable.platform == compiled.platform
    np.testing.assert_array_equal(coerced[compiled.output_indices[0]].numpy(), np.full((64, 64), 7.0, np.float32))


def test_worker_refuses_what_it_cannot_do(compiled, torch) -> None:
    Worker = _simpler_worker().Worker

    with pytest.raises(NotImplementedError, match=r"level=3.*runs one chip \(level=2\)") as level:
        Worker(level=3)
    assert isinstance(level.value, UserError) and "DistributedWorker" in (level.value.hint or "")
    with pytest.raises(RuntimeError, match=r"platform='a2a3'.*runs only the simulators") as platform:
        Worker(level=2, platform="a2a3")
    assert isinstance(platform.value, UserError) and "needs the real simpler runtime" in (platform.value.hint or "")
    w = Worker(level=2, platform=compiled.platform, runtime=compiled.runtime_name)
    with pytest.raises(RuntimeError, match=r"register\(\): call init\(\) first"):
        w.register(compiled.chip_callable)
    w.init()
    try:
        with pytest.raises(TypeError, match="level 2 takes a ChipCallable .* got CompiledProgram"):
            w.register(compiled)
        handle = w.register(compiled.chip_callable)
        w.unregister(handle)
        with pytest.raises(KeyError, match="is not registered on this worker"):
            w.run(handle, [], None)
        with pytest.raises(KeyError, match="was never registered"):
            w.unregister(handle)
    finally:
        w.close()
    with pytest.raises(RuntimeError, match=r"run\(\): call init\(\) first \(or the worker was closed\)"):
        w.run(handle, [], None)


def test_runtime_mismatch_is_named(compiled, torch) -> None:
    Worker = _simpler_worker().Worker

    w = Worker(level=2, platform=compiled.platform, runtime="host_build_graph")
    w.init()
    try:
        with pytest.raises(ValueError, match="requires runtime='tensormap_and_ringbuffer'"):
            w.register(compiled.chip_callable)
    finally:
        w.close()


def test_a_real_simpler_takes_precedence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pkg = tmp_path / "simpler"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("REAL = True\n")
    (pkg / "worker.py").write_text("class Worker:\n    real = True\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.invalidate_caches()
    simpler = importlib.import_module("simpler")
    Worker = _simpler_worker().Worker

    assert simpler.REAL and Worker.real and not is_fallback(simpler)
    (pkg / "worker.py").unlink()  # a real simpler without the submodule: the stand-in does not fill it in
    _forget_simpler()
    importlib.invalidate_caches()
    with pytest.raises(ModuleNotFoundError, match="simpler.worker"):
        importlib.import_module("simpler.worker")


def test_uninstall_removes_the_finder() -> None:
    simpler = importlib.import_module("simpler")

    assert is_fallback(simpler)
    uninstall_fallback()
    assert not any(isinstance(f, SimplerFallbackFinder) for f in sys.meta_path)
    assert "simpler" not in sys.modules
    with pytest.raises(ModuleNotFoundError, match="simpler"):
        importlib.import_module("simpler")
    install_fallback()
    install_fallback()  # once only
    assert sum(isinstance(f, SimplerFallbackFinder) for f in sys.meta_path) == 1
    assert sys.meta_path[-1].__class__ is SimplerFallbackFinder


def test_importing_compiled_installs_it() -> None:
    code = ("import sys, pypto; assert not any(type(f).__name__ == 'SimplerFallbackFinder' for f in sys.meta_path); "
            "import pypto.compiled, simpler; print(simpler.__pypto_fallback__, 'pypto.runtime' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["True", "True"]
