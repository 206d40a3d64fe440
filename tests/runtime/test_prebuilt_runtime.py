"""The install's prebuilt sim runtime (``python -m pypto.runtime.prebuild``): a run on a fresh cache takes
the library from it and starts no g++; a damaged prebuilt copy is skipped and the cache builds its own."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from rt_marks import needs_gxx

from pypto.runtime import build, prebuild

pytestmark = [needs_gxx, pytest.mark.sim]

PLATFORM, RUNTIME = "a2a3sim", "tensormap_and_ringbuffer"
SCRIPT = textwrap.dedent('''
    import json, sys
    from pypto.runtime import build
    lib = build.runtime_library("a2a3sim", "tensormap_and_ringbuffer")
    print(json.dumps({"lib": str(lib)}))
''')


@pytest.fixture
def prebuilt(tmp_path: Path, sim_cache: Path) -> Path:
    """A prebuilt dir holding this session's a2a3sim runtime library (and the compiler stamp)."""
    lib = prebuild.prebuild(sim_cache, (PLATFORM,), (RUNTIME,), extras=False)[0]
    dest = tmp_path / "prebuilt"
    if (sim_cache / "compiler").is_dir():  # the stamp lives where this process first asked g++ for its version
        shutil.copytree(sim_cache / "compiler", dest / "compiler")
    (dest / "runtime").mkdir(parents=True)
    for p in (lib, Path(f"{lib}.sha256")):
        shutil.copy2(p, dest / "runtime" / p.name)
    return dest


def _run(tmp_path: Path, prebuilt: Path) -> tuple[Path, list[str]]:
    real = shutil.which("g++")
    bin_dir, log = tmp_path / "bin", tmp_path / "gxx.log"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "g++").write_text(f'#!/bin/sh\necho "$*" >> "{log}"\nexec "{real}" "$@"\n')
    (bin_dir / "g++").chmod(0o755)
    cache = tmp_path / f"cache{len(list(tmp_path.glob('cache*')))}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYPTO_")}
    env.update(PYPTO_CACHE_DIR=str(cache), PYPTO_PREBUILT_DIR=str(prebuilt),
               PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    proc = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env, timeout=600,
                          check=False)
    assert proc.returncode == 0, proc.stderr
    started = log.read_text().splitlines() if log.exists() else []
    log.unlink(missing_ok=True)
    return Path(json.loads(proc.stdout.strip().splitlines()[-1])["lib"]), started


def test_a_fresh_cache_uses_the_prebuilt_runtime_and_starts_no_gxx(tmp_path: Path, prebuilt: Path) -> None:
    lib, started = _run(tmp_path, prebuilt)
    # no build; the counting shim is another compiler path, so its identity is asked for once (the real
    # g++ finds the prebuilt dir's stamp of itself and is not started at all)
    assert lib.parent == prebuilt / "runtime" and started in ([], ["--version"])


def test_a_damaged_prebuilt_library_is_skipped_and_built_in_the_cache(tmp_path: Path, prebuilt: Path) -> None:
    copy = next((prebuilt / "runtime").glob("*.so"))
    copy.write_bytes(copy.read_bytes()[:1000])  # truncated: its digest no longer matches
    lib, started = _run(tmp_path, prebuilt)
    assert prebuilt not in lib.parents and lib.name == copy.name  # the same key, built in the fresh cache
    assert any("-c" in line.split() for line in started)
    assert copy.stat().st_size == 1000  # the install's dir is only read


def test_a_cache_override_ignores_the_prebuilt_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(build, "_cache_override", [])  # this folder's session cache is an override
    monkeypatch.setenv("PYPTO_PREBUILT_DIR", str(tmp_path))
    assert build.prebuilt_dir() == tmp_path
    monkeypatch.setenv("PYPTO_PREBUILT_DIR", "none")
    assert build.prebuilt_dir() is None  # turned off
    monkeypatch.delenv("PYPTO_PREBUILT_DIR")
    assert build.prebuilt_dir() == build.PREBUILT_DIR
    with build.use_cache_dir(tmp_path):
        assert build.prebuilt_dir() is None


def test_prebuild_command_prints_the_libraries(sim_cache: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert prebuild.main(["--dir", str(sim_cache), "--platform", PLATFORM, "--runtime", RUNTIME, "--no-extras"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert Path(out[0]).is_file()
    assert out[-1].startswith(f"prebuilt 1 runtime libraries and 1 kernel precompiled headers into {sim_cache}")
    header = Path(out[1])  # the kernels' precompiled prelude, its .gch beside it
    assert header.parent.name == f"pch-{PLATFORM}" and header.with_name(header.name + ".gch").is_file()


def test_a_kernel_header_in_the_prebuilt_dir_is_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The install's .gch serves a cache that has none; a damaged one is skipped and the cache builds its own."""
    from pypto.runtime import kernel_pch

    installed = prebuild.prebuild_pch(tmp_path / "prebuilt", (PLATFORM,))[0]
    monkeypatch.setenv("PYPTO_PREBUILT_DIR", str(tmp_path / "prebuilt"))
    monkeypatch.setattr(build, "_cache_override", [])
    monkeypatch.setattr(build, "_settings_cache_dir", lambda: tmp_path / "cache")
    kernel_pch.forget()
    assert build.kernel_pch(PLATFORM) == installed
    gch = installed.with_name(installed.name + ".gch")
    data = bytearray(gch.read_bytes())
    data[len(data) // 2] ^= 0xFF
    gch.write_bytes(bytes(data))
    kernel_pch.forget()
    own = build.kernel_pch(PLATFORM)
    assert own is not None and own != installed and own.is_relative_to(tmp_path / "cache")
    kernel_pch.forget()


def test_prebuild_core_starts_nothing_when_the_core_object_is_there(sim_cache: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    build.runtime_library(PLATFORM, RUNTIME)  # the session cache holds the core object now
    started: list[object] = []
    monkeypatch.setattr(build, "_submit_background", lambda fn, *args: started.append(args))
    build.prebuild_core()
    assert started == []  # a warm run pays no thread for it
    core = next((sim_cache / "runtime" / "obj").glob("core-*.o"))
    moved = core.with_name(core.name + ".away")
    core.rename(moved)
    try:
        build.prebuild_core()
        assert len(started) == 1 and started[0][0] == "core"  # missing: built in the background
    finally:
        moved.rename(core)
