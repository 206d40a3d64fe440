"""Fixtures for the simulator ISA tests: a cached build kit and numpy helpers."""

from __future__ import annotations

import shutil

import numpy as np
import pytest
from sim_isa_kit import SimKit


@pytest.fixture(scope="session")
def kit(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> SimKit:
    """Build kit without ptoas (for hand-written C++ kernels); skips when g++ is missing.

    Builds are cached in pytest's cache dir (kept across runs), or a session temp dir when the
    cache provider is disabled (``-p no:cacheprovider``).
    """
    if shutil.which("g++") is None:
        pytest.skip("g++ not found on PATH; the CPU simulator tests need it")
    from pypto.toolchain.ptoas import find_ptoas

    cache = getattr(request.config, "cache", None)
    root = cache.mkdir("sim_isa") if cache is not None else tmp_path_factory.mktemp("sim_isa")
    return SimKit(root, find_ptoas())


@pytest.fixture(scope="session")
def pkit(kit: SimKit) -> SimKit:
    """Build kit that also needs ptoas; skips with a reason when it cannot be found."""
    if kit.ptoas is None:
        pytest.skip("ptoas 0.1.1 not found (pypto.toolchain.ptoas.find_ptoas() returned None)")
    return kit


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(1234)
