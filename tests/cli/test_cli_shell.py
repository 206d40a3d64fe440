"""``pypto toolchain shell``: the launcher's sandboxed docker command, or a clear engine error."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from pypto.cli.main import cli
from pypto.errors import ToolchainError


def test_shell_prints_the_sandboxed_command(monkeypatch, tmp_path: Path) -> None:
    from pypto.toolchain import docker

    seen = {}

    def fake(*, settings, source_dir, output_dir, image=None):
        seen.update(source_dir=source_dir, output_dir=output_dir, image=image)
        return ["docker", "run", "--network", "none", "--entrypoint", "/bin/bash", image or "img"]
    monkeypatch.setattr(docker, "shell_command", fake)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["toolchain", "shell", "--print-command", "--image", "x:1", "-o", "out"])
    assert result.exit_code == 0, result.output
    assert result.output.strip() == "docker run --network none --entrypoint /bin/bash x:1"
    assert seen["output_dir"] == tmp_path / "out" and seen["source_dir"] == tmp_path


def test_shell_without_engine_exits_4(monkeypatch, tmp_path: Path) -> None:
    from pypto.toolchain import docker

    def down(**kw):
        raise ToolchainError("Cannot reach the Docker engine", hint="start the engine")
    monkeypatch.setattr(docker, "open_shell", down)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["toolchain", "shell"])
    assert result.exit_code == 4 and "Cannot reach the Docker engine" in result.output
