"""Shared fixtures: settings isolation (used by tests/cli and tests/toolchain), private manifests, torch.

torch is an optional extra (``pip install 'pypto[torch]'``): a test that needs it takes the ``torch``
fixture (or its module calls ``pytest.importorskip("torch")``), so the suite collects and passes
without it. Such tests carry the ``torch`` marker: ``pytest -m torch`` runs exactly them once torch is
installed (``.ci/run`` does this after the README's own test command).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pypto.toolchain import manifest as manifest_mod

TORCH_MISSING = "torch is not installed (it is an extra: pip install torch==2.13.0, or pypto[torch])"

_ENV = ("PTOAS_ROOT", "ASCEND_HOME_PATH", "XDG_CACHE_HOME")


def _clean(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import os

    for name in list(os.environ):
        if name.startswith("PYPTO_") or name in _ENV:
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)


@pytest.fixture(autouse=True)
def default_build_dir(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests find their artifacts under ``build_output/`` of their working directory, as documented;
    a ``PYPTO_PROG_BUILD_DIR`` in the caller's environment would move them (a test may set it again)."""
    monkeypatch.delenv("PYPTO_PROG_BUILD_DIR", raising=False)


@pytest.fixture
def isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No PYPTO_* variables, no config file in the working directory (a subdir conftest autouses it)."""
    _clean(monkeypatch, tmp_path)


@pytest.fixture
def manifests(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """A private manifest dir: the real 0.1.0 plus a 0.2.0 that supports only a2a3sim + one runtime."""
    real = manifest_mod.manifest_path("0.1.0")
    root = tmp_path / "toolchains"
    root.mkdir()
    shutil.copy(real, root / "0.1.0.toml")
    text = real.read_text().replace('version = "0.1.0"', 'version = "0.2.0"', 1)
    text = text.replace('platforms = ["a2a3sim", "a5sim", "a2a3", "a5"]', 'platforms = ["a2a3sim"]')
    text = text.replace('backends = ["Ascend910B", "Ascend950"]', 'backends = ["Ascend910B"]')
    text = text.replace('runtimes = ["tensormap_and_ringbuffer", "host_build_graph"]',
                        'runtimes = ["tensormap_and_ringbuffer"]')
    (root / "0.2.0.toml").write_text(text)
    monkeypatch.setattr(manifest_mod, "_PACKAGE_DIR", root)
    return root


@pytest.fixture
def torch():
    """The torch module; the test is skipped (with how to install it) when torch is absent."""
    return pytest.importorskip("torch", reason=TORCH_MISSING)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark every test that needs torch (the fixture, or a module that imported it) with ``torch``."""
    import types

    for item in items:
        module = getattr(item, "module", None)
        if "torch" in getattr(item, "fixturenames", ()) or isinstance(getattr(module, "torch", None), types.ModuleType):
            item.add_marker(pytest.mark.torch)
