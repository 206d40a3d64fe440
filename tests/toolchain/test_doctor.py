"""doctor and verify: what is installed, what each platform needs, and how to get what is missing."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pypto.toolchain import doctor as D
from pypto.toolchain.settings import resolve_settings

needs_gxx = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not installed")


def _has_ptoas() -> bool:
    from pypto.toolchain.ptoas import installed_wheel

    return installed_wheel() is not None


needs_ptoas = pytest.mark.skipif(not _has_ptoas(), reason="ptoas wheel not installed")


@needs_gxx
@needs_ptoas
def test_doctor_on_this_machine() -> None:
    report = D.doctor(resolve_settings(), with_docker=False)
    checks = {c.name: c for c in report.checks}
    assert checks["ptoas"].ok and "0.1.1 usable" in checks["ptoas"].detail
    assert checks["g++"].ok
    assert not checks["CANN"].ok and "absent" in checks["CANN"].detail
    assert report.ok
    by_platform = {p.platform: p for p in report.platforms}
    assert by_platform["a2a3sim"].ready and by_platform["a5sim"].ready
    for hw in ("a2a3", "a5"):
        assert by_platform[hw].missing == ("CANN",)
        assert by_platform[hw].how[0].startswith("build the hw image")
    data = report.to_json()
    assert data["ok"] and data["platforms"][0]["ready"] in (True, False)


def test_selected_hw_platform_is_not_ok(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(D.shutil, "which", lambda name: None)
    report = D.doctor(resolve_settings(platform="a5"), with_docker=False)
    assert not report.ok
    assert report.selected_platform == "a5"


def test_gxx_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(D.shutil, "which", lambda name: None)
    check = D.check_gxx(resolve_settings().manifest)
    assert not check.ok and "not found" in check.detail and "apt-get install g++" in check.fix


def test_gxx_too_old(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(D.shutil, "which", lambda name: "/usr/bin/g++")
    monkeypatch.setattr(D, "gxx_major", lambda exe: 9)
    check = D.check_gxx(resolve_settings().manifest)
    assert not check.ok and "9 at /usr/bin/g++" in check.detail


def test_ptoas_root_without_binary() -> None:
    check = D.check_ptoas(resolve_settings(ptoas_root="/nonexistent"), resolve_settings().manifest)
    assert not check.ok and "PTOAS_ROOT" in check.detail and "pip install 'ptoas==" in check.fix


def test_cann_present(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(D.shutil, "which", lambda name: f"/opt/{name}")
    s = resolve_settings(ascend_home_path=tmp_path)
    assert D.check_cann(s, s.manifest).ok


def test_docker_check_reports_state() -> None:
    check = D.check_docker(resolve_settings())
    assert check.name == "docker" and ("reachable" in check.detail)


@needs_gxx
@needs_ptoas
def test_verify_on_this_machine() -> None:
    checks = D.verify_toolchain(resolve_settings())
    assert [c.name for c in checks] == ["ptoas wheel", "g++", "sim include"]
    assert all(c.ok for c in checks), checks
    assert "match the wheel RECORD" in checks[0].detail


@needs_ptoas
def test_verify_detects_version_mismatch(monkeypatch: pytest.MonkeyPatch) -> None:
    manifest = resolve_settings().manifest
    pinned = manifest.ptoas.model_copy(update={"version": "9.9.9"})
    check = D.check_ptoas_install(manifest.model_copy(update={"ptoas": pinned}))
    assert not check.ok and "manifest pins 9.9.9" in check.detail


@needs_ptoas
def test_verify_detects_modified_file(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(D, "_file_hash", lambda path: "tampered")
    check = D.check_ptoas_install(resolve_settings().manifest)
    assert not check.ok and "differ from RECORD" in check.detail


def test_wheel_file_check(tmp_path: Path) -> None:
    manifest = resolve_settings().manifest
    fake = tmp_path / manifest.ptoas.wheel
    fake.write_bytes(b"not a wheel")
    check = D.check_wheel_file(manifest, fake)
    assert not check.ok and "!= manifest" in check.detail
    assert not D.check_wheel_file(manifest, tmp_path / "absent.whl").ok
