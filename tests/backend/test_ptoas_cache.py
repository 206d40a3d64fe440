"""The ptoas output cache: hits and misses, what the key covers, self-healing, the LRU bound, concurrency."""

from __future__ import annotations

import dataclasses
import multiprocessing
import os
import subprocess
from pathlib import Path

import irbuild as B
import pytest

from pypto.artifact.model import KernelUnit
from pypto.backend import assemble
from pypto.backend.ptoas_cache import SUFFIX, CachedOutput, PtoasCache
from pypto.codegen import generate

MB = 1 << 20


def _fake_ptoas(tmp_path: Path, body: str = "v1") -> Path:
    exe = tmp_path / f"ptoas-{body}"
    exe.write_text(f"#!/bin/sh\n# {body}\n")
    return exe


def _cache(tmp_path: Path, max_bytes: int = 64 * MB, body: str = "v1") -> PtoasCache:
    return PtoasCache(tmp_path / "cache", _fake_ptoas(tmp_path, body), max_bytes)


def test_a_miss_then_a_hit(tmp_path):
    cache = _cache(tmp_path)
    key = cache.key("module {}\n", ["--enable-insert-sync"])
    assert cache.get(key) is None and cache.misses == 1
    cache.put(key, CachedOutput("void k() {}\n", "# exit status 0\n"))
    assert cache.get(key) == CachedOutput("void k() {}\n", "# exit status 0\n") and cache.hits == 1
    assert [p.name for p in (tmp_path / "cache").iterdir()] == [key + SUFFIX]  # one file per entry, no temp left


def test_the_key_covers_text_flags_and_identity_but_no_path(tmp_path):
    cache = _cache(tmp_path)
    base = cache.key("module {}\n", ["--enable-insert-sync"])
    assert cache.key("module {}\n", ["--enable-insert-sync"]) == base
    assert cache.key("module { }\n", ["--enable-insert-sync"]) != base
    assert cache.key("module {}\n", []) != base
    assert _cache(tmp_path, body="v2").key("module {}\n", ["--enable-insert-sync"]) != base  # another ptoas
    moved = PtoasCache(tmp_path / "elsewhere", _fake_ptoas(tmp_path), MB)  # the cache's own place is no input
    assert moved.key("module {}\n", ["--enable-insert-sync"]) == base


def test_source_locations_are_not_part_of_the_key(tmp_path):
    from pypto.backend.ptoas_cache import without_locs

    a = '%t = pto.alloc_tile : !pto.tile_buf<loc=ub, dtype=f32> loc("k.py":10:5)\n'
    b = '%t = pto.alloc_tile : !pto.tile_buf<loc=ub, dtype=f32> loc("k.py":12:9)\n'
    assert without_locs(a) == without_locs(b) == "%t = pto.alloc_tile : !pto.tile_buf<loc=ub, dtype=f32>\n"


@pytest.mark.parametrize("damage", ["truncate", "flip", "garbage", "empty", "no_cpp"])
def test_a_damaged_entry_is_a_miss_and_is_replaced(tmp_path, damage):
    cache = _cache(tmp_path)
    key = cache.key("module {}\n", [])
    cache.put(key, CachedOutput("void k() {}\n" * 50, "log\n"))
    path = cache.path(key)
    data = path.read_bytes()
    bad = {"truncate": data[: len(data) // 2], "flip": data[:-3] + bytes([data[-3] ^ 1]) + data[-2:],
           "garbage": os.urandom(300), "empty": b""}.get(damage)
    if bad is None:  # a well-formed entry with no C++ in it
        import hashlib

        body = b'{"cpp": "", "log": ""}'
        bad = f"pypto-ptoas-cache 1 {hashlib.sha256(body).hexdigest()}\n".encode() + body
    path.write_bytes(bad)
    assert cache.get(key) is None  # never an error
    assert not path.exists()  # removed, so the next store publishes a whole one
    cache.put(key, CachedOutput("void k2() {}\n", "log\n"))
    assert cache.get(key) == CachedOutput("void k2() {}\n", "log\n")


def test_the_bound_evicts_the_least_recently_used_entries(tmp_path):
    cache = _cache(tmp_path, max_bytes=3 * 1200)  # room for three entries of ~1.1 kB
    keys = [cache.key(f"unit {i}", []) for i in range(4)]
    for i, key in enumerate(keys[:3]):
        cache.put(key, CachedOutput("x" * 1000, ""))
        os.utime(cache.path(key), ns=(10**18 + i * 10**9,) * 2)  # put in order 0, 1, 2
    assert cache.get(keys[0]) is not None  # used last: 1 is now the least recently used
    cache.put(keys[3], CachedOutput("y" * 1000, ""))
    assert not cache.path(keys[1]).exists()
    assert all(cache.path(k).exists() for k in (keys[0], keys[2], keys[3]))
    assert sum(p.stat().st_size for p in (tmp_path / "cache").iterdir()) <= cache.max_bytes


def test_no_cache_when_the_bound_is_zero(tmp_path):
    assert PtoasCache.from_settings(tmp_path, _fake_ptoas(tmp_path), 0) is None
    assert PtoasCache.from_settings(tmp_path, tmp_path / "missing-ptoas", 8) is None  # unreadable: run ptoas
    assert PtoasCache.from_settings(tmp_path, _fake_ptoas(tmp_path), 8).max_bytes == 8 * MB


def test_an_unwritable_cache_is_skipped(tmp_path):
    (tmp_path / "cache").write_text("a file where the directory should be")
    cache = _cache(tmp_path)
    key = cache.key("m", [])
    cache.put(key, CachedOutput("c", "l"))  # no error
    assert cache.get(key) is None


def _writer(root: str, exe: str, n: int, seed: int) -> None:
    cache = PtoasCache(Path(root), Path(exe), 4 * MB)
    for i in range(n):
        shared = cache.key("shared unit", [])
        cache.put(shared, CachedOutput(f"// writer {seed} round {i}\n" + "z" * 200_000, "log"))
        own = cache.key(f"unit {seed} {i}", [])
        cache.put(own, CachedOutput("w" * 100_000, "log"))
        for key in (shared, own):
            cache.get(key)


def test_concurrent_writers_never_leave_a_damaged_entry(tmp_path):
    exe = _fake_ptoas(tmp_path)
    root = tmp_path / "cache"
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_writer, args=(str(root), str(exe), 15, s)) for s in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    cache = PtoasCache(root, exe, 4 * MB)
    entries = [p for p in root.iterdir() if p.name.endswith(SUFFIX)]
    assert entries and not [p for p in root.iterdir() if not p.name.endswith(SUFFIX)]  # no temp file left
    for path in entries:
        found = cache.get(path.name.removesuffix(SUFFIX))
        assert found is not None and found.cpp  # every entry whole
    assert sum(p.stat().st_size for p in entries) <= 4 * MB
    assert cache.misses == 0


# -- with the real ptoas -----------------------------------------------------------------------------
def _ptoas() -> Path:
    from pypto.toolchain.ptoas import find_ptoas

    exe = find_ptoas()
    if exe is None:
        pytest.skip("ptoas 0.1.1 not installed")
    return exe


def _counting_popen(monkeypatch) -> list[list[str]]:
    runs: list[list[str]] = []

    class Counting(subprocess.Popen):  # every tool start goes through Popen (pypto.toolchain.procs.run_tool)
        def __init__(self, argv, *a, **k):
            runs.append(list(argv))
            super().__init__(argv, *a, **k)

    monkeypatch.setattr(subprocess, "Popen", Counting)
    return runs


def _gen(program):
    return generate(program, backend_type="Ascend910B", platform="a2a3sim", runtime="tensormap_and_ringbuffer")


@pytest.mark.ptoas
def test_assemble_reuses_every_unit_and_reruns_only_an_edited_one(tmp_path, monkeypatch):
    exe = _ptoas()
    cache = PtoasCache(tmp_path / "cache", exe, 64 * MB)
    art = _gen(B.ffn_swiglu_program())
    runs = _counting_popen(monkeypatch)
    first = assemble(art, tmp_path / "a", ptoas=exe, cache=cache)
    assert len(runs) == 1 and cache.misses == len(art.units)
    again = assemble(art, tmp_path / "b", ptoas=exe, cache=cache)
    assert len(runs) == 1 and cache.hits == len(art.units)  # no ptoas at all
    assert {k: v for k, v in first.items() if k.endswith(".cpp")} == {k: v for k, v in again.items() if k.endswith(".cpp")}
    name = art.units[0].name
    log = (tmp_path / "b" / "ptoas" / f"{name}.log").read_text()
    assert log.startswith(f"$ ptoas ptoas/{name}.pto -o ptoas/{name}.cpp")
    # byte-reproducible artifacts: a reused unit's log is the log of the run that made it, as it was
    assert log == (tmp_path / "a" / "ptoas" / f"{name}.log").read_text()
    edited = art.units[1]
    units = [u if u is not edited else KernelUnit(u.name, u.pto.replace("    return\n", "    return\n\n", 1), u.funcs)
             for u in art.units]
    assert units[1].pto != edited.pto
    assemble(dataclasses.replace(art, units=units), tmp_path / "c", ptoas=exe, cache=cache)
    assert len(runs) == 2 and f"ptoas/{edited.name}.pto" in runs[1]  # the edited unit alone, in its own run


@pytest.mark.ptoas
def test_assemble_heals_a_damaged_entry(tmp_path, monkeypatch):
    exe = _ptoas()
    cache = PtoasCache(tmp_path / "cache", exe, 64 * MB)
    art = _gen(B.add_program())
    first = assemble(art, tmp_path / "a", ptoas=exe, cache=cache)
    (entry,) = (tmp_path / "cache").iterdir()
    entry.write_bytes(entry.read_bytes()[:100])
    runs = _counting_popen(monkeypatch)
    again = assemble(art, tmp_path / "b", ptoas=exe, cache=cache)
    assert len(runs) == 1  # ptoas ran again for it
    assert again[f"ptoas/{art.units[0].name}.cpp"] == first[f"ptoas/{art.units[0].name}.cpp"]
    assert cache.get(entry.name.removesuffix(SUFFIX)) is not None  # and the entry is whole again
