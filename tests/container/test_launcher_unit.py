"""Launcher logic without an engine: sandbox flags, label checks, exit-code mapping, cleanup paths."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
import requests

from pypto.errors import ToolchainError, UserError
from pypto.toolchain import docker as launcher
from pypto.toolchain.images import LABEL_FLAVOR, LABEL_MANIFEST, LABEL_VERSION
from pypto.toolchain.manifest import load_manifest
from pypto.toolchain.settings import resolve_settings


@pytest.fixture
def spec(tmp_path: Path) -> launcher.RunSpec:
    settings = resolve_settings(platform="a5sim")
    return launcher.plan_run(["compile", "/src/k.py"], settings=settings, source_dir=tmp_path,
                             output_dir=tmp_path / "out", image="img:1")


def test_plan_is_hardened(spec: launcher.RunSpec, tmp_path: Path) -> None:
    kw = spec.create_kwargs()
    assert kw["network_mode"] == "none"
    assert kw["cap_drop"] == ["ALL"]
    assert kw["security_opt"] == ["no-new-privileges"]
    assert kw["read_only"] is True
    assert "/tmp" in kw["tmpfs"]
    assert kw["user"] == f"{os.getuid()}:{os.getgid()}"
    assert "auto_remove" not in kw
    mounts = {m["Target"]: m for m in kw["mounts"]}
    assert mounts["/src"]["ReadOnly"] is True and mounts["/src"]["Source"] == str(tmp_path.resolve())
    assert mounts["/out"]["ReadOnly"] is False
    assert kw["environment"]["PYPTO_PLATFORM"] == "a5sim"
    assert kw["environment"]["HOME"].startswith("/tmp/")


def test_rootless_runs_without_user(tmp_path: Path) -> None:
    spec = launcher.plan_run([], settings=resolve_settings(), source_dir=tmp_path, output_dir=tmp_path,
                             image="i", rootless=True)
    assert "user" not in spec.create_kwargs()


def test_cli_equivalent_is_copy_pasteable(spec: launcher.RunSpec) -> None:
    argv = spec.cli_argv()
    assert argv[:3] == ["docker", "run", "--rm"]
    for flag in ("--read-only", "--cap-drop", "--network", "--security-opt", "--user"):
        assert flag in argv
    assert argv[-3:] == ["img:1", "compile", "/src/k.py"]
    shell = spec.cli_argv(interactive=True, entrypoint="/bin/bash")
    assert "-it" in shell and shell[shell.index("--entrypoint") + 1] == "/bin/bash"


def _labels(**over: str) -> dict[str, str]:
    m = load_manifest()
    return {LABEL_VERSION: m.version, LABEL_MANIFEST: m.sha256, LABEL_FLAVOR: "sim", **over}


def test_matching_labels_accepted() -> None:
    launcher.check_image_labels("img", _labels(), load_manifest(), "sim")


@pytest.mark.parametrize("key", [LABEL_VERSION, LABEL_MANIFEST, LABEL_FLAVOR])
def test_mismatched_label_refused_with_build_command(key: str) -> None:
    m = load_manifest()
    with pytest.raises(ToolchainError) as info:
        launcher.check_image_labels("img:x", _labels(**{key: "other"}), m, "sim")
    text = str(info.value)
    assert "img:x" in text and key in text
    assert f"python -m pypto.toolchain.images build --flavor sim --toolchain {m.version}" in text


def test_unlabelled_image_refused() -> None:
    with pytest.raises(ToolchainError, match="<missing>"):
        launcher.check_image_labels("debian", None, load_manifest(), "sim")


@pytest.mark.parametrize("code", [0, 1, 2, 3, 4])
def test_pypto_exit_codes_pass_through(code: int, spec: launcher.RunSpec) -> None:
    assert launcher._exit_code({"StatusCode": code}, spec) == code


@pytest.mark.parametrize(("code", "words"), [(125, "engine"), (126, "could not be executed"),
                                             (127, "not found"), (137, "SIGKILL"), (143, "signal 15")])
def test_engine_exit_codes_become_errors(code: int, words: str, spec: launcher.RunSpec) -> None:
    with pytest.raises(ToolchainError, match=words) as info:
        launcher._exit_code({"StatusCode": code}, spec)
    assert "docker run" in str(info.value)  # the repro command


def test_daemon_down_is_a_toolchain_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no.sock")
    with pytest.raises(ToolchainError, match="Cannot reach the Docker engine") as info:
        launcher.docker_client(timeout=2)
    assert "pypto doctor" in str(info.value)


def test_container_paths(tmp_path: Path) -> None:
    src, out = tmp_path / "s", tmp_path / "s" / "o"
    assert launcher.to_container_path(src / "k.py", src, out) == "/src/k.py"
    assert launcher.to_container_path(out / "x", src, out) == "/out/x"
    assert launcher.to_container_path(out, src, out) == "/out"
    with pytest.raises(UserError, match="outside"):
        launcher.to_container_path(tmp_path / "elsewhere.py", src, out)


class FakeContainer:
    def __init__(self, wait: Any) -> None:
        self.id = "c1"
        self._wait = wait
        self.calls: list[str] = []

    def start(self) -> None:
        self.calls.append("start")

    def wait(self, timeout: float | None = None) -> dict[str, int]:
        self.calls.append("wait")
        if isinstance(self._wait, BaseException):
            raise self._wait
        return self._wait

    def kill(self) -> None:
        self.calls.append("kill")

    def remove(self, force: bool = False) -> None:
        self.calls.append(f"remove(force={force})")


class FakeClient:
    def __init__(self, container: FakeContainer) -> None:
        self.container = container
        self.containers = self
        self.api = self

    def create(self, **kwargs: Any) -> FakeContainer:
        return self.container

    def attach(self, *args: Any, **kwargs: Any) -> list[tuple[bytes | None, bytes | None]]:
        return [(b"out\n", None), (None, b"err\n")]


@pytest.mark.parametrize(("outcome", "expect"), [
    ({"StatusCode": 3}, 3),
    (requests.exceptions.ReadTimeout("slow"), ToolchainError),
    (KeyboardInterrupt(), KeyboardInterrupt),
])
def test_container_removed_on_every_path(outcome: Any, expect: Any, spec: launcher.RunSpec,
                                         capfd: pytest.CaptureFixture[str]) -> None:
    container = FakeContainer(outcome)
    if isinstance(expect, int):
        assert launcher.execute(FakeClient(container), spec, timeout=5) == expect
        assert capfd.readouterr().out == "out\n"
    else:
        with pytest.raises(expect):
            launcher.execute(FakeClient(container), spec, timeout=5)
        assert "kill" in container.calls
    assert container.calls[-1] == "remove(force=True)"


def test_host_paths_rewrite_complete_stdout_lines():
    from pypto.toolchain.docker import HostPaths, Mount

    paths = HostPaths((Mount("/home/u/proj", "/src", True), Mount("/home/u/build", "/out", False)))
    assert paths.feed(b'/out\n{"artifact": "/out/k", "src": "/src/k.py", "o": "/outer", "v": "/var/out"}\n'
                      b"half /o") == (b'/home/u/build\n{"artifact": "/home/u/build/k", "src": "/home/u/proj/k.py", '
                                      b'"o": "/outer", "v": "/var/out"}\n')
    assert paths.feed(b"ut line\n") == b"half /home/u/build line\n"
    assert paths.feed(b"tail /src") == b"" and paths.flush() == b"tail /home/u/proj"
    assert HostPaths(()).feed(b"/out\n") == b"/out\n"


class _Img:
    def __init__(self, flavor: str, created: str, manifest_sha: str | None = None) -> None:
        m = load_manifest()
        self.labels = {LABEL_VERSION: m.version, LABEL_MANIFEST: manifest_sha or m.sha256, LABEL_FLAVOR: flavor,
                       "org.opencontainers.image.version": "0.1.0"}
        self.attrs = {"Created": created}
        self.tags = [f"pypto-{flavor}:{created}"]


class _Images:
    def __init__(self, found: list[_Img]) -> None:
        self.found = found

    def list(self, filters: dict[str, Any]) -> list[_Img]:
        return self.found


def test_select_prefers_sim_over_sim_slim_and_refuses_stale_manifests() -> None:
    settings = resolve_settings(platform="a2a3sim")
    slim_new, sim_old = _Img("sim-slim", "2026-12-01"), _Img("sim", "2026-01-01")
    client = type("C", (), {"images": _Images([slim_new, sim_old, _Img("hw", "2027-01-01")])})()
    assert launcher.select_image(client, settings) is sim_old
    client.images = _Images([slim_new])
    assert launcher.select_image(client, settings) is slim_new  # sim-slim serves sim platforms too
    client.images = _Images([_Img("sim", "2026-01-01", "0" * 64)])
    with pytest.raises(ToolchainError, match="another manifest sha256") as info:
        launcher.select_image(client, settings)
    assert "--flavor sim" in str(info.value)


def test_sim_slim_labels_accepted_for_sim_platforms_only() -> None:
    m = load_manifest()
    launcher.check_image_labels("img", _labels(**{LABEL_FLAVOR: "sim-slim"}), m, ("sim", "sim-slim"))
    with pytest.raises(ToolchainError, match="sim or sim-slim"):
        launcher.check_image_labels("img", _labels(**{LABEL_FLAVOR: "hw"}), m, ("sim", "sim-slim"))


def test_plan_names_the_image_inside(spec: launcher.RunSpec) -> None:
    assert spec.environment["PYPTO_CONTAINER_IMAGE"] == "img:1"


def test_diagnostics_on_stderr_name_host_paths(spec: launcher.RunSpec, tmp_path: Path,
                                               capfd: pytest.CaptureFixture[str]) -> None:
    class Client(FakeClient):
        def attach(self, *args: Any, **kwargs: Any) -> list[tuple[bytes | None, bytes | None]]:
            return [(b"/out\n", None), (None, b"/src/k.py:2:1: error: importing k.py failed\n")]

    assert launcher.execute(Client(FakeContainer({"StatusCode": 3})), spec, timeout=5) == 3
    captured = capfd.readouterr()
    assert captured.out == f"{(tmp_path / 'out').resolve()}\n"
    assert captured.err == f"{tmp_path.resolve()}/k.py:2:1: error: importing k.py failed\n"
