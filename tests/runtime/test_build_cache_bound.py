"""The kernel / orchestration build cache stays bounded: least recently used objects go first, never the
one just built nor any used within the grace window, each with its digest."""

from __future__ import annotations

import os
import time
from pathlib import Path

from pypto.runtime import build
from pypto.toolchain import cachefs


def _object(folder: Path, name: str, size: int, age_s: float) -> Path:
    path = folder / name
    path.write_bytes(b"x" * size)
    cachefs.digest_path(path).write_text("0" * 64 + "\n")
    then = time.time_ns() - int(age_s * 1e9)
    os.utime(path, ns=(then, then))
    return path


def test_prune_removes_least_recently_used_objects_until_the_folder_fits(tmp_path: Path) -> None:
    old = _object(tmp_path, "old-1.so", 4000, 7200)
    mid = _object(tmp_path, "mid-2.so", 4000, 3600)
    new = _object(tmp_path, "new-3.so", 4000, 1800)
    assert build.prune(tmp_path, max_bytes=9000) == 1
    assert not old.exists() and not cachefs.digest_path(old).exists()  # with its digest
    assert mid.exists() and new.exists()
    assert build.prune(tmp_path, max_bytes=9000) == 0  # fits now


def test_prune_keeps_the_object_just_built_and_recently_used_ones(tmp_path: Path) -> None:
    stale = _object(tmp_path, "stale-1.so", 4000, 7200)
    recent = _object(tmp_path, "recent-2.so", 4000, 10)  # a sibling kernel of the same program, just built
    just = _object(tmp_path, "just-3.so", 4000, 7300)
    assert build.prune(tmp_path, keep=just, max_bytes=0) == 1
    assert not stale.exists() and recent.exists() and just.exists()


def test_prune_ignores_temp_files_and_other_names(tmp_path: Path) -> None:
    tmp = _object(tmp_path, ".k-1.so.tmp-1-00000000.so", 4000, 7200)
    other = _object(tmp_path, "notes.txt", 4000, 7200)
    assert build.prune(tmp_path, max_bytes=0) == 0
    assert tmp.exists() and other.exists()


def test_prune_defaults_to_the_cache_max_mb_setting(tmp_path: Path, monkeypatch) -> None:
    big = _object(tmp_path, "big-1.so", 2 * 1024 * 1024, 7200)
    monkeypatch.setenv("PYPTO_CACHE_MAX_MB", "1")
    assert build.prune(tmp_path) == 1 and not big.exists()
    monkeypatch.setenv("PYPTO_CACHE_MAX_MB", "512")
    _object(tmp_path, "big-2.so", 2 * 1024 * 1024, 7200)
    assert build.prune(tmp_path) == 0


def test_a_cache_hit_marks_the_object_used(tmp_path: Path) -> None:
    so = _object(tmp_path, "k-1.so", 100, 7200)
    before = so.stat()
    cachefs.mark_used(so)
    after = so.stat()
    assert after.st_atime_ns > before.st_atime_ns and after.st_mtime_ns == before.st_mtime_ns
