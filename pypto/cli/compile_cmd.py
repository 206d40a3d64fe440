"""``pypto compile`` and ``pypto run``: thin shells over ``pypto.flows.loader.compile_file`` / ``run_file``.

The flow receives ``(path, name, settings, request)`` where ``request`` is a :class:`CompileRequest`
(duck-typed: read its attributes). ``--in-container`` hands the same command line, minus that flag, to
``pypto.toolchain.docker.run_in_container`` with the working directory mounted at ``/src`` and the
output directory at ``/out``.
"""

from __future__ import annotations

import math
import re
import time
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click

from pypto.cli._common import emit_json, progress, state
from pypto.errors import ToolchainError
from pypto.ir.dtypes import ALIASES

_DTYPE_ALIASES = {alias: dt.meta for alias, dt in ALIASES.items()}
_SHAPE = re.compile(r"^(?P<name>[A-Za-z_]\w*)=(?P<dims>\d+(?:x\d+)*)(?::(?P<dtype>\w+))?$")


@dataclass(frozen=True, slots=True)
class ShapeSpec:
    """A sample input spec for a ``@pl.jit`` function: ``name=128x128:f32``."""

    name: str
    shape: tuple[int, ...]
    dtype: str
    """``compiled_meta.json`` spelling: fp16, bf16, fp32, int8, int16, int32, int64, uint8, bool."""


@dataclass(frozen=True, slots=True)
class CompileRequest:
    """What the CLI asks of the driver, beyond :class:`~pypto.toolchain.settings.Settings`."""

    output_dir: Path | None = None
    skip_ptoas: bool = False
    dump_passes: str = "concise"
    """``none`` | ``concise`` | ``explicit`` (PassDumpLevel member names, lower case)."""
    shapes: tuple[ShapeSpec, ...] = ()
    run: bool = False
    rtol: float = 1e-5
    atol: float = 1e-5
    seed: int = 0
    extra: dict[str, Any] = field(default_factory=dict)


def parse_shape(text: str) -> ShapeSpec:
    """Parse ``name=128x128:f32`` (dtype defaults to fp32); bad specs raise click.BadParameter."""
    match = _SHAPE.match(text.strip())
    dtype = (match.group("dtype") or "fp32").lower() if match else ""
    if match is None or dtype not in _DTYPE_ALIASES:
        raise click.BadParameter(
            f"'{text}' is not NAME=DIMxDIM[:DTYPE] with DTYPE one of {', '.join(sorted(_DTYPE_ALIASES))} "
            "(example: a=128x128:f32)", param_hint="--shape")
    dims = tuple(int(d) for d in match.group("dims").split("x"))
    if 0 in dims:
        raise click.BadParameter(f"'{text}': dimensions must be positive", param_hint="--shape")
    check_extent(text, dims, _DTYPE_ALIASES[dtype], "--shape")
    return ShapeSpec(match.group("name"), dims, _DTYPE_ALIASES[dtype])


def _tolerance(ctx: click.Context, param: click.Parameter, value: float) -> float:
    """``--rtol`` / ``--atol``: a finite number >= 0 (NaN would compare nothing, a negative one fail all)."""
    if not (math.isfinite(value) and value >= 0):
        raise click.BadParameter(f"{value} is not a finite number >= 0", ctx=ctx, param=param)
    return value


def check_extent(text: str, dims: tuple[int, ...], dtype: str, option: str) -> None:
    """A usage error when a dimension, or the tensor's byte size, does not fit in int64."""
    from pypto.flows.host_memory import too_large
    from pypto.ir.dtypes import from_meta

    problem = too_large(dims, max(1, from_meta(dtype).bits // 8))
    if problem:
        raise click.BadParameter(f"'{text}': {problem}", param_hint=option)


def _prefix_map(values: tuple[str, ...]) -> str | None:
    """Repeated ``--file-prefix-map OLD=NEW`` options as the setting's ``;``-separated text."""
    from pypto.toolchain.prefix_map import format_prefix_map, parse_prefix_map

    try:
        return format_prefix_map(parse_prefix_map(list(values))) or None
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--file-prefix-map") from None


def split_target(spec: str) -> tuple[Path, str | None]:
    """``FILE[::NAME]`` -> (path, name or None); a missing file is a usage error."""
    path_text, _, name = spec.partition("::")
    path = Path(path_text)
    if not path.exists():
        raise click.BadParameter(f"'{path_text}' does not exist", param_hint="FILE[::NAME]")
    if "::" in spec:
        from pypto.artifact.names import RULE, symbol_problem

        problem = symbol_problem(name)
        if problem is not None:
            raise click.BadParameter(f"kernel name {name!r} is not valid: {problem} (a name is {RULE})",
                                     param_hint="FILE[::NAME]")
    return path, name or None


def _driver() -> Any:
    try:
        import pypto.flows.loader as loader
    except ImportError as exc:
        raise ToolchainError(f"the pypto compiler driver could not be imported: {exc}") from exc
    return loader


def _call_driver(func_name: str, *args: Any) -> Any:
    driver = _driver()
    func = getattr(driver, func_name, None)
    if func is None:
        from pypto.errors import InternalError

        raise InternalError(f"pypto.flows.loader has no {func_name}(); this pypto build is incomplete")
    return func(*args)


def _in_container(ctx: click.Context, settings: Any, path: Path, name: str | None, out: Path | None) -> int:
    """Re-run this command in the toolchain image: cwd at /src (read-only), the output dir at /out.

    The container records ``/src/...`` source paths; ``--file-prefix-map /src=<cwd>`` (composed
    with the caller's own maps) makes its artifacts byte-identical to a host compile.
    """
    from pypto.toolchain import docker
    from pypto.toolchain.prefix_map import apply_prefix_map, format_prefix_map, parse_prefix_map

    source_dir = Path.cwd()
    if out is None:
        stamp = time.strftime("%Y%m%d_%H%M%S")
        out = settings.output_base / f"{name or path.stem}_{stamp}"
    out = out if out.is_absolute() else source_dir / out
    target = docker.to_container_path(path.resolve(), source_dir, out) + (f"::{name}" if name else "")
    argv = _command_argv(ctx, target, docker.CONTAINER_OUT)
    user_map = parse_prefix_map(settings.file_prefix_map)
    inside = ((docker.CONTAINER_SRC, apply_prefix_map(str(source_dir.resolve()), user_map)),)
    argv += ["--file-prefix-map", format_prefix_map(inside)]
    return int(docker.run_in_container(argv, settings=settings, source_dir=source_dir, output_dir=out))


def _command_argv(ctx: click.Context, target: str, output_dir: str) -> list[str]:
    """Rebuild ``<command> TARGET [options] --output-dir OUT`` from the parsed parameters."""
    argv = [ctx.info_name or "compile", target]
    skip = {"target", "output_dir", "in_container", "prefix_maps"}
    for param in ctx.command.params:
        value = ctx.params.get(param.name)
        if param.name in skip or value in (None, False, ()) or not param.opts:
            continue
        if getattr(param, "is_flag", False):
            argv.append(max(param.opts, key=len))
            continue
        for item in value if isinstance(value, tuple) else (value,):
            argv += [max(param.opts, key=len), str(item)]
    return [*argv, "--output-dir", output_dir]


def _summary(result: Any, settings: Any, seconds: float, kind: str) -> dict[str, Any]:
    to_json = getattr(result, "to_json", None)
    data = dict(to_json()) if callable(to_json) else {}
    artifact = getattr(result, "output_dir", None) or getattr(getattr(result, "compiled", None), "output_dir", None)
    data.setdefault("artifact", str(artifact if artifact is not None else result))
    for key in ("max_error", "passed", "outputs"):
        if getattr(result, key, None) is not None:
            data.setdefault(key, getattr(result, key))
    timings = dict(getattr(result, "timings", None) or {})
    timings.setdefault("total_seconds", round(seconds, 6))
    data.update(platform=settings.platform, runtime=settings.runtime, toolchain=settings.toolchain,
                manifest_sha256=settings.manifest.sha256, timings=timings)
    return {"ok": True, "command": kind, **data}


def _print_human(summary: dict[str, Any], failed: bool) -> None:
    click.echo(summary["artifact"])
    if "max_error" in summary:
        error = summary["max_error"]
        click.echo(f"max error: {'n/a' if error is None else error}  passed: {summary.get('passed', '?')}")
    if summary.get("verdict") and not failed:  # a failed verdict goes to stderr, as an error
        click.echo(summary["verdict"])
    if "dfx_outputs" in summary:
        click.echo(f"diagnostics: {summary['dfx_outputs']}")


_TARGET = click.argument("target", metavar="FILE[::NAME]")
_COMMON_OPTIONS = (
    click.option("--platform", help="a2a3sim | a5sim | a2a3 | a5 [env PYPTO_PLATFORM]."),
    click.option("--runtime", help="tensormap_and_ringbuffer | host_build_graph [env PYPTO_RUNTIME]."),
    click.option("--output-dir", "-o", type=click.Path(path_type=Path, file_okay=False),
                 help="Artifact dir (default: <PYPTO_PROG_BUILD_DIR or build_output>/<program>_<timestamp>)."),
    click.option("--shape", "shapes", multiple=True, metavar="NAME=DIMS[:DTYPE]",
                 help="Sample input for a @pl.jit function, e.g. a=128x128:f32 (repeatable)."),
    click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout."),
    click.option("--in-container", is_flag=True, help="Run inside the toolchain image (docker)."),
    click.option("--file-prefix-map", "prefix_maps", multiple=True, metavar="OLD=NEW",
                 help="Record source paths under OLD as NEW in the artifact's loc(...) (like gcc "
                      "-ffile-prefix-map; repeatable) [env PYPTO_FILE_PREFIX_MAP, ';'-separated]."),
)


def _with_common(func: Any) -> Any:
    for option in reversed(_COMMON_OPTIONS):
        func = option(func)
    return _TARGET(func)


def _execute(ctx: click.Context, target: str, kind: str, overrides: dict[str, Any], request: CompileRequest,
             in_container: bool) -> None:
    from pypto.toolchain.settings import override

    path, name = split_target(target)
    cli_state = state(ctx)
    settings = cli_state.settings(**overrides)
    if in_container:
        ctx.exit(_in_container(ctx, settings, path, name, request.output_dir))
    func_name = "run_file" if request.run else "compile_file"
    start = time.perf_counter()
    # @pl.jit kernels resolve settings themselves: the command line's prefix map must reach them too
    scope = override(file_prefix_map=settings.file_prefix_map) if overrides.get("file_prefix_map") else nullcontext()
    with scope, progress(f"{kind} {target} for {settings.platform}", enabled=not cli_state.json):
        result = _call_driver(func_name, path, name, settings, request)
    summary = _summary(result, settings, time.perf_counter() - start, kind)
    # a mismatch, or a golden that checked nothing (returned None, NaN everywhere): not a success
    failed = summary.get("passed") is False or getattr(result, "ok", True) is False
    if cli_state.json:
        emit_json(summary)
    else:
        _print_human(summary, failed)
    if failed:
        if summary.get("verdict"):
            click.echo(f"error: {summary['verdict']}", err=True)
        ctx.exit(3)


@click.command("compile")
@_with_common
@click.option("--skip-ptoas", is_flag=True, help="Stop at .pto files (no kernel wrappers, not runnable).")
@click.option("--dump-passes", type=click.Choice(["none", "concise", "explicit"], case_sensitive=False),
              default="concise", show_default=True, help="IR dumps after each pass into passes_dump/.")
@click.option("--verify", type=click.Choice(["none", "basic", "roundtrip"], case_sensitive=False),
              help="IR verification level [env PYPTO_VERIFY_LEVEL].")
@click.option("--profile", is_flag=True, default=None, help="Write report/pipeline_profile.* [env PYPTO_COMPILE_PROFILING].")
@click.option("--run", "run_after", is_flag=True, help="Run the artifact on the sim platform after compiling.")
@click.pass_context
def compile_cmd(ctx: click.Context, target: str, platform: str | None, runtime: str | None, output_dir: Path | None,
                shapes: tuple[str, ...], as_json: bool, in_container: bool, prefix_maps: tuple[str, ...],
                skip_ptoas: bool, dump_passes: str, verify: str | None, profile: bool | None,
                run_after: bool) -> None:
    """Compile a @pl.program class or @pl.jit function in FILE (NAME picks one) into an artifact dir.

    Prints the artifact directory (or, with --json, one JSON object with the artifact path,
    platform, runtime, toolchain and timings).
    """
    state(ctx).json = as_json
    request = CompileRequest(output_dir=output_dir, skip_ptoas=skip_ptoas, dump_passes=dump_passes.lower(),
                             shapes=tuple(parse_shape(s) for s in shapes), run=run_after)
    overrides = {"platform": platform, "runtime": runtime, "verify_level": verify, "compile_profiling": profile,
                 "file_prefix_map": _prefix_map(prefix_maps)}
    _execute(ctx, target, "compile", overrides, request, in_container)


@click.command("run")
@_with_common
@click.option("--rtol", type=float, default=1e-5, show_default=True, callback=_tolerance,
              help="Relative tolerance vs the golden (a finite number >= 0).")
@click.option("--atol", type=float, default=1e-5, show_default=True, callback=_tolerance,
              help="Absolute tolerance vs the golden (a finite number >= 0).")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True, help="Seed of the generated inputs.")
@click.option("--swimlane", "--enable-chip-swimlane", "swimlane", type=click.IntRange(0, 4), is_flag=False, flag_value=4, default=0, metavar="[LEVEL]",
              help="Record the chip swimlane (bare: level 4) into <artifact>/dfx_outputs/.")
@click.option("--deps", "--enable-dep-gen", "deps", is_flag=True, help="Record every task dependency edge into dfx_outputs/deps.json.")
@click.option("--dump-args", type=click.IntRange(0, 2), is_flag=False, flag_value=1, default=0, metavar="[LEVEL]",
              help="Dump task arguments into dfx_outputs/args_dump/ (bare / 1: tensors marked with "
                   "pl.dump_tag or pl.at(dumps=); 2: every tensor argument).")
@click.option("--pmu", "--enable-pmu", "pmu", type=click.IntRange(0, None), is_flag=False, flag_value=2, default=0, metavar="[EVENT]",
              help="Write dfx_outputs/pmu.csv (counters are 0: the simulator models none).")
@click.option("--scope-stats", "--enable-scope-stats", "scope_stats", is_flag=True, help="Write dfx_outputs/scope_stats/scope_stats.jsonl.")
@click.pass_context
def run_cmd(ctx: click.Context, target: str, platform: str | None, runtime: str | None, output_dir: Path | None,
            shapes: tuple[str, ...], as_json: bool, in_container: bool, prefix_maps: tuple[str, ...], rtol: float,
            atol: float, seed: int, swimlane: int, deps: bool, dump_args: int, pmu: int, scope_stats: bool) -> None:
    """Compile FILE[::NAME] if needed and run it on a sim platform with generated inputs.

    Compares the outputs with the program's golden (NaN golden elements are not compared) and reports
    the verdict, the max error and timings; exits 3 when the outputs do not match or the golden checked
    nothing (NaN everywhere, or it returned None). --swimlane / --deps / --dump-args / --pmu / --scope-stats
    write run-time diagnostics to <artifact>/dfx_outputs/ (view the swimlane with
    `python -m pypto.tools.swimlane <artifact>/dfx_outputs`).
    """
    state(ctx).json = as_json
    dfx = {"enable_chip_swimlane": swimlane, "enable_dep_gen": deps, "enable_dump_args": dump_args,
           "enable_pmu": pmu, "enable_scope_stats": scope_stats}
    request = CompileRequest(output_dir=output_dir, shapes=tuple(parse_shape(s) for s in shapes), run=True,
                             rtol=rtol, atol=atol, seed=seed, extra={"run_config": dfx})
    overrides = {"platform": platform, "runtime": runtime, "file_prefix_map": _prefix_map(prefix_maps)}
    _execute(ctx, target, "run", overrides, request, in_container)
