"""``pypto toolchain list|show|verify|path``, ``pypto doctor`` and ``pypto settings``."""

from __future__ import annotations

import json
import shutil
from dataclasses import asdict
from pathlib import Path
from typing import Any

import click

from pypto.cli._common import ExitCode, emit_json, state
from pypto.errors import ToolchainError

_JSON = click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout.")


@click.group("toolchain")
def toolchain_group() -> None:
    """Inspect the pinned toolchain manifests and the installed tools."""


@toolchain_group.command("list")
@_JSON
@click.pass_context
def list_cmd(ctx: click.Context, as_json: bool) -> None:
    """List available toolchain versions (* marks the selected one)."""
    from pypto.toolchain.manifest import list_manifests, load_manifest

    state(ctx).json = as_json
    selected = state(ctx).settings().toolchain
    rows = [load_manifest(v) for v in list_manifests()]
    if as_json:
        emit_json({"selected": selected, "toolchains": [
            {"version": m.version, "ptoas": m.ptoas.version, "dialect": m.ptoas.dialect,
             "platforms": list(m.support.platforms), "sha256": m.sha256} for m in rows]})
        return
    for m in rows:
        mark = "*" if m.version == selected else " "
        click.echo(f"{mark} {m.version}  ptoas {m.ptoas.version} ({m.ptoas.dialect})  "
                   f"platforms {', '.join(m.support.platforms)}")


@toolchain_group.command("show")
@click.argument("version", required=False)
@click.option("--get", "key", metavar="KEY", help="Print one value by dotted key, e.g. ptoas.sha256.")
@_JSON
@click.pass_context
def show_cmd(ctx: click.Context, version: str | None, key: str | None, as_json: bool) -> None:
    """Show a toolchain manifest (default: the selected one).

    Scripts read pinned values with --get instead of copying them:
    `pypto toolchain show --get ptoas.sha256`.
    """
    from pypto.toolchain.manifest import get_value

    state(ctx).json = as_json
    manifest = state(ctx).settings(toolchain=version).manifest
    if key is not None:
        value = get_value(manifest, key)
        if as_json:
            emit_json({"toolchain": manifest.version, "key": key, "value": value})
        else:
            click.echo(value if isinstance(value, str) else json.dumps(value))
        return
    if as_json:
        emit_json({"toolchain": manifest.version, "path": str(manifest.path), "sha256": manifest.sha256,
                   "manifest": manifest.model_dump(by_alias=True, mode="json")})
        return
    click.echo(f"# {manifest.path}  sha256 {manifest.sha256}")
    click.echo(manifest.path.read_text().rstrip() if manifest.path else "")


def _print_checks(checks: list[Any]) -> None:
    for check in checks:
        mark = "ok     " if check.ok else "MISSING"
        click.echo(f"[{mark}] {check.name}: {check.detail}")
        if check.fix:
            click.echo(f"          fix: {check.fix}")


@toolchain_group.command("verify")
@click.option("--all-files", is_flag=True, help="Hash every installed ptoas file, not only the CLI and its libraries.")
@click.option("--wheel", type=click.Path(path_type=Path, dir_okay=False),
              help="Also check a downloaded ptoas wheel file against the manifest's sha256.")
@click.option("--image", metavar="TAG", help="Check a toolchain image instead of this installation.")
@_JSON
@click.pass_context
def verify_cmd(ctx: click.Context, all_files: bool, wheel: Path | None, image: str | None, as_json: bool) -> None:
    """Check the installed tools against the manifest (exit 4 on any mismatch).

    \b
    Checks: the ptoas distribution's version equals the manifest's, and its installed files
    match the sha256 entries of the wheel's RECORD (the wheel's own sha256 is enforced at install
    time by pip --require-hashes, or here with --wheel FILE); g++ major version; the simulator's
    include directory.

    \b
    With --image TAG: the image's labels (toolchain version, manifest sha256, flavor, ptoas
    version), the manifest inside it, its image.lock (ptoas sha256, every wheel's version and hash),
    the installed versions, and this same verify run inside the image.
    """
    state(ctx).json = as_json
    if image is not None:
        from pypto.toolchain.image_verify import verify_image

        checks = verify_image(image, state(ctx).settings().manifest)
    else:
        from pypto.toolchain.doctor import verify_toolchain

        checks = verify_toolchain(state(ctx).settings(), all_files=all_files, wheel=wheel)
    ok = all(c.ok for c in checks)
    if as_json:
        emit_json({"ok": ok, "checks": [asdict(c) for c in checks]})
    else:
        _print_checks(checks)
    if not ok:
        ctx.exit(ExitCode.TOOLCHAIN)


def _tool_path(tool: str, settings: Any) -> Path:
    from pypto.toolchain.doctor import SIM_INCLUDE
    from pypto.toolchain.ptoas import require_ptoas

    if tool == "ptoas":
        return require_ptoas(settings.ptoas_root, settings.cache_dir)
    if tool == "gxx":
        found = shutil.which("g++")
        if found is None:
            raise ToolchainError("g++ not found on PATH", hint="install g++ (Debian/Ubuntu: apt-get install g++)")
        return Path(found)
    if not SIM_INCLUDE.is_dir():
        raise ToolchainError(f"simulator include dir {SIM_INCLUDE} is missing", hint="reinstall pypto")
    return SIM_INCLUDE


@toolchain_group.command("path")
@click.argument("tool", required=False, type=click.Choice(["ptoas", "gxx", "include"]))
@click.pass_context
def path_cmd(ctx: click.Context, tool: str | None) -> None:
    """Print the path of a tool (ptoas, gxx) or the sim include dir; all three without TOOL."""
    settings = state(ctx).settings()
    if tool is not None:
        click.echo(_tool_path(tool, settings))
        return
    for name in ("ptoas", "gxx", "include"):
        click.echo(f"{name}\t{_tool_path(name, settings)}")


@click.command("doctor")
@click.option("--no-docker", is_flag=True, help="Skip the container engine check.")
@_JSON
@click.pass_context
def doctor_cmd(ctx: click.Context, no_docker: bool, as_json: bool) -> None:
    """Show what is installed, what each platform needs, and what is missing (exit 4 if the
    selected platform cannot be used)."""
    from pypto.toolchain.doctor import doctor

    state(ctx).json = as_json
    report = doctor(state(ctx).settings(), with_docker=not no_docker)
    if as_json:
        emit_json(report.to_json())
    else:
        _print_doctor(report)
    if not report.ok:
        ctx.exit(ExitCode.TOOLCHAIN)


def _print_doctor(report: Any) -> None:
    click.echo(f"toolchain {report.info['toolchain']} ({report.info['manifest']}, sha256 {report.info['manifest_sha256']})")
    _print_checks(list(report.checks))
    click.echo("")
    for status in report.platforms:
        mark = "*" if status.platform == report.selected_platform else " "
        verdict = "ready" if status.ready else f"missing {', '.join(status.missing)}"
        click.echo(f"{mark} {status.platform:8} ({status.backend}): needs {', '.join(status.needs)}; {verdict}")
        for how in status.how:
            click.echo(f"      how: {how}")


@click.command("settings")
@_JSON
@click.pass_context
def settings_cmd(ctx: click.Context, as_json: bool) -> None:
    """Show every resolved setting, its value and where it came from."""
    state(ctx).json = as_json
    settings = state(ctx).settings()
    rows = settings.describe()
    if as_json:
        emit_json({"config_file": str(settings.config_file) if settings.config_file else None, "settings": rows})
        return
    for row in rows:
        click.echo(f"{row['name']:20} = {row['value']!s:32} ({row['source']}; {row['env']})")


@toolchain_group.command("shell")
@click.option("--image", help="Image to use (default: the newest local image whose labels match the toolchain).")
@click.option("--output-dir", "-o", type=click.Path(path_type=Path, file_okay=False), default=Path("build_output"),
              show_default=True, help="Host dir mounted read-write at /out.")
@click.option("--print-command", is_flag=True, help="Print the docker command instead of running it.")
@click.pass_context
def shell_cmd(ctx: click.Context, image: str | None, output_dir: Path, print_command: bool) -> None:
    """Open a developer shell in the toolchain image (current dir read-only at /src, -o at /out).

    The shell runs with the launcher's sandbox: your uid:gid, no network, no capabilities,
    no-new-privileges, a read-only root and a tmpfs /tmp.
    """
    import shlex

    from pypto.toolchain import docker

    settings = state(ctx).settings()
    out = output_dir if output_dir.is_absolute() else Path.cwd() / output_dir
    if print_command:
        argv = docker.shell_command(settings=settings, source_dir=Path.cwd(), output_dir=out, image=image)
        click.echo(shlex.join(argv))
        return
    ctx.exit(docker.open_shell(settings=settings, source_dir=Path.cwd(), output_dir=out, image=image))
