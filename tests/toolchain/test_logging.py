"""structlog configuration: renderer choice, stderr, levels, bound context, stage timing."""

from __future__ import annotations

import io
import json

import pytest

from pypto.toolchain import logging as L
from pypto.toolchain.settings import resolve_settings


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def _lines(stream: io.StringIO) -> list[dict]:
    return [json.loads(line) for line in stream.getvalue().splitlines()]


def test_json_when_not_a_tty_with_context() -> None:
    out = io.StringIO()
    L.configure_logging(resolve_settings(platform="a5sim"), stream=out)
    L.get_logger("pypto.t").info("hello", n=1)
    (line,) = _lines(out)
    assert line["event"] == "hello" and line["n"] == 1 and line["level"] == "info"
    assert line["platform"] == "a5sim" and line["toolchain"] == resolve_settings().toolchain
    assert line["logger_name"] == "pypto.t" and "timestamp" in line


def test_console_on_a_tty(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    out = _Tty()
    L.configure_logging(level="info", stream=out)
    L.get_logger().info("hello", n=1)
    text = out.getvalue()
    assert "hello" in text and "n=1" in text and not text.startswith("{") and "\x1b[" not in text


def test_json_when_asked_even_on_tty() -> None:
    out = _Tty()
    L.configure_logging(level="info", log_format="json", stream=out)
    L.get_logger().info("x")
    assert _lines(out)[0]["event"] == "x"


def test_console_when_asked() -> None:
    out = io.StringIO()
    L.configure_logging(level="info", log_format="console", stream=out)
    L.get_logger().info("x")
    assert not out.getvalue().startswith("{")


def test_default_stream_is_current_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    L.configure_logging(level="info", log_format="json")
    L.get_logger().warning("to stderr")
    captured = capsys.readouterr()
    assert captured.out == "" and "to stderr" in captured.err


@pytest.mark.parametrize(("level", "shown"), [
    ("debug", {"d", "i", "w", "e"}), ("info", {"i", "w", "e"}), ("warn", {"w", "e"}),
    ("error", {"e"}), ("none", set()),
])
def test_levels(level: str, shown: set[str]) -> None:
    out = io.StringIO()
    L.configure_logging(level=level, log_format="json", stream=out)
    log = L.get_logger()
    log.debug("d"), log.info("i"), log.warning("w"), log.error("e")
    assert {line["event"] for line in _lines(out)} == shown


def test_logger_follows_reconfiguration() -> None:
    log = L.get_logger("early")
    first, second = io.StringIO(), io.StringIO()
    L.configure_logging(level="info", log_format="json", stream=first)
    log.info("a")
    L.configure_logging(level="info", log_format="json", stream=second)
    log.info("b")
    assert [x["event"] for x in _lines(first)] == ["a"] and [x["event"] for x in _lines(second)] == ["b"]


def test_bound_context_and_stage() -> None:
    out = io.StringIO()
    L.configure_logging(level="debug", log_format="json", stream=out)
    L.bind_context(program="tile_add", output_dir="/tmp/o")
    with L.stage("passes"):
        L.get_logger().warning("perf hint")
    L.get_logger().info("after")
    start, hint, done, after = _lines(out)
    assert start["event"] == "stage start" and start["stage"] == "passes" and start["level"] == "debug"
    assert hint["stage"] == "passes" and hint["program"] == "tile_add" and hint["output_dir"] == "/tmp/o"
    assert done["event"] == "stage done" and done["duration_ms"] >= 0
    assert "stage" not in after and after["program"] == "tile_add"


def test_stage_at_info_binds_its_name_but_writes_no_timing_lines() -> None:
    out = io.StringIO()
    L.configure_logging(level="info", log_format="json", stream=out)
    with L.stage("codegen"), L.bound_context(program="p", unused=None):
        L.get_logger().warning("inside")
    L.set_log_level("debug")  # the level is asked again at the next stage
    with L.stage("ptoas"):
        pass
    inside, start, done = _lines(out)
    assert inside["stage"] == "codegen" and inside["program"] == "p" and "unused" not in inside
    assert (start["event"], start["stage"], done["event"]) == ("stage start", "ptoas", "stage done")


def test_configure_clears_previous_context() -> None:
    out = io.StringIO()
    L.bind_context(program="old")
    L.configure_logging(level="info", log_format="json", stream=out)
    L.get_logger().info("x")
    assert "program" not in _lines(out)[0]


@pytest.mark.parametrize(("level", "shown"), [
    ("DEBUG", {"d", "i", "w", "e"}), ("INFO", {"i", "w", "e"}), ("EVENT", {"i", "w", "e"}), ("WARN", {"w", "e"}),
    ("ERROR", {"e"}), ("NONE", set()),
])
def test_set_log_level_as_upstream(level: str, shown: set[str]) -> None:
    import pypto

    out = io.StringIO()
    L.configure_logging(level="info", log_format="json", stream=out)
    with L.bound_context(program="p"):
        pypto.set_log_level(pypto.LogLevel[level])
        assert pypto.get_log_level() is pypto.LogLevel[level]
        log = L.get_logger()
        log.debug("d"), log.info("i"), log.warning("w"), log.error("e")
    lines = _lines(out)
    assert {line["event"] for line in lines} == shown
    assert all(line["program"] == "p" for line in lines)  # format and context survive a level change
    pypto.set_log_level(pypto.LogLevel.INFO)


def test_set_log_level_rejects_unknown() -> None:
    import pypto

    with pytest.raises(ValueError, match="unknown log level"):
        pypto.set_log_level(42)
    assert [m.value for m in pypto.LogLevel] == list(range(7))


def test_error_classes_as_upstream() -> None:
    import pypto
    from pypto.errors import ToolchainError, UserError, VerificationError

    assert issubclass(pypto.InternalError, pypto.Error) and issubclass(pypto.InternalError, RuntimeError)
    for cls in (UserError, ToolchainError, VerificationError):
        assert issubclass(cls, pypto.Error) and not issubclass(cls, pypto.InternalError)
