"""Caches heal themselves: a truncated, emptied or garbage cache object is detected before use, removed
with a warning and rebuilt; the run succeeds, and the next run is clean (findings D2, D6, D7, D8 and
the cache file modes)."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from relkit import KERNEL_SCRIPT, Outcome, env_for, needs_gxx, script

from pypto.errors import ToolchainError
from pypto.runtime import build
from pypto.toolchain import cachefs
from pypto.toolchain.ptoas import find_ptoas, installed_wheel

pytestmark = [needs_gxx, pytest.mark.sim]


def _warm(root: Path, text: str) -> tuple[Path, dict[str, str]]:
    kern = root / "kern.py"
    kern.write_text(text)
    env = env_for(root / "cache", root / "build")
    out = script(kern, env)
    assert out.code == 0 and "RESULT OK" in out.stdout, out.describe()
    return kern, env


@pytest.fixture(scope="module")
def warm(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    return _warm(tmp_path_factory.mktemp("heal"), KERNEL_SCRIPT)


@pytest.fixture(scope="module")
def warm_dfx(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """The kernel run with DFX on: it builds (and heals) the runtime extras too."""
    dfx_call = "from pypto.runtime import RunConfig\n    addmul(a, b, out, config=RunConfig(enable_dep_gen=True))\n"
    return _warm(tmp_path_factory.mktemp("heal-dfx"), KERNEL_SCRIPT.replace("addmul(a, b, out)\n", dfx_call))


def _one(cache: Path, pattern: str) -> Path:
    found = [p for p in cache.glob(pattern) if not p.name.endswith(cachefs.DIGEST_SUFFIX)]
    assert len(found) == 1, (pattern, found)
    return found[0]


def _truncate(p: Path) -> None:
    data = p.read_bytes()
    p.write_bytes(data[: max(1, len(data) // 3)])


def _empty(p: Path) -> None:
    p.write_bytes(b"")


def _garbage(p: Path) -> None:
    p.write_bytes(os.urandom(max(64, p.stat().st_size)))


def _digest_garbage(p: Path) -> None:
    cachefs.digest_path(p).write_text("not a digest\n")


CORRUPT: dict[str, Callable[[Path], None]] = {"truncated": _truncate, "empty": _empty, "garbage": _garbage,
                                              "digest-garbage": _digest_garbage}
TARGETS = {
    "kernel-so": "sim/kernels-a2a3sim/addmul_incore_0-*.so",
    "orchestration-so": "sim/orchestration/addmul-*.so",
    "runtime-so": "sim/runtime/libpto_sim_a2a3sim_tensormap_and_ringbuffer_*.so",
    "runtime-obj": "sim/runtime/obj/core-*.o",
    "extras-so": "sim/runtime/libpto_sim_extras_*.so",
    "extras-obj": "sim/runtime/obj/extras-*.o",
    "jit-kernel-cpp": "jit/_jit_addmul-*/kernels/aiv/addmul_incore_0.cpp",
    "jit-orch-cpp": "jit/_jit_addmul-*/orchestration/addmul.cpp",
    "jit-meta": "jit/_jit_addmul-*/compiled_meta.json",
}
CASES = [("kernel-so", k) for k in CORRUPT] + [
    ("orchestration-so", "truncated"), ("runtime-so", "truncated"), ("runtime-so", "garbage"),
    ("runtime-obj", "garbage"), ("extras-so", "truncated"), ("extras-so", "garbage"), ("extras-obj", "garbage"),
    ("jit-kernel-cpp", "empty"), ("jit-kernel-cpp", "truncated"),
    ("jit-kernel-cpp", "garbage"), ("jit-orch-cpp", "truncated"), ("jit-meta", "garbage")]


def _ok(out: Outcome) -> None:
    assert out.code == 0 and "RESULT OK" in out.stdout, out.describe()
    assert "Traceback" not in out.stderr, out.describe()


@pytest.mark.parametrize(("target", "kind"), CASES, ids=[f"{t}-{k}" for t, k in CASES])
def test_corrupt_cache_entry_is_rebuilt_with_a_warning(request: pytest.FixtureRequest, target: str,
                                                       kind: str) -> None:
    # the extras are read only by a run with DFX (or comm tasks)
    kern, env = request.getfixturevalue("warm_dfx" if target.startswith("extras") else "warm")
    cache = Path(env["PYPTO_CACHE_DIR"])
    victim = _one(cache, TARGETS[target])
    CORRUPT[kind](victim)
    if target in ("runtime-obj", "extras-obj"):  # objects are read only when the library is linked again
        _one(cache, TARGETS[target.replace("-obj", "-so")]).unlink()
    first = script(kern, env)
    _ok(first)
    assert "cache:" in first.stderr and ("removing" in first.stderr or "recompiling" in first.stderr), \
        first.describe()
    second = script(kern, env)
    _ok(second)
    assert "cache:" not in second.stderr, second.describe()
    if not target.startswith("jit"):
        healed = _one(cache, TARGETS[target])
        assert cachefs.verified(healed)


def test_cached_objects_are_world_readable_and_have_no_orphans(warm: tuple[Path, dict[str, str]]) -> None:
    _, env = warm
    cache = Path(env["PYPTO_CACHE_DIR"])
    objs = [p for p in (cache / "sim").rglob("*") if p.is_file() and p.suffix in (".so", ".o")]
    assert objs
    for p in objs:
        mode = stat.S_IMODE(p.stat().st_mode)
        assert mode & 0o044 == 0o044, f"{p} has mode {oct(mode)}: a shared cache dir needs read for group/others"
    entries = list((cache / "jit").iterdir())
    assert all(stat.S_IMODE(e.stat().st_mode) & 0o055 == 0o055 for e in entries if e.is_dir())
    assert not [p for p in cache.rglob("*") if cachefs.TEMP_MARK in p.name]


def test_orphan_temp_files_of_killed_builds_are_removed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "kernels-a2a3sim"
    folder.mkdir()
    dead = subprocess.Popen(["true"])
    dead.wait()
    orphan = folder / f".k-abc.so{cachefs.TEMP_MARK}{dead.pid}-1a2b3c4d.so"
    legacy = folder / "tmpq1w2e3.so"  # mkstemp name of older builds
    live = folder / f".k-def.so{cachefs.TEMP_MARK}{os.getpid()}-5e6f7a8b.so"  # a build in progress
    keep = folder / "k-0123.so"
    for p in (orphan, legacy, live, keep):
        p.write_bytes(b"x")
        os.utime(p, (1, 1000))  # old
    os.utime(live, None)
    assert cachefs.clean_orphans(folder, force=True) == 2
    assert sorted(p.name for p in folder.iterdir()) == sorted([live.name, keep.name])


def test_non_utf8_compiler_output_is_a_toolchain_error(tmp_path: Path) -> None:
    src = tmp_path / "bad.cpp"
    src.write_bytes(b"int f() { return \xff\xfe; }\n")
    with build.use_cache_dir(tmp_path / "c"), pytest.raises(ToolchainError) as exc:
        build.compile_so([build.GXX, "-shared", "-fPIC", str(src)], tmp_path / "c" / "bad.so", "bad.cpp")
    assert "g++ could not build bad.cpp" in str(exc.value)
    assert not [p for p in (tmp_path / "c").iterdir() if cachefs.TEMP_MARK in p.name]


def test_jit_cache_key_ignores_the_build_dir(warm: tuple[Path, dict[str, str]], tmp_path: Path) -> None:
    kern, env = warm
    jit = Path(env["PYPTO_CACHE_DIR"]) / "jit"
    before = sorted(p.name for p in jit.iterdir() if not p.name.startswith("."))
    out = script(kern, {**env, "PYPTO_PROG_BUILD_DIR": str(tmp_path / "elsewhere")})
    _ok(out)
    assert sorted(p.name for p in jit.iterdir() if not p.name.startswith(".")) == before
    assert '"event": "passes' not in out.stderr  # a hit: no pass pipeline ran


@pytest.mark.skipif(installed_wheel() is None, reason="needs the pinned ptoas wheel")
@pytest.mark.parametrize("damage", ["truncate-wrapper", "empty-wrapper", "drop-lib-dir"])
def test_damaged_ptoas_shim_is_rebuilt(tmp_path: Path, damage: str) -> None:
    shim = find_ptoas(cache_dir=tmp_path)
    assert shim is not None
    good = shim.read_text()
    if damage == "truncate-wrapper":
        shim.write_text(good[: len(good) // 2])
    elif damage == "empty-wrapper":
        shim.write_text("")
    else:
        shutil.rmtree(shim.parent / "lib")
    again = find_ptoas(cache_dir=tmp_path)
    assert again == shim and again.read_text() == good
    assert subprocess.run([str(again), "--version"], capture_output=True, timeout=60).returncode == 0
