"""Shared fixtures: one build cache per test session, simple artifact directories."""

from __future__ import annotations

import pytest

from pypto.runtime import build


@pytest.fixture(scope="session", autouse=True)
def sim_cache(tmp_path_factory: pytest.TempPathFactory):
    """Builds go to a per-session cache directory."""
    with build.use_cache_dir(tmp_path_factory.mktemp("simcache")) as path:
        yield path
