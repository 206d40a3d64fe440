"""On-disk @pl.jit compile cache: hits without compiling, the knob, corrupt entries, keys, atomic stores."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import cached_kernels
import numpy as np
import pytest

import pypto
import pypto.driver
import pypto.language as pl
from pypto.errors import SettingsError
from pypto.jit import disk_cache
from pypto.runtime import RunConfig
from pypto.toolchain import settings
from pypto.toolchain.ptoas import find_ptoas

needs_ptoas = pytest.mark.skipif(find_ptoas() is None, reason="needs the pinned ptoas")
CFG = RunConfig(platform="a2a3sim", dump_passes=False)


def _fresh() -> pl.JITFunction:
    """A new JITFunction over the same function: an empty in-memory cache, as in a new process."""
    return pl.jit(cached_kernels.scaled_add.func)


def _args() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(3)
    a, b = (rng.standard_normal((64, 64)).astype(np.float32) for _ in range(2))
    return a, b, np.zeros_like(a)


def _entries(cache: Path) -> list[Path]:
    root = cache / "jit"
    return sorted(p for p in root.iterdir() if not p.name.startswith(".")) if root.is_dir() else []


@pytest.fixture
def compiles(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Names of the programs ir.compile (pypto.driver.compile) is asked to compile."""
    calls: list[str] = []
    real = pypto.driver.compile

    def spy(program, **kw):
        calls.append(program.name)
        return real(program, **kw)

    monkeypatch.setattr(pypto.driver, "compile", spy)
    return calls


@needs_ptoas
def test_a_new_instance_reuses_the_entry_without_compiling(cache_dir: Path, tmp_path: Path,
                                                           compiles: list[str]) -> None:
    first = _fresh().compile(*_args(), config=CFG)
    [entry] = _entries(cache_dir)
    assert entry.name.startswith("_jit_scaled_add-") and (entry / "compiled_meta.json").is_file()
    second = _fresh().compile(*_args(), config=CFG)
    assert compiles == ["_jit_scaled_add"]
    # a copy where the compile would have written: a new build_output/_jit_scaled_add_<timestamp>
    assert second.output_dir.parent == first.output_dir.parent == (tmp_path / "build_output").resolve()
    assert second.output_dir.name.startswith("_jit_scaled_add_") and second.output_dir != first.output_dir
    assert (second.output_dir / "kernel_config.py").is_file() and second.param_names == first.param_names
    assert second.program.name == "_jit_scaled_add"  # re-specialized on first access
    a, b, out = _args()
    second(a, b, out)
    np.testing.assert_allclose(out, (a + b) * 2.0, rtol=1e-6, atol=1e-6)
    assert not list(entry.rglob("*.so"))  # runs write their .so copies into the user's dir, not the entry


@needs_ptoas
def test_the_knob_bypasses_the_cache(cache_dir: Path, compiles: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    _fresh().compile(*_args(), config=RunConfig(platform="a2a3sim", dump_passes=False, jit_cache=False))
    assert _entries(cache_dir) == []
    monkeypatch.setenv("PYPTO_JIT_CACHE", "0")
    _fresh().compile(*_args(), config=CFG)
    assert _entries(cache_dir) == [] and len(compiles) == 2
    assert disk_cache.enabled(RunConfig(jit_cache=True)) and not disk_cache.enabled(CFG)
    monkeypatch.setenv("PYPTO_JIT_CACHE", "yes")
    assert disk_cache.enabled(CFG)
    with settings.override(jit_cache=False):
        assert not disk_cache.enabled(CFG)
    monkeypatch.setenv("PYPTO_JIT_CACHE", "maybe")
    with pytest.raises(SettingsError, match="PYPTO_JIT_CACHE"):
        disk_cache.enabled(CFG)


def _drop_meta(entry: Path) -> None:
    (entry / "compiled_meta.json").unlink()


def _garble_config(entry: Path) -> None:
    (entry / "kernel_config.py").write_text("this is not python (\n")


def _drop_kernel(entry: Path) -> None:
    for cpp in (entry / "kernels").rglob("*.cpp"):
        cpp.unlink()


def _bad_meta(entry: Path) -> None:
    (entry / "compiled_meta.json").write_text(json.dumps({"schema": 99}))


@needs_ptoas
@pytest.mark.parametrize("damage", [_drop_meta, _garble_config, _drop_kernel, _bad_meta])
def test_a_damaged_entry_is_recompiled_and_replaced(cache_dir: Path, compiles: list[str], damage) -> None:
    _fresh().compile(*_args(), config=CFG)
    [entry] = _entries(cache_dir)
    damage(entry)
    _fresh().compile(*_args(), config=CFG)
    assert len(compiles) == 2
    [replaced] = _entries(cache_dir)
    assert replaced == entry and (entry / "compiled_meta.json").is_file()
    assert disk_cache._valid(entry)


@needs_ptoas
def test_an_explicit_output_dir_receives_the_artifact_on_a_hit(cache_dir: Path, tmp_path: Path,
                                                              compiles: list[str]) -> None:
    _fresh().compile(*_args(), config=CFG)
    mine = tmp_path / "mine"
    got = _fresh().compile(*_args(), config=RunConfig(platform="a2a3sim", dump_passes=False, save_kernels_dir=mine))
    assert len(compiles) == 1 and got.output_dir == mine.resolve()
    assert (mine / "compiled_meta.json").is_file() and (mine / "kernel_config.py").is_file()
    assert list((mine / "kernels" / "aiv").glob("*.cpp"))


def _key(jit: pl.JITFunction) -> str | None:
    memory_key = jit._key(*jit._classify(jit._bind(_args(), {})), CFG)
    return disk_cache.entry_key(jit, memory_key, CFG)


def test_the_key_follows_globals_settings_and_platform(monkeypatch: pytest.MonkeyPatch) -> None:
    jit = _fresh()
    base = _key(jit)
    assert base is not None and _key(_fresh()) == base
    monkeypatch.setenv("PYPTO_LOG_LEVEL", "debug")  # run-only settings keep the key
    assert _key(jit) == base
    monkeypatch.setenv("PYPTO_EMIT_PTO_LOC", "false")
    assert _key(jit) != base
    monkeypatch.delenv("PYPTO_EMIT_PTO_LOC")
    monkeypatch.setattr(cached_kernels, "SCALE", 3.0)
    assert _key(jit) not in (base, None)
    monkeypatch.setattr(cached_kernels, "SCALE", object())  # nothing to fingerprint: not cached
    assert _key(jit) is None
    monkeypatch.setattr(cached_kernels, "SCALE", 2.0)
    memory_key = jit._key(*jit._classify(jit._bind(_args(), {})), RunConfig(platform="a5sim"))
    assert disk_cache.entry_key(jit, memory_key, RunConfig(platform="a5sim")) != base


def _fake_artifact(path: Path, text: str) -> Path:
    path.mkdir(parents=True)
    (path / "compiled_meta.json").write_text(text)
    return path


def test_store_is_first_writer_wins_and_leaves_no_temporaries(cache_dir: Path, tmp_path: Path) -> None:
    disk_cache.store("_jit_k", "k1", _fake_artifact(tmp_path / "one", "1"))
    disk_cache.store("_jit_k", "k1", _fake_artifact(tmp_path / "two", "2"))
    disk_cache.store("_jit_k", "k2", tmp_path / "missing")  # incomplete artifacts are not published
    assert [p.name for p in (cache_dir / "jit").iterdir()] == ["_jit_k-k1"]
    assert (cache_dir / "jit" / "_jit_k-k1" / "compiled_meta.json").read_text() == "1"
    assert disk_cache.lookup("_jit_k", "k1", None, lambda: None) is None  # no kernel_config.py: not valid
    assert not (cache_dir / "jit").exists() or list((cache_dir / "jit").iterdir()) == []


def test_least_recently_used_entries_beyond_the_limit_are_pruned(cache_dir: Path, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    monkeypatch.setattr(disk_cache, "MAX_ENTRIES", 2)
    root = cache_dir / "jit"
    for i, key in enumerate(("a", "b")):
        disk_cache.store("_jit_k", key, _fake_artifact(tmp_path / key, key))
        os.utime(root / f"_jit_k-{key}", (1000 + i, 1000 + i))
    os.utime(root / "_jit_k-a", (2000, 2000))  # "a" was used after "b"
    disk_cache.store("_jit_k", "c", _fake_artifact(tmp_path / "c", "c"))
    assert sorted(p.name for p in root.iterdir()) == ["_jit_k-a", "_jit_k-c"]
    assert disk_cache.prune(root, keep=1) == 1 and [p.name for p in root.iterdir()] == ["_jit_k-c"]


def test_light_cache_dir_agrees_with_the_settings(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PYPTO_CACHE_DIR", str(tmp_path / "c"))
    assert settings.cache_dir() == tmp_path / "c" == settings.resolve_settings().cache_dir
    monkeypatch.delenv("PYPTO_CACHE_DIR")
    (tmp_path / "pypto.toml").write_text('cache_dir = "~/elsewhere"\n')
    assert settings.cache_dir() == Path("~/elsewhere").expanduser() == settings.resolve_settings().cache_dir
    with settings.override(cache_dir=tmp_path / "o", prog_build_dir=tmp_path / "b"):
        assert settings.cache_dir() == tmp_path / "o"
        assert settings.output_base() == tmp_path / "b" == settings.resolve_settings().output_base
    assert settings.output_base() == Path("build_output")
    shutil.rmtree(tmp_path / "c", ignore_errors=True)


def test_user_modules_are_fingerprinted_by_content(tmp_path: Path) -> None:
    import importlib.util

    path = tmp_path / "helpers_mod.py"
    path.write_text("TILE = 64\n")
    spec = importlib.util.spec_from_file_location("helpers_mod", path)
    module = importlib.util.module_from_spec(spec)
    before = disk_cache._value_text(module, set())
    path.write_text("TILE = 32\n")
    assert disk_cache._value_text(module, set()) != before
    assert disk_cache._value_text(pl, set()) == "module pypto.language"


def test_a_jit_compile_builds_its_ptoas_shim_in_the_configured_cache_dir(tmp_path) -> None:
    """PYPTO_CACHE_DIR holds every cache a compile makes: nothing is built under the home directory."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    script = tmp_path / "k.py"
    script.write_text(
        "import numpy as np\nimport pypto.language as pl\nfrom pypto.runtime import RunConfig\n\n"
        "@pl.jit\ndef add(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]):\n"
        "    with pl.at(level=pl.Level.CORE_GROUP):\n        out[:] = pl.add(a, b)\n    return out\n\n"
        "x = np.ones((16, 16), np.float32)\n"
        "print(add.compile(x, x, np.zeros_like(x), config=RunConfig(platform='a2a3sim')).output_dir)\n")
    home, cache = tmp_path / "home", tmp_path / "cache"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYPTO_") and k not in ("PTOAS_ROOT", "XDG_CACHE_HOME")}
    env.update(HOME=str(home), PYPTO_CACHE_DIR=str(cache), PYTHONPATH=str(Path(__file__).resolve().parents[2]))
    proc = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert (cache / "ptoas-shim").is_dir()
    assert not (home / ".cache").exists(), sorted(str(p) for p in (home / ".cache").rglob("*"))[:5]
