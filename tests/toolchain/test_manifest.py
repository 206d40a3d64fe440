"""Toolchain manifests: schema, loader, lookup helpers, consistency with packaging metadata."""

from __future__ import annotations

import hashlib
import tomllib
from pathlib import Path

import pytest

from pypto.errors import SettingsError, ToolchainError, UserError
from pypto.toolchain import manifest as M

REPO = Path(__file__).resolve().parents[2]


def test_load_default_is_latest() -> None:
    m = M.load_manifest()
    assert m.version == M.list_manifests()[-1] == M.latest_version()
    assert m.schema_version == 1


def test_pinned_fields() -> None:
    m = M.load_manifest("0.1.0")
    assert m.ptoas.version == "0.1.1"
    assert m.ptoas.source == "pypi"
    assert len(m.ptoas.sha256) == 64
    assert m.ptoas.wheel.startswith(f"ptoas-{m.ptoas.version}-")
    assert m.ptoas.dialect == f"pto-{m.ptoas.version}"
    assert m.hardware.cann.supplied_by == M.USER_SUPPLIED
    assert m.hardware.simpler.supplied_by == M.USER_SUPPLIED
    assert m.base_image.distribution == "debian"
    assert m.python.version == "3.11"
    assert m.compilers.gxx_min >= 12
    assert set(m.support.platforms) == {"a2a3sim", "a5sim", "a2a3", "a5"}
    assert set(m.support.backends) == {"Ascend910B", "Ascend950"}
    assert set(m.support.runtimes) == {"tensormap_and_ringbuffer", "host_build_graph"}
    assert "numpy" in m.image.wheels


def test_frozen() -> None:
    m = M.load_manifest()
    with pytest.raises(Exception, match="frozen"):
        m.ptoas.version = "9"  # type: ignore[misc]


def test_sha256_of_file_bytes() -> None:
    m = M.load_manifest()
    assert m.path is not None
    digest = hashlib.sha256(m.path.read_bytes()).hexdigest()
    assert M.manifest_sha256() == digest == m.sha256


def test_ptoas_command_uses_only_010_flags() -> None:
    pin = M.load_manifest().ptoas
    assert pin.command("ptoas", "k.pto", "k.cpp") == ["ptoas", "k.pto", "-o", "k.cpp"]
    assert pin.command("ptoas", "k.pto", "k.cpp", insert_sync=True)[-1] == "--enable-insert-sync"
    assert pin.requirement == f"ptoas=={pin.version}"


def test_get_value() -> None:
    m = M.load_manifest()
    assert M.get_value(m, "ptoas.sha256") == m.ptoas.sha256
    assert M.get_value(m, "support.platforms") == list(m.support.platforms)
    assert M.get_value(m, "ptoas")["ptoas.version"] == m.ptoas.version
    with pytest.raises(UserError, match="has no key 'ptoas.sha'") as info:
        M.get_value(m, "ptoas.sha")
    assert "ptoas.sha256" in str(info.value)


def test_unknown_version(manifests: Path) -> None:
    assert M.list_manifests() == ["0.1.0", "0.2.0"]
    with pytest.raises(SettingsError, match="Unknown toolchain '9.9.9': available toolchains are 0.1.0, 0.2.0"):
        M.load_manifest("9.9.9")


def test_invalid_manifest_names_the_file(manifests: Path) -> None:
    bad = manifests / "0.3.0.toml"
    bad.write_text((manifests / "0.1.0.toml").read_text().replace('version = "0.1.0"', 'version = "0.3.0"', 1)
                   .replace('sha256 = "', 'sha256 = "zz', 1))
    with pytest.raises(ToolchainError, match=r"0\.3\.0\.toml is invalid") as info:
        M.load_manifest("0.3.0")
    assert "ptoas.sha256" in str(info.value)


@pytest.mark.parametrize(("old", "new", "needle"), [
    ('version = "0.1.0"', 'version = "0.4.1"', "declares version 0.4.1"),
    ('schema = 1', 'schema = 2', "unsupported manifest schema 2"),
    ('platforms = ["a2a3sim", "a5sim", "a2a3", "a5"]', 'platforms = ["a9"]', "unknown names: a9"),
    ('backends = ["Ascend910B", "Ascend950"]', 'backends = ["Ascend910B"]', "need backends that are not listed"),
    ('[python]', 'surprise = 1\n[python]', "Extra inputs are not permitted"),
])
def test_schema_rejections(manifests: Path, old: str, new: str, needle: str) -> None:
    text = (manifests / "0.1.0.toml").read_text()
    assert old in text
    (manifests / "0.4.0.toml").write_text(text.replace('version = "0.1.0"', 'version = "0.4.0"', 1)
                                          .replace(old, new, 1) if old != 'version = "0.1.0"'
                                          else text.replace(old, new, 1))
    with pytest.raises(ToolchainError, match=needle):
        M.load_manifest("0.4.0")


def test_no_manifests(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(M, "_PACKAGE_DIR", tmp_path / "a")
    monkeypatch.setattr(M, "_REPO_DIR", tmp_path / "b")
    with pytest.raises(ToolchainError, match="No toolchain manifests found"):
        M.list_manifests()


def test_repo_fallback_when_package_dir_absent(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(M, "_PACKAGE_DIR", tmp_path / "absent")
    assert M.manifest_dir() == M._REPO_DIR


def test_pyproject_pin_matches_manifest() -> None:
    pyproject = REPO / "pyproject.toml"
    if not pyproject.is_file():
        pytest.skip("not a source checkout")
    deps = tomllib.loads(pyproject.read_text())["project"]["dependencies"]
    pins = [d.split(";")[0].strip() for d in deps if d.startswith("ptoas")]
    assert pins == [M.load_manifest().ptoas.requirement]


def test_flat_has_every_leaf() -> None:
    flat = M.load_manifest().flat()
    assert flat["schema"] == 1
    assert flat["hardware.cann.version"]
    assert "image.wheels.numpy" in flat
