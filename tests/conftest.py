"""Shared fixtures: settings isolation (used by tests/cli and tests/toolchain) and private manifests."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pypto.toolchain import manifest as manifest_mod

_ENV = ("PTOAS_ROOT", "ASCEND_HOME_PATH", "XDG_CACHE_HOME")


def _clean(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import os

    for name in list(os.environ):
        if name.startswith("PYPTO_") or name in _ENV:
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)


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
