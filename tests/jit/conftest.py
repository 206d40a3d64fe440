"""Each test gets its own cache dir: <tmp>/cache/jit for compiles, <tmp>/cache/sim shared per session."""

from __future__ import annotations

from pathlib import Path

import pytest

from pypto.runtime import build


@pytest.fixture(scope="session")
def session_sim(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("simcache")


@pytest.fixture(autouse=True)
def cache_dir(tmp_path: Path, session_sim: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``<tmp>/cache``; the simulator builds under it are this session's (built once)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PYPTO_JIT_CACHE", raising=False)
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "sim").symlink_to(session_sim, target_is_directory=True)
    with build.use_cache_dir(cache / "sim"):
        yield cache
