"""`pypto toolchain list|show|verify|path` and `pypto doctor`: success and failure exit codes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from pypto.cli._common import ExitCode
from pypto.cli.main import cli
from pypto.toolchain import doctor as D
from pypto.toolchain.manifest import load_manifest


def invoke(*args: str):
    return CliRunner().invoke(cli, ["--log-level", "error", *args], catch_exceptions=False)


def _has_tools() -> bool:
    from pypto.toolchain.ptoas import installed_wheel

    return installed_wheel() is not None and shutil.which("g++") is not None


needs_tools = pytest.mark.skipif(not _has_tools(), reason="needs the ptoas wheel and g++")


def test_list() -> None:
    result = invoke("toolchain", "list")
    m = load_manifest()
    assert result.exit_code == 0
    assert f"* {m.version}  ptoas {m.ptoas.version} ({m.ptoas.dialect})" in result.stdout


def test_list_json_with_second_toolchain(manifests: Path) -> None:
    data = json.loads(invoke("toolchain", "list", "--json").stdout)
    assert data["selected"] == "0.2.0"
    assert [t["version"] for t in data["toolchains"]] == ["0.1.0", "0.2.0"]
    assert data["toolchains"][1]["platforms"] == ["a2a3sim"]


def test_show_prints_manifest_file() -> None:
    m = load_manifest()
    result = invoke("toolchain", "show")
    assert result.exit_code == 0 and m.sha256 in result.stdout and f'sha256 = "{m.ptoas.sha256}"' in result.stdout


def test_show_get_scalar_and_list() -> None:
    m = load_manifest()
    assert invoke("toolchain", "show", "--get", "ptoas.sha256").stdout == m.ptoas.sha256 + "\n"
    assert json.loads(invoke("toolchain", "show", "--get", "support.runtimes").stdout) == list(m.support.runtimes)
    data = json.loads(invoke("toolchain", "show", "--get", "python.version", "--json").stdout)
    assert data["value"] == m.python.version


def test_show_json() -> None:
    data = json.loads(invoke("toolchain", "show", "0.1.0", "--json").stdout)
    assert data["manifest"]["ptoas"]["version"] == load_manifest("0.1.0").ptoas.version


def test_show_unknown_version_exit_3() -> None:
    result = invoke("toolchain", "show", "9.9.9")
    assert result.exit_code == ExitCode.USER and "Unknown toolchain '9.9.9'" in result.stderr


def test_show_unknown_key_exit_3() -> None:
    result = invoke("toolchain", "show", "--get", "ptoas.nope")
    assert result.exit_code == ExitCode.USER and "has no key 'ptoas.nope'" in result.stderr


def test_show_unknown_key_json_error_on_stdout() -> None:
    result = invoke("toolchain", "show", "--get", "nope", "--json")
    data = json.loads(result.stdout)
    assert result.exit_code == ExitCode.USER
    assert data["ok"] is False and data["exit_code"] == 3 and "no key" in data["error"]["message"]


@needs_tools
def test_verify_ok() -> None:
    result = invoke("toolchain", "verify")
    assert result.exit_code == 0, result.output
    assert "[ok     ] ptoas wheel" in result.stdout


def test_verify_failure_exit_4(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(D, "check_ptoas_install", lambda m, all_files=False: D.Check("ptoas wheel", False, "bad", "fix"))
    wheel = tmp_path / "x.whl"
    wheel.write_bytes(b"x")
    result = invoke("toolchain", "verify", "--json", "--wheel", str(wheel))
    data = json.loads(result.stdout)
    assert result.exit_code == ExitCode.TOOLCHAIN and not data["ok"]
    assert {c["name"]: c["ok"] for c in data["checks"]}["ptoas wheel file"] is False


@needs_tools
@pytest.mark.parametrize("tool", ["ptoas", "gxx", "include"])
def test_path(tool: str) -> None:
    result = invoke("toolchain", "path", tool)
    assert result.exit_code == 0 and Path(result.stdout.strip()).exists()


@needs_tools
def test_path_all() -> None:
    lines = invoke("toolchain", "path").stdout.splitlines()
    assert [line.split("\t")[0] for line in lines] == ["ptoas", "gxx", "include"]


def test_path_missing_tool_exit_4(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shutil, "which", lambda name: None)
    result = invoke("toolchain", "path", "gxx")
    assert result.exit_code == ExitCode.TOOLCHAIN and "g++ not found" in result.stderr


def test_path_bad_ptoas_root_exit_4(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PTOAS_ROOT", "/nonexistent")
    result = invoke("toolchain", "path", "ptoas")
    assert result.exit_code == ExitCode.TOOLCHAIN and "PTOAS_ROOT" in result.stderr


def test_path_bad_tool_exit_2() -> None:
    assert invoke("toolchain", "path", "clang").exit_code == ExitCode.USAGE


@needs_tools
def test_doctor_on_this_machine() -> None:
    result = invoke("doctor")
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "ptoas: 0.1.1 usable" in out and "[ok     ] g++" in out and "docker" in out
    assert "[MISSING] CANN: absent" in out
    assert "a2a3     (Ascend910B): needs ptoas, CANN; missing CANN" in out
    assert "how: build the hw image" in out


@needs_tools
def test_doctor_json() -> None:
    data = json.loads(invoke("doctor", "--json", "--no-docker").stdout)
    assert data["ok"] and data["selected_platform"] == "a2a3sim"
    platforms = {p["platform"]: p for p in data["platforms"]}
    assert platforms["a5"]["missing"] == ["CANN"] and platforms["a5sim"]["ready"]


def test_doctor_blocked_exit_4(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYPTO_PLATFORM", "a5")
    monkeypatch.setattr(D, "check_cann", lambda s, m: D.Check("CANN", False, "absent", D.hw_image_hint(m)))
    result = invoke("doctor", "--no-docker")
    assert result.exit_code == ExitCode.TOOLCHAIN
