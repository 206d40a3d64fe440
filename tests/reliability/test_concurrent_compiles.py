"""Concurrent compiles (finding D3): N processes compiling and running into one --output-dir all succeed
and leave the same bytes as a lone compile; processes using default output dirs never share one."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from relkit import EXAMPLES, cli, env_for, needs_gxx

pytestmark = [needs_gxx, pytest.mark.sim]
TARGET = f"{EXAMPLES / 'beginner' / '02_elementwise.py'}::mul_add_64"


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _spawn(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "pypto", *args], env=env, cwd=cwd, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, errors="replace")


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("conc")
    env = env_for(root / "cache", root / "build", PYPTO_JIT_CACHE="0")
    warm = cli(["compile", TARGET, "-o", str(root / "warm"), "--run"], env, root)  # runtime library, ptoas shim
    assert warm.code == 0, warm.describe()
    return env


def test_eight_processes_into_one_output_dir(env: dict[str, str], tmp_path: Path) -> None:
    same = tmp_path / "same"
    procs = [_spawn(["compile", TARGET, "-o", str(same), "--run"], env, tmp_path) for _ in range(8)]
    results = [(p.wait(timeout=600), p.stdout.read(), p.stderr.read()) for p in procs]  # type: ignore[union-attr]
    failed = [r for r in results if r[0] != 0]
    assert not failed, f"{len(failed)} of 8 failed; first: exit {failed[0][0]}\n{failed[0][2][-3000:]}"
    together = _tree(same)
    shutil.rmtree(same)
    alone = cli(["compile", TARGET, "-o", str(same), "--run"], env, tmp_path)
    assert alone.code == 0, alone.describe()
    assert together.keys() == _tree(same).keys()
    differ = [k for k, v in _tree(same).items() if together[k] != v]
    assert not differ, f"files differ from a lone compile: {differ}"
    assert not [p for p in same.rglob("*") if ".tmp-" in p.name]


def test_default_output_dirs_are_claimed_atomically(env: dict[str, str], tmp_path: Path) -> None:
    build = tmp_path / "out"
    run_env = {**env, "PYPTO_PROG_BUILD_DIR": str(build)}
    procs = [_spawn(["compile", TARGET, "--skip-ptoas", "--json"], run_env, tmp_path) for _ in range(4)]
    dirs = []
    for p in procs:
        code = p.wait(timeout=600)
        out = p.stdout.read()  # type: ignore[union-attr]
        assert code == 0, p.stderr.read()  # type: ignore[union-attr]
        dirs.append(json.loads(out)["artifact"])
    assert len(set(dirs)) == 4, dirs
    assert len(list(build.iterdir())) == 4


def test_dir_lock_locks_the_directory_itself_and_is_reentrant_on_one_thread(tmp_path: Path) -> None:
    import fcntl
    import os

    from pypto.toolchain.cachefs import dir_lock

    out = tmp_path / "art"
    with dir_lock(out), dir_lock(out, shared=True, create=False):  # a run inside a compile: no self-deadlock
        assert out.is_dir()
        other = os.open(out, os.O_RDONLY)  # another open file description: another process's view
        try:
            with pytest.raises(BlockingIOError):
                fcntl.flock(other, fcntl.LOCK_SH | fcntl.LOCK_NB)
        finally:
            os.close(other)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["art"]  # no lock file next to it
    with dir_lock(tmp_path / "never-compiled", shared=True, create=False):  # a reader creates nothing
        assert not (tmp_path / "never-compiled").exists()
    (tmp_path / "a-file").write_text("x")
    with dir_lock(tmp_path / "a-file"):  # not a directory: unlocked, and the writer reports it later
        pass
