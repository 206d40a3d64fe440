"""The runtime's extras (comm tasks, DFX recording) are built and loaded only when a run needs them.

A plain single-chip run builds the core and variant objects only and starts no comm thread; the first
run with DFX flags, or the first comm context, builds the extras library once and loads it; a runtime
library that has not loaded it refuses such a run with a clear error instead of crashing.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import numpy as np
import pytest
import simkit as sk
from rt_marks import needs_gxx

from pypto.errors import ToolchainError
from pypto.runtime import ChipWorker, RunConfig, build, native
from pypto.runtime.distributed import CommContext, RankArena, window_layout
from pypto.toolchain import cachefs

pytestmark = [needs_gxx, pytest.mark.sim]

ADD_BODY = """\
    PTO2_SCOPE() {
        CoreTaskArgs k;
        k.add_input(orch_args.tensor(0).ref());
        k.add_input(orch_args.tensor(1).ref());
        k.add_output(orch_args.tensor(2).ref());
        k.add_scalar((uint64_t)0);
        rt_submit_aiv_task(0, k);
    }
"""
BARRIER_BODY = """\
    const ChipTensor& bar = orch_args.tensor(0).ref();
    PTO2_SCOPE() { rt_comm_barrier(bar); }
"""
N = [64]
ABO = [sk.tensor_param("a", "In", N), sk.tensor_param("b", "In", N), sk.tensor_param("out", "Out", N)]
DFX = RunConfig(enable_chip_swimlane=1, enable_dep_gen=True)


@pytest.fixture
def cache(tmp_path: Path):
    """A fresh build cache: its runtime libraries are new files, loaded without extras."""
    with build.use_cache_dir(tmp_path / "cache") as path:
        yield path


@pytest.fixture(scope="module")
def add_art(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("extras-arts")
    return sk.write_artifact(base / "add", "add", sk.orchestration(3, ADD_BODY),
                             [sk.Kernel(0, "add_k", "aiv", sk.ADD_KERNEL)], ABO)


@pytest.fixture(scope="module")
def barrier_art(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("extras-arts")
    return sk.write_artifact(base / "bar", "bar", sk.orchestration(1, BARRIER_BODY), [],
                             [sk.tensor_param("bar", "InOut", [1], "int32")])


def _extras_files(cache: Path) -> list[str]:
    runtime = cache / "runtime"
    return sorted(p.name for p in [*runtime.glob("libpto_sim_extras_*"), *runtime.glob("obj/extras-*")])


def _threads() -> int:
    return len(os.listdir("/proc/self/task"))


def _add(worker: ChipWorker, art: Path, config: RunConfig | None = None) -> None:
    a, b = np.arange(64, dtype=np.float32), np.ones(64, np.float32)
    out = np.zeros(64, np.float32)
    worker.run(art, a, b, out, config=config)
    np.testing.assert_array_equal(out, a + b)


def test_a_plain_run_builds_no_extras_and_starts_no_comm_thread(cache: Path, add_art: Path) -> None:
    build.runtime_library("a2a3sim", "tensormap_and_ringbuffer")
    before = _threads()
    with ChipWorker() as w:
        assert _threads() - before == 3 * 8  # the core threads only: no comm thread
        _add(w, add_art)
        assert not native.has_extras(w._native)
    assert _extras_files(cache) == []
    objs = sorted(p.name.split("-")[0] for p in (cache / "runtime" / "obj").glob("*.o"))
    assert objs == ["core", "variant"]


def test_a_dfx_run_builds_the_extras_once_and_records(cache: Path, add_art: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[str] = []
    real = build.compile_so

    def counting(argv: list[str], out: Path, what: str, cwd: Path | None = None) -> Path:
        built.append(out.name)
        return real(argv, out, what, cwd)

    monkeypatch.setattr(build, "compile_so", counting)
    with ChipWorker() as w:
        _add(w, add_art)
        assert not any(n.startswith(("extras", "libpto_sim_extras")) for n in built)
        _add(w, add_art, DFX)
        assert native.has_extras(w._native)
        assert (w.last_dfx_dir / "deps.json").is_file()
    extras = [n for n in built if n.startswith(("extras", "libpto_sim_extras"))]
    assert len(extras) == 2 and extras[1] == build._extras_target().name  # one object, one library
    a5 = sk.write_artifact(add_art.parent / "add-a5", "add", sk.orchestration(3, ADD_BODY),
                           [sk.Kernel(0, "add_k", "aiv", sk.ADD_KERNEL)], ABO, platform="a5sim")
    with ChipWorker(RunConfig(platform="a5sim")) as w:  # another runtime library: the same extras
        _add(w, a5, RunConfig(platform="a5sim", enable_dep_gen=True))
        assert (w.last_dfx_dir / "deps.json").is_file()
    assert [n for n in built if n.startswith(("extras", "libpto_sim_extras"))] == extras


def _nm(lib: Path, *flags: str) -> str:
    return subprocess.run(["nm", "-D", "-C", *flags, os.fspath(lib)], capture_output=True, text=True, check=True).stdout


def test_runtime_libraries_export_only_their_c_api_and_the_extras_import_nothing(cache: Path) -> None:
    """Several runtime libraries share a process (RTLD_GLOBAL): none may bind another's internals."""
    core = build.runtime_library("a2a3sim", "tensormap_and_ringbuffer")
    extras = build.runtime_extras()
    for lib in (core, extras):
        assert "ptosim::" not in _nm(lib, "--defined-only")
    assert "pto_sim_run" in _nm(core, "--defined-only") and "pto_sim_extras" in _nm(extras, "--defined-only")
    assert "ptosim" not in _nm(extras, "-u") and "pto_sim" not in _nm(extras, "-u")


def test_two_runtime_libraries_keep_their_own_extras(cache: Path, add_art: Path) -> None:
    """A second library in the process (a5sim) loads its extras; the first one's DFX runs still work."""
    a5 = sk.write_artifact(add_art.parent / "add-a5-own", "add", sk.orchestration(3, ADD_BODY),
                           [sk.Kernel(0, "add_k", "aiv", sk.ADD_KERNEL)], ABO, platform="a5sim")
    with ChipWorker() as w2, ChipWorker(RunConfig(platform="a5sim")) as w5:
        _add(w2, add_art)  # loaded first, no extras
        _add(w5, a5, RunConfig(platform="a5sim", enable_dep_gen=True))
        assert native.has_extras(w5._native) and not native.has_extras(w2._native)
        _add(w2, add_art, DFX)
        assert (w2.last_dfx_dir / "deps.json").is_file()


def test_a_comm_context_builds_the_extras_and_starts_the_comm_thread(cache: Path, barrier_art: Path) -> None:
    offs, region = window_layout([4])
    build.runtime_library("a2a3sim", "tensormap_and_ringbuffer")
    with RankArena(1, region) as arena:
        before = _threads()
        with ChipWorker() as w:
            assert _threads() - before == 3 * 8 and _extras_files(cache) == []
            w.set_comm_context(CommContext.for_rank(arena, 0))
            assert _threads() - before == 3 * 8 + 1  # the comm thread, started with the first context
            assert _extras_files(cache) and native.has_extras(w._native)
            w.set_comm_context(CommContext.for_rank(arena, 0))  # again: still one comm thread
            assert _threads() - before == 3 * 8 + 1
            w.run(barrier_art, arena.view(0, offs[0], 1, np.int32))
            assert list(arena.view(0, offs[0], 1, np.int32)) == [1]  # one barrier generation


def test_a_comm_task_without_a_context_needs_no_extras(cache: Path, barrier_art: Path) -> None:
    with ChipWorker() as w, pytest.raises(native.OrchestrationError, match="runs without a comm context"):
        w.run(barrier_art, np.zeros(1, np.int32))
    assert _extras_files(cache) == []


def test_a_runtime_library_without_the_extras_refuses_dfx_and_comm(cache: Path, add_art: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ChipWorker, "_need_extras", lambda self: None)  # as a caller that skips the loading
    offs, region = window_layout([4])
    with ChipWorker() as w:
        with pytest.raises(native.SimRuntimeError, match="DFX recording needs the runtime extras library"):
            _add(w, add_art, DFX)
        _add(w, add_art)  # the worker is fine
        with RankArena(1, region) as arena, pytest.raises(native.SimRuntimeError,
                                                          match="comm tasks need the runtime extras library"):
            w.set_comm_context(CommContext.for_rank(arena, 0))
        w.set_comm_context(None)
        _add(w, add_art)


def test_a_library_that_is_not_the_extras_is_refused(cache: Path) -> None:
    lib = native.load(build.runtime_library("a2a3sim", "tensormap_and_ringbuffer"))
    other = build.runtime_library("a5sim", "host_build_graph")  # loadable, but has no extras table
    with pytest.raises(native.LoadError, match="is not a runtime extras library of version"):
        native.load_extras(lib, other)
    with pytest.raises(native.LoadError, match="runtime extras: dlopen failed"):
        native.load_extras(lib, cache / "missing.so")
    assert not native.has_extras(lib)


def test_an_extras_library_the_loader_refuses_is_rebuilt(cache: Path, add_art: Path) -> None:
    """A cached extras file whose digest matches but that does not load is removed and rebuilt once."""
    out = build._extras_target()
    tmp = cachefs.temp_for(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp.write_bytes(b"not an ELF object")
    cachefs.publish(tmp, out)
    with ChipWorker() as w:
        _add(w, add_art, DFX)
        assert native.has_extras(w._native) and (w.last_dfx_dir / "deps.json").is_file()
    assert out.read_bytes()[:4] == b"\x7fELF"


def test_an_extras_library_that_never_loads_is_a_toolchain_error(cache: Path, add_art: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(native_lib: native.NativeLib, path: Path) -> None:
        raise native.LoadError(f"runtime extras: dlopen failed: {path}: bad", 6)

    monkeypatch.setattr(native, "load_extras", refuse)
    with ChipWorker() as w, pytest.raises(ToolchainError, match="the simulation runtime extras library .* cannot be"):
        _add(w, add_art, DFX)


def test_a_jit_compile_for_a_dfx_run_prebuilds_the_extras(monkeypatch: pytest.MonkeyPatch) -> None:
    from pypto.jit import decorator

    calls: list[str] = []
    monkeypatch.setattr(build, "prebuild_extras", lambda: calls.append("extras"))
    monkeypatch.setattr(build, "prebuild_runtime", lambda platform, runtime: calls.append(f"{platform}/{runtime}"))
    decorator._prebuild_runtime("a2a3sim", "tensormap_and_ringbuffer")
    assert calls == ["a2a3sim/tensormap_and_ringbuffer"]  # a plain run: no extras
    calls.clear()
    decorator._prebuild_runtime("a2a3sim", "tensormap_and_ringbuffer", dfx=True)
    assert calls == ["extras", "a2a3sim/tensormap_and_ringbuffer"]
    calls.clear()
    decorator._prebuild_runtime("a2a3", "tensormap_and_ringbuffer", dfx=True)  # hardware: nothing to build here
    assert "extras" not in calls


def test_a_distributed_program_builds_the_runtime_and_extras_before_forking(monkeypatch: pytest.MonkeyPatch) -> None:
    from pypto.jit.distributed import worker as dist

    calls: list[str] = []
    monkeypatch.setattr(build, "runtime_library", lambda platform, runtime: calls.append(f"{platform}/{runtime}"))
    monkeypatch.setattr(build, "runtime_extras", lambda: calls.append("extras"))
    dist._build_chips({}, "a2a3sim")
    assert calls == ["a2a3sim/tensormap_and_ringbuffer", "extras"]
