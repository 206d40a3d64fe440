"""``pypto run-pto FILE.pto``: run a hand-written PTO kernel on a sim platform with generated inputs.

Each ``--arg`` names a ``func.func`` argument (without ``%``) and gives a tensor as
``DIMS[:DTYPE][:in|out|inout]`` or a scalar as ``VALUE[:DTYPE]``; the names must match the
kernel's arguments exactly (dynamic dimensions are taken from the tensor shapes). Without any
``--arg``, tensors with static view shapes are generated as ``inout``.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
import numpy as np

from pypto.cli._common import emit_json, progress, state
from pypto.cli.compile_cmd import _DTYPE_ALIASES, check_extent
from pypto.errors import UserError

_ARG = re.compile(r"^(?P<name>[A-Za-z_$][\w$.-]*)=(?P<rest>.+)$")
_DIMS = re.compile(r"^\d+(?:x\d+)*$")
_DIRS = ("in", "out", "inout")


@dataclass(frozen=True, slots=True)
class ArgSpec:
    """One ``--arg``: a tensor (``shape`` set) or a scalar (``value`` set)."""

    name: str
    text: str
    shape: tuple[int, ...] | None = None
    value: str | None = None
    dtype: str | None = None
    direction: str | None = None


def parse_arg(text: str) -> ArgSpec:
    """``x=128x128:f32:in`` / ``alpha=2.5:f32``; malformed text raises click.BadParameter (usage error)."""
    m = _ARG.match(text.strip())
    if m is None:
        raise click.BadParameter(f"'{text}' is not NAME=DIMS[:DTYPE][:in|out|inout] or NAME=VALUE[:DTYPE] "
                                 "(example: x=128x128:f32:in)", param_hint="--arg")
    head, *rest = m.group("rest").split(":")
    dtype = direction = None
    for part in rest:
        low = part.lower()
        if low in _DIRS and direction is None:
            direction = low
        elif low in _DTYPE_ALIASES and dtype is None:
            dtype = _DTYPE_ALIASES[low]
        else:
            raise click.BadParameter(f"'{text}': '{part}' is neither a dtype ({', '.join(sorted(_DTYPE_ALIASES))}) "
                                     "nor a direction (in, out, inout)", param_hint="--arg")
    if _DIMS.match(head):
        dims = tuple(int(d) for d in head.split("x"))
        if 0 in dims:
            raise click.BadParameter(f"'{text}': dimensions must be positive", param_hint="--arg")
        check_extent(text, dims, dtype or "fp32", "--arg")
        return ArgSpec(m.group("name"), text, shape=dims, value=head, dtype=dtype, direction=direction)
    if direction is not None:
        raise click.BadParameter(f"'{text}': a direction needs tensor dimensions like 128x128", param_hint="--arg")
    return ArgSpec(m.group("name"), text, value=head, dtype=dtype)


def _expected(sig: Any) -> str:
    parts = []
    for a in sig.user_args:
        if a.kind == "tensor":
            dims = "x".join("N" if s is None else str(s) for s in a.shape) if a.shape else "DIMS"
            parts.append(f"--arg {a.name}={dims}:{a.dtype}")
        else:
            parts.append(f"--arg {a.name}=VALUE:{a.dtype}")
    return " ".join(parts)


def match_specs(sig: Any, specs: tuple[ArgSpec, ...]) -> tuple[ArgSpec, ...]:
    """The specs in the kernel's argument order; UserError naming both sides on any mismatch."""
    if not specs:
        return _default_specs(sig)
    by_name = {s.name: s for s in specs}
    want = {a.name for a in sig.user_args}
    dims = {a.name for a in sig.args if a.kind == "dyn_dim"}
    extra = [n for n in by_name if n not in want]
    missing = [a.name for a in sig.user_args if a.name not in by_name]
    if len(by_name) != len(specs) or extra or missing:
        detail = [f"unknown --arg {', '.join(extra)}" if extra else "",
                  f"missing --arg {', '.join(missing)}" if missing else "",
                  "an --arg name is repeated" if len(by_name) != len(specs) else "",
                  f"({', '.join(sorted(set(extra) & dims))} are dynamic dimensions taken from tensor shapes)"
                  if set(extra) & dims else ""]
        raise UserError(f"--arg specs ({', '.join(s.name for s in specs)}) do not match the arguments of "
                        f"{sig.render()}: {'; '.join(d for d in detail if d)}", hint=f"expected: {_expected(sig)}")
    for a in sig.user_args:
        _check_spec(sig, a, by_name[a.name])
    return tuple(by_name[a.name] for a in sig.user_args)


def _check_spec(sig: Any, a: Any, spec: ArgSpec) -> None:
    problem = None
    if a.kind == "tensor" and spec.shape is None:
        problem = f"%{a.name}: {a.mlir_type} is a tensor; give its dimensions like 128x128"
    elif a.kind == "scalar" and (spec.direction is not None or "x" in (spec.value or "")):
        problem = f"%{a.name}: {a.mlir_type} is a scalar; give a value like 2.5"
    elif spec.dtype is not None and spec.dtype != a.dtype:
        problem = f"dtype {spec.dtype} does not match %{a.name}: {a.mlir_type} ({a.dtype})"
    if problem:
        raise UserError(f"--arg {spec.text} does not match {sig.render()}: {problem}",
                        hint=f"expected: {_expected(sig)}")


def _default_specs(sig: Any) -> tuple[ArgSpec, ...]:
    out = []
    for a in sig.user_args:
        if a.kind != "tensor" or a.shape is None or None in a.shape:
            raise UserError(f"{sig.render()}: %{a.name} needs an --arg (its shape or value is not static)",
                            hint=f"expected: {_expected(sig)}")
        out.append(ArgSpec(a.name, a.name, shape=tuple(a.shape)))
    return tuple(out)


def make_value(a: Any, spec: ArgSpec, direction: str, rng: np.random.Generator) -> Any:
    """A seeded input array (zeros for ``out``) or the scalar value of ``spec``."""
    from pypto.runtime import dtypes

    if a.kind == "scalar":
        try:
            return float(spec.value) if a.dtype in ("fp32", "fp16") else int(spec.value, 0)
        except ValueError:
            raise UserError(f"--arg {spec.text}: '{spec.value}' is not a valid {a.dtype} value "
                            f"for %{a.name}") from None
    dt = dtypes.from_meta(a.dtype)
    if dt.numpy is None:
        raise UserError(f"--arg {spec.text}: dtype {a.dtype} has no numpy type; call pypto.runtime.run_pto "
                        "from Python with raw-bit arrays instead")
    shape, npdt = spec.shape, np.dtype(dt.numpy)
    if direction == "Out":
        return np.zeros(shape, npdt)
    if npdt.kind == "f":
        return rng.standard_normal(shape).astype(npdt)
    if npdt.kind == "b":
        return rng.random(shape) < 0.5
    low = 0 if npdt.kind == "u" else -8
    return rng.integers(low, 8, size=shape).astype(npdt)


def _summary(a: Any, spec: ArgSpec, direction: str | None, value: Any) -> dict[str, Any]:
    row: dict[str, Any] = {"name": a.name, "kind": a.kind, "dtype": a.dtype}
    if a.kind == "scalar":
        return {**row, "value": value}
    row.update(direction=direction.lower(), shape=list(spec.shape or ()))
    if direction != "In" and value.size:
        f = value.astype(np.float64)
        row.update(min=float(f.min()), max=float(f.max()), mean=float(f.mean()))
    return row


def _print_human(data: dict[str, Any]) -> None:
    click.echo(f"@{data['func']} ({data['core']}) on {data['platform']}: {data['artifact']}")
    width = max(len(r["name"]) for r in data["args"]) if data["args"] else 4
    for r in data["args"]:
        if r["kind"] == "scalar":
            click.echo(f"  {r['name']:<{width}}  scalar  {r['dtype']:<5} = {r['value']}")
            continue
        dims = "x".join(map(str, r["shape"]))
        stats = f"  min {r['min']:.6g}  max {r['max']:.6g}  mean {r['mean']:.6g}" if "min" in r else ""
        click.echo(f"  {r['name']:<{width}}  {r['direction']:<6}  {r['dtype']:<5} {dims:<12}{stats}")
    if data.get("saved"):
        click.echo(f"outputs saved to {data['saved']}")
    click.echo(f"{data['timings']['total_seconds']:.3f} s total, {data['timings']['device_seconds'] * 1e3:.3f} ms "
               "on the device")


def _save(directory: Path, rows: list[dict[str, Any]], values: list[Any]) -> Path:
    """Write the ``.npy`` files into a temp dir first, then rename: no truncated file is ever left.

    A new ``directory`` appears whole (one rename of the temp dir); into an existing one each file is
    renamed in from a temp subdir. A full or read-only disk is a StorageError naming the directory.
    """
    import os
    import shutil

    from pypto.toolchain import cachefs
    from pypto.toolchain.storage import storage_error, storage_problem

    fresh = not directory.exists()
    tmp = cachefs.temp_for(directory) if fresh else directory / f".save{cachefs.TEMP_MARK}{os.getpid()}"
    try:
        tmp.mkdir(parents=True)
        names = _write_npys(tmp, rows, values)
        if fresh:
            os.rename(tmp, directory)
        else:
            for name in names:
                os.replace(tmp / name, directory / name)
            tmp.rmdir()
    except OSError as exc:
        err = storage_error(exc, directory) or storage_problem(directory)  # before the cleanup frees space
        shutil.rmtree(tmp, ignore_errors=True)
        if err is None:
            raise
        raise err from exc
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return directory


def _write_npys(folder: Path, rows: list[dict[str, Any]], values: list[Any]) -> list[str]:
    from pypto.artifact.names import contained

    names = []
    for row, value in zip(rows, values, strict=True):
        if row["kind"] != "tensor":
            continue
        if row["direction"] != "out":
            names.append(f"{row['name']}.input.npy")
            np.save(contained(folder, names[-1]), value[0])
        if row["direction"] != "in":
            names.append(f"{row['name']}.npy")
            np.save(contained(folder, names[-1]), value[1])
    return names


@click.command("run-pto")
@click.argument("file", metavar="FILE.pto", type=click.Path(path_type=Path, dir_okay=False))
@click.option("--arg", "arg_texts", multiple=True, metavar="NAME=SPEC",
              help="A kernel argument: NAME=DIMS[:DTYPE][:in|out|inout] for a tensor (default inout), "
                   "NAME=VALUE[:DTYPE] for a scalar (repeatable; names as in func.func, without %).")
@click.option("--func", help="Function to run when the file defines several.")
@click.option("--core", type=click.Choice(["aiv", "aic"]), help="Core type (default: inferred from the tiles).")
@click.option("--no-insert-sync", is_flag=True, help="Do not pass --enable-insert-sync to ptoas.")
@click.option("--platform", help="a2a3sim | a5sim [env PYPTO_PLATFORM].")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True, help="Seed of the generated inputs.")
@click.option("--save", "save_dir", type=click.Path(path_type=Path, file_okay=False),
              help="Write outputs as NAME.npy (and inputs as NAME.input.npy) into this directory "
                   "(through a temp dir: no file is ever left half-written).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout.")
@click.pass_context
def run_pto_cmd(ctx: click.Context, file: Path, arg_texts: tuple[str, ...], func: str | None, core: str | None,
                no_insert_sync: bool, platform: str | None, seed: int, save_dir: Path | None, as_json: bool) -> None:
    """Run the kernel of a hand-written FILE.pto on a sim platform with seeded inputs.

    \b
    Examples:
      pypto run-pto add.pto --arg x=128x128:f32:in --arg y=128x128:f32:in --arg z=128x128:f32:out
      pypto run-pto scale.pto --arg x=64x32:in --arg y=64x32:out --arg alpha=2.5 --save out/ --json
    """
    from pypto.flows.pto_runner import execute, load_signature, normalize_directions, prepare_pto
    from pypto.runtime import ChipWorker, DeadlockError, KernelFaultError, RunConfig, build

    cli_state = state(ctx)
    cli_state.json = as_json
    specs = tuple(parse_arg(t) for t in arg_texts)
    settings = cli_state.settings(platform=platform)
    start = time.perf_counter()
    sig = load_signature(file, func, core)
    specs = match_specs(sig, specs)
    dirs = normalize_directions(sig, [s.direction or "inout" for s, a in zip(specs, sig.user_args, strict=True)
                                      if a.kind == "tensor"])
    it = iter(dirs)
    args_dirs = [next(it) if a.kind == "tensor" else None for a in sig.user_args]
    _check_bytes(sig, specs)
    rng = np.random.default_rng(seed)
    values = [make_value(a, s, d, rng) for a, s, d in zip(sig.user_args, specs, args_dirs, strict=True)]
    inputs = [v.copy() if isinstance(v, np.ndarray) else v for v in values]
    with build.use_cache_dir(Path(settings.cache_dir) / "sim"), \
            progress(f"run-pto {file} on {settings.platform}", enabled=not as_json):
        prepared = prepare_pto(file, platform=settings.platform, func=sig.func, directions=dirs, core=sig.core,
                               insert_sync=not no_insert_sync, runtime=settings.runtime, ptoas=_ptoas(settings))
        with ChipWorker(RunConfig(platform=settings.platform), runtime=settings.runtime) as worker:
            try:
                execute(prepared, values)
            except (KernelFaultError, DeadlockError) as exc:  # a bug of the hand-written kernel
                raise UserError(f"@{sig.func} failed on {settings.platform}: {exc}",
                                hint=f"the generated kernel and orchestration are in {prepared.artifact}") from exc
            device_s = worker.last_run.device_s
    rows = [_summary(a, s, d, v) for a, s, d, v in zip(sig.user_args, specs, args_dirs, values, strict=True)]
    data = {"ok": True, "command": "run-pto", "file": str(file), "func": sig.func, "core": sig.core,
            "platform": settings.platform, "runtime": settings.runtime, "artifact": str(prepared.artifact),
            "seed": seed, "args": rows,
            "timings": {"total_seconds": round(time.perf_counter() - start, 6), "device_seconds": device_s}}
    if save_dir is not None:
        data["saved"] = str(_save(save_dir, rows, list(zip(inputs, values, strict=True))))
    emit_json(data) if as_json else _print_human(data)


def _check_bytes(sig: Any, specs: tuple[ArgSpec, ...]) -> None:
    """Refuse (exit 3) tensors needing more host memory than ``run_max_bytes``, before allocating any."""
    from pypto.flows.host_memory import check_run_bytes
    from pypto.runtime import dtypes

    arrays = []
    for a, spec in zip(sig.user_args, specs, strict=True):
        if a.kind == "tensor" and spec.shape is not None:
            numpy_type = dtypes.from_meta(a.dtype).numpy
            arrays.append((a.name, spec.shape, np.dtype(numpy_type).itemsize if numpy_type else 2))
    check_run_bytes(f"@{sig.func}", arrays)


def _ptoas(settings: Any) -> Path:
    from pypto.toolchain.ptoas import require_ptoas

    return require_ptoas(settings.ptoas_root, Path(settings.cache_dir))
