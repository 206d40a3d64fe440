"""Fixtures for the container suite: an engine and the sim image, or a skip saying how to get them.

Tests marked ``container`` need a running Docker engine and the sim image of the selected toolchain;
without them they are skipped (never failed), so the plain ``pytest -q`` run needs no engine.
``.ci/run`` (or ``nox -s container_tests``) builds the image first.
"""

from __future__ import annotations

import hashlib
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


# sha256 over the package's Python sources (relative path + bytes), printed by the image's own interpreter
_SOURCE_DIGEST = """
import hashlib, pathlib, pypto
root = pathlib.Path(pypto.__file__).parent
h = hashlib.sha256()
for p in sorted(root.rglob("*.py")):
    h.update(p.relative_to(root).as_posix().encode() + b"\\0" + p.read_bytes())
print(h.hexdigest())
"""


@pytest.fixture(scope="session")
def same_source_image(engine: Any, sim_image: Any) -> Any:
    """The sim image, when its pypto is this tree's: tests that compare its output with the host's need it.

    An image built from an older checkout (a developer's engine keeps it) would differ for that reason alone;
    such a test is skipped with the command that rebuilds the image.
    """
    import pypto

    root = Path(pypto.__file__).parent
    here = hashlib.sha256()
    for p in sorted(root.rglob("*.py")):
        here.update(p.relative_to(root).as_posix().encode() + b"\0" + p.read_bytes())
    ref = sim_image.tags[0] if sim_image.tags else sim_image.id
    inside = engine.containers.run(ref, ["-c", _SOURCE_DIGEST], entrypoint="python", remove=True)
    if inside.decode().strip() != here.hexdigest():
        from pypto.toolchain.settings import resolve_settings

        pytest.skip(f"the sim image {ref} carries another pypto than this tree; rebuild it with: "
                    f"{build_command('sim', resolve_settings(platform='a2a3sim').toolchain)}")
    return sim_image


@pytest.fixture
def workdirs(tmp_path: Path) -> tuple[Path, Path]:
    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    return src, out
