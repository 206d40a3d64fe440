"""The ``pypto`` command line: ``compile``, ``run``, ``run-pto``, ``sweep``, ``toolchain``, ``doctor``, ``settings``.

Data goes to stdout (``--json``: one JSON object with ``schema_version``), logs to stderr.

Exit codes:
    0  success
    1  internal error (a pypto bug)
    2  usage error (bad command line)
    3  user error (bad program or settings)
    4  toolchain missing or failed (ptoas, g++, CANN, container engine)
    130 interrupted (Ctrl-C / SIGINT)
"""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Any

import click

from pypto.cli._common import EXIT_CODES_HELP, CliState, ExitCode, emit_json, report_error, state


class PyptoGroup(click.Group):
    """A click group that maps every exception of a subcommand to the documented exit codes."""

    def invoke(self, ctx: click.Context) -> Any:
        from pypto.toolchain.procs import interrupt_kills_tools

        interrupt_kills_tools()  # Ctrl-C also stops ptoas / g++ at once (they run in their own process groups)
        try:
            return super().invoke(ctx)
        except (click.exceptions.Exit, click.exceptions.Abort, click.ClickException):
            raise
        except KeyboardInterrupt:  # not exit 1 + "Aborted!": 1 means a pypto bug
            from pypto.toolchain.procs import kill_running

            kill_running()
            signal.signal(signal.SIGINT, signal.SIG_IGN)  # on its way out: a second Ctrl-C must not cut the exit short
            _forget_interrupt()
            click.echo("pypto: interrupted", err=True)
            ctx.exit(int(ExitCode.INTERRUPTED))
        except Exception as exc:  # noqa: BLE001 - the CLI boundary turns every failure into an exit code
            ctx.exit(int(report_error(exc, ctx.find_object(CliState).json if ctx.find_object(CliState) else False)))


def _forget_interrupt() -> None:
    """Clear CPython's note of an unhandled Ctrl-C once pypto has handled it.

    Under ``python -m`` a KeyboardInterrupt that passed through ``exec`` of a string marks itself unhandled even when
    it is caught, and the interpreter then ends the process by SIGINT after its exit instead of with our 130. That is
    where a Ctrl-C lands when it arrives while a dataclass is being made during an import. Each evaluation of a
    string resets the mark (CPython 3.11).
    """
    exec("pass")  # noqa: S102 - a constant string


def version_text(toolchain: str | None = None) -> str:
    """``pypto X, toolchain Y (ptoas Z, dialect D)``."""
    import pypto
    from pypto.toolchain.manifest import load_manifest

    try:
        manifest = load_manifest(toolchain)
    except Exception as exc:  # noqa: BLE001 - --version must print something even with a broken install
        return f"pypto {pypto.__version__}, toolchain unavailable ({exc})"
    return (f"pypto {pypto.__version__}, toolchain {manifest.version} "
            f"(ptoas {manifest.ptoas.version}, dialect {manifest.ptoas.dialect}, sim {manifest.sim.isa_version})")


def _print_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return
    click.echo(version_text(ctx.params.get("toolchain")))
    ctx.exit(0)


@click.group(cls=PyptoGroup, epilog=EXIT_CODES_HELP, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--toolchain", metavar="VERSION", is_eager=True, help="Toolchain manifest version [env PYPTO_TOOLCHAIN].")
@click.option("--version", is_flag=True, expose_value=False, is_eager=True, callback=_print_version,
              help="Print the pypto and toolchain versions and exit.")
@click.option("--log-level", type=click.Choice(["debug", "info", "warn", "warning", "error", "fatal", "none"],
                                               case_sensitive=False), help="Log threshold [env PYPTO_LOG_LEVEL].")
@click.option("--log-format", type=click.Choice(["auto", "console", "json"], case_sensitive=False),
              help="Logs on stderr: console on a TTY, JSON lines otherwise [env PYPTO_LOG_FORMAT].")
@click.option("--config", type=click.Path(path_type=Path, dir_okay=False),
              help="Settings file (pypto.toml, or a pyproject.toml with [tool.pypto]).")
@click.pass_context
def cli(ctx: click.Context, toolchain: str | None, log_level: str | None, log_format: str | None,
        config: Path | None) -> None:
    """Compile and run PyPTO tile programs with a pinned toolchain.

    \b
    Examples:
      pypto compile examples/beginner/01_hello_world.py --platform a2a3sim
      pypto compile kernel.py::tile_add --shape a=128x128:f32 --json
      pypto run kernel.py --platform a5sim
      pypto run-pto add.pto --arg x=128x128:f32:in --arg y=128x128:f32:in --arg z=128x128:f32:out
      pypto toolchain show --get ptoas.sha256
      pypto doctor
    """
    from pypto.toolchain.logging import configure_logging

    obj = state(ctx)
    obj.config, obj.log_level, obj.log_format, obj.toolchain = config, log_level, log_format, toolchain
    configure_logging(level=(log_level or "info").lower(), log_format=(log_format or "auto").lower())


def _register() -> None:
    from pypto.cli.compile_cmd import compile_cmd, run_cmd
    from pypto.cli.run_pto_cmd import run_pto_cmd
    from pypto.cli.sweep_cmd import sweep_cmd
    from pypto.cli.toolchain_cmd import doctor_cmd, settings_cmd, toolchain_group

    for command in (compile_cmd, run_cmd, run_pto_cmd, sweep_cmd, toolchain_group, doctor_cmd, settings_cmd):
        cli.add_command(command)


_register()


def main(argv: list[str] | None = None) -> int:
    """Console-script entry point; returns the process exit code."""
    try:
        cli.main(args=argv, prog_name="pypto", standalone_mode=True)
    except SystemExit as done:
        return int(done.code or 0) if isinstance(done.code, int | None) else ExitCode.INTERNAL
    return ExitCode.OK


__all__ = ["cli", "main", "version_text", "emit_json"]
