"""Fixtures for the container suite: an engine and the sim image, or a skip saying how to get them.

Tests marked ``container`` need a running Docker engine and the sim image of the selected toolchain;
without them they are skipped (never failed), so the plain ``pytest -q`` run needs no engine.
``.ci/run`` (or ``nox -s container_tests``) builds the image first.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pypto.errors import ToolchainError
from pypto.toolchain.images import build_command
from pypto.toolchain.settings import Settings, resolve_settings


@pytest.fixture(scope="session")
def engine() -> Any:
    from pypto.toolchain.docker import docker_client

    try:
        return docker_client(timeout=10)
    except ToolchainError as exc:
        pytest.skip(f"no Docker engine: {exc.args[0].splitlines()[0]}")


@pytest.fixture(scope="session")
def settings() -> Settings:
    return resolve_settings(platform="a2a3sim")


@pytest.fixture(scope="session")
def sim_image(engine: Any, settings: Settings) -> Any:
    from pypto.toolchain.docker import select_image

    try:
        return select_image(engine, settings)
    except ToolchainError:
        pytest.skip(f"no sim image for toolchain {settings.toolchain}; build it with: "
                    f"{build_command('sim', settings.toolchain)}")


@pytest.fixture
def workdirs(tmp_path: Path) -> tuple[Path, Path]:
    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    return src, out
