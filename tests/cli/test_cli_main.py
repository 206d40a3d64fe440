"""Top-level CLI behaviour: --version, help, global options, exit codes, python -m pypto."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import pypto
from pypto.cli._common import ExitCode, exit_code_for
from pypto.cli.main import cli, main
from pypto.errors import (
    InternalError,
    ParserSyntaxError,
    SettingsError,
    ToolchainError,
    UserError,
    VerificationError,
)
from pypto.toolchain.manifest import load_manifest


def invoke(*args: str, **kw: object):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False, **kw)


def test_version() -> None:
    result = invoke("--version")
    m = load_manifest()
    assert result.exit_code == 0
    assert result.output.strip() == (f"pypto {pypto.__version__}, toolchain {m.version} (ptoas {m.ptoas.version}, "
                                     f"dialect {m.ptoas.dialect}, sim {m.sim.isa_version})")


def test_help_documents_exit_codes() -> None:
    result = invoke("--help")
    assert result.exit_code == 0
    text = " ".join(result.output.split())
    for code in ("0 ok", "1 internal error", "2 usage error", "3 user error", "4 toolchain missing"):
        assert code in text
    for command in ("compile", "run", "toolchain", "doctor", "settings"):
        assert command in result.output


def test_unknown_command_is_usage_error() -> None:
    assert invoke("frobnicate").exit_code == ExitCode.USAGE


def test_bad_global_option_is_usage_error() -> None:
    assert invoke("--log-level", "loud", "settings").exit_code == ExitCode.USAGE


def test_settings_json_with_sources(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    (tmp_path / "pypto.toml").write_text('runtime = "host_build_graph"\n')
    monkeypatch.setenv("PYPTO_PLATFORM", "a5sim")
    result = invoke("--log-level", "error", "settings", "--json")
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    rows = {r["name"]: r for r in data["settings"]}
    assert data["schema_version"] == 1
    assert rows["platform"]["value"] == "a5sim" and rows["platform"]["source"] == "env PYPTO_PLATFORM"
    assert rows["runtime"]["source"] == f"file {tmp_path / 'pypto.toml'}"
    assert rows["log_level"] == {"name": "log_level", "value": "error", "source": "argument", "env": "PYPTO_LOG_LEVEL"}


def test_settings_human() -> None:
    result = invoke("settings")
    assert result.exit_code == 0 and "platform" in result.stdout and "(default; PYPTO_PLATFORM)" in result.stdout


def test_config_option(tmp_path: Path) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text('platform = "a5"\n')
    data = json.loads(invoke("--config", str(cfg), "settings", "--json").stdout)
    assert {r["name"]: r["value"] for r in data["settings"]}["platform"] == "a5"


def test_missing_config_is_user_error(tmp_path: Path) -> None:
    result = invoke("--config", str(tmp_path / "nope.toml"), "settings")
    assert result.exit_code == ExitCode.USER
    assert "does not exist" in result.stderr


def test_bad_env_setting_exit_3_names_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYPTO_PLATFORM", "x")
    result = invoke("settings")
    assert result.exit_code == ExitCode.USER
    assert "Invalid platform 'x'. Expected 'a2a3sim', 'a2a3', 'a5sim', or 'a5'." in result.stderr
    assert "env PYPTO_PLATFORM" in result.stderr and result.stdout == ""


def test_toolchain_option_unknown(monkeypatch: pytest.MonkeyPatch) -> None:
    result = invoke("--toolchain", "9.9.9", "settings")
    assert result.exit_code == ExitCode.USER and "Unknown toolchain '9.9.9'" in result.stderr


@pytest.mark.parametrize(("exc", "code"), [
    (UserError("x"), ExitCode.USER), (ParserSyntaxError("x"), ExitCode.USER), (SettingsError("x"), ExitCode.USER),
    (VerificationError("x"), ExitCode.USER), (ToolchainError("x"), ExitCode.TOOLCHAIN),
    (InternalError("x"), ExitCode.INTERNAL), (RuntimeError("x"), ExitCode.INTERNAL),
])
def test_exit_code_table(exc: BaseException, code: ExitCode) -> None:
    assert exit_code_for(exc) == code


def test_main_returns_exit_code(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    assert main(["frobnicate"]) == ExitCode.USAGE


def test_python_dash_m() -> None:
    proc = subprocess.run([sys.executable, "-m", "pypto", "--version"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout.startswith("pypto ")


def test_an_interrupt_exits_130_and_ignores_a_second_ctrl_c(monkeypatch):
    """Ctrl-C ends a command with 130 and ``pypto: interrupted``; from then on SIGINT is ignored, so a second
    Ctrl-C cannot cut the exit (its cleanup and exit status) short."""
    import signal

    import click

    from pypto.cli.main import PyptoGroup

    @click.group(cls=PyptoGroup)
    def group() -> None:
        pass

    @group.command()
    def slow() -> None:
        raise KeyboardInterrupt

    before = signal.getsignal(signal.SIGINT)
    try:
        out = CliRunner().invoke(group, ["slow"])
        assert out.exit_code == int(ExitCode.INTERRUPTED) == 130
        assert "pypto: interrupted" in out.output and "Aborted!" not in out.output
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, before)


def test_an_interrupt_inside_exec_of_a_string_still_exits_130_under_python_m(tmp_path):
    """A Ctrl-C that lands while a dataclass is being made (``exec`` of generated source, during an import) used to
    end ``python -m pypto`` by SIGINT (-2) after the handled exit: CPython marks it unhandled. It exits 130."""
    (tmp_path / "interrupted_cli.py").write_text(
        "import sys\n\nimport click\n\nfrom pypto.cli.main import PyptoGroup\n\n\n"
        "@click.group(cls=PyptoGroup)\ndef group():\n    pass\n\n\n"
        "@group.command()\ndef boom():\n    exec('raise KeyboardInterrupt')\n\n\n"
        "group.main(['boom'], standalone_mode=True)\n")
    env = {**__import__("os").environ, "PYTHONPATH": str(Path(pypto.__file__).parents[1])}
    out = subprocess.run([sys.executable, "-m", "interrupted_cli"], cwd=tmp_path, env=env, capture_output=True,
                         text=True, timeout=120, check=False)
    assert out.returncode == 130, (out.returncode, out.stderr)
    assert out.stderr.strip() == "pypto: interrupted"
