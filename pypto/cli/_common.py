"""Shared CLI plumbing: exit codes, error reporting, per-invocation state, output helpers."""

from __future__ import annotations

import json
import sys
from contextlib import nullcontext
from dataclasses import dataclass
from enum import IntEnum
from pathlib import Path
from typing import Any

import click

from pypto.errors import InternalError, PyptoError, ToolchainError, UserError, VerificationError

JSON_SCHEMA_VERSION = 1


class ExitCode(IntEnum):
    """Process exit codes of the ``pypto`` CLI."""

    OK = 0
    INTERNAL = 1
    USAGE = 2
    USER = 3
    TOOLCHAIN = 4
    INTERRUPTED = 130  # 128 + SIGINT, as a shell reports a job stopped by Ctrl-C


EXIT_CODES_HELP = (
    "Exit codes: 0 ok; 1 internal error (a pypto bug, please report it); 2 usage error (bad command "
    "line); 3 user error (bad program or settings); 4 toolchain missing or failed (ptoas, g++, "
    "CANN, container engine); 130 interrupted (Ctrl-C)."
)

_CODES: tuple[tuple[type[BaseException], ExitCode], ...] = (
    (InternalError, ExitCode.INTERNAL),
    (UserError, ExitCode.USER),
    (VerificationError, ExitCode.USER),
    (ToolchainError, ExitCode.TOOLCHAIN),
    (PyptoError, ExitCode.INTERNAL),
)


def exit_code_for(exc: BaseException) -> ExitCode:
    """The exit code an exception maps to (anything unexpected is an internal error)."""
    from pypto.runtime.native import LoadError, SimRuntimeError

    if isinstance(exc, SimRuntimeError):  # a kernel fault, deadlock or orchestration error: the program's
        return ExitCode.TOOLCHAIN if isinstance(exc, LoadError) else ExitCode.USER
    if getattr(exc, "user_error", None) is not None:  # PartialCodegenError caused by the program itself
        return ExitCode.USER
    for kind, code in _CODES:
        if isinstance(exc, kind):
            return code
    if _user_path_error(exc):
        return ExitCode.USER
    return ExitCode.INTERNAL


def _user_path_error(exc: BaseException) -> bool:
    """A file-system error on a path outside the pypto package: the user's path or environment, not a bug."""
    import errno

    user_errnos = {errno.EACCES, errno.EPERM, errno.ENOENT, errno.ENOTDIR, errno.EISDIR, errno.EROFS,
                   errno.ENOSPC, errno.EDQUOT, errno.EEXIST, errno.ENAMETOOLONG}
    if not isinstance(exc, OSError) or exc.errno not in user_errnos or not exc.filename:
        return False
    package = Path(__file__).resolve().parents[1]
    return package not in Path(str(exc.filename)).resolve().parents


@dataclass
class CliState:
    """Global options, stored on the click context object."""

    config: Path | None = None
    log_level: str | None = None
    log_format: str | None = None
    toolchain: str | None = None
    json: bool = False

    def settings(self, **overrides: Any) -> Any:
        """Resolve settings once for this command and configure logging from them."""
        from pypto.toolchain.logging import configure_logging
        from pypto.toolchain.settings import resolve_settings

        given = {"log_level": self.log_level, "log_format": self.log_format, "toolchain": self.toolchain}
        given.update({k: v for k, v in overrides.items() if v is not None})
        settings = resolve_settings(config_file=self.config, **given)
        configure_logging(settings)
        return settings


def state(ctx: click.Context) -> CliState:
    """The CliState of this invocation."""
    return ctx.ensure_object(CliState)


def emit_json(data: dict[str, Any]) -> None:
    """Write one JSON object (with ``schema_version``) to stdout."""
    click.echo(json.dumps({"schema_version": JSON_SCHEMA_VERSION, **data}, indent=2, default=str))


def report_error(exc: BaseException, as_json: bool) -> ExitCode:
    """Print an error (stderr, or a JSON object on stdout with ``--json``) and return its exit code."""
    code = exit_code_for(exc)
    from pypto.toolchain.storage import storage_error

    known = isinstance(exc, PyptoError) and not isinstance(exc, InternalError)
    if not known and (full := storage_error(exc)) is not None:  # a full / read-only disk on a named path
        exc, known = full, True
    elif _user_path_error(exc):
        assert isinstance(exc, OSError)
        known = True
        exc = UserError(f"cannot use {exc.filename}: {exc.strerror}",
                        hint="check the path and its permissions (output dir, cache dir, input files)")
    text = str(exc) if known else f"internal error: {type(exc).__name__}: {exc}"
    if not known:
        text += "\n  this is a pypto bug; rerun with --log-level debug and report the traceback"
        from pypto.toolchain.logging import get_logger

        get_logger("pypto.cli").debug("traceback", exc_info=exc)
    if as_json:
        emit_json({"ok": False, "exit_code": int(code), "error": {"type": type(exc).__name__, "message": text}})
    else:
        located = text.split("\n", 1)[0].find(": error: ") > 0  # gcc-style "file:line:col: error: ..."
        plain = text.startswith("error") or located or not known
        click.echo(text if plain else f"error: {text}", err=True)
    return code


def progress(message: str, enabled: bool = True) -> Any:
    """A rich spinner on stderr, shown only when stderr is a TTY (and ``enabled``)."""
    if not enabled or not sys.stderr.isatty():
        return nullcontext()
    from rich.console import Console

    return Console(stderr=True).status(message)
