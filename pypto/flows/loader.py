"""Compile or run the kernels of a user's ``.py`` file (what ``pypto compile|run FILE[::NAME]`` does).

A file may hold ``@pl.program`` classes (``ir.Program`` objects) and ``@pl.jit`` functions. A jit
function needs sample shapes: ``--shape a=128x128:f32`` or a module dict ``SHAPES = {"add": {"a":
"128x128:f32", ...}}``. ``pypto run`` compares with ``golden_<name>(*inputs)`` or ``golden(*inputs)``
when the module defines one (it returns the expected output arrays, in Out-parameter order).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from pypto.errors import PyptoError, UserError
from pypto.ir.dtypes import DataType, from_meta, from_name
from pypto.ir.function import Program


def load_module(path: Path) -> Any:
    """Execute the user's file as a fresh module (its directory is importable while it runs)."""
    path = path.resolve()
    if path.is_dir():
        raise UserError(f"{path}: is a directory, not a Python file",
                        hint="pass a .py file holding @pl.program / @pl.jit kernels")
    name = "_pypto_user_" + hashlib.sha1(str(path).encode()).hexdigest()[:10]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise UserError(f"{path}: not a Python file", hint="pass a .py file holding @pl.program / @pl.jit kernels")
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(path.parent))
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - classified by where it was raised
        if not _raised_by_user_code(exc):
            raise
        sys.modules.pop(name, None)
        raise import_failure(path, exc) from exc
    finally:
        sys.path.remove(str(path.parent))
    return module


def _raised_by_user_code(exc: BaseException) -> bool:
    """False for pypto's own errors and for exceptions raised inside the pypto package (bugs stay bugs)."""
    import traceback


    if isinstance(exc, PyptoError):
        return False
    if isinstance(exc, SyntaxError):
        return True
    frames = traceback.extract_tb(exc.__traceback__)
    package = Path(__file__).resolve().parent
    return not frames or package not in Path(frames[-1].filename).resolve().parents


def user_code_error(exc: BaseException, path: Path, doing: str) -> UserError:
    """A located UserError for an exception raised by the user's file (syntax, import, any other)."""
    import traceback

    from pypto.span import Span

    if isinstance(exc, SyntaxError):
        span = Span(exc.filename or str(path), exc.lineno or 1, exc.offset or 1,
                    exc.end_lineno or 0, exc.end_offset or 0)
        return UserError(f"{type(exc).__name__}: {exc.msg}", span, hint="fix the Python syntax of this line")
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if Path(f.filename) == path]
    span = Span(str(path), frames[-1].lineno or 1, (frames[-1].colno or 0) + 1) if frames else None
    if isinstance(exc, ImportError):
        missing = getattr(exc, "name", None)
        return UserError(f"{doing} {path.name} failed: cannot import {missing or 'a module'}: {exc}", span,
                         hint="install the missing module, or fix the import (the file's own directory is on "
                              "sys.path while it loads)")
    return UserError(f"{doing} {path.name} failed: {type(exc).__name__}: {exc}", span,
                     hint="the error is in your file's own Python code")


def import_failure(path: Path, exc: BaseException) -> UserError:
    """A user error for a file that failed to import: where (file:line:col), what, and how to fix it.

    Missing modules get a hint saying where to install them; inside a toolchain image, which image
    this is and which flavor has the module (:func:`pypto.toolchain.image_info.missing_module_hint`).
    """
    import traceback

    from pypto.span import Span
    from pypto.toolchain.image_info import missing_module_hint

    if isinstance(exc, SyntaxError):
        file, line = exc.filename or str(path), exc.lineno or 1
        span = Span(file, line, max(exc.offset or 1, 1), line, max(exc.end_offset or 0, 0) if exc.end_lineno == line else 0)
        return UserError(f"invalid Python syntax in {Path(file).name}: {type(exc).__name__}: {exc.msg}", span,
                         hint="fix the syntax error; the file is executed as Python before pypto reads its kernels")
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if not f.filename.startswith("<frozen ")]
    mine = [f for f in frames if f.filename == str(path)] or frames[-1:]
    at = mine[-1] if mine else None
    span = Span(at.filename, at.lineno or 1, (at.colno or 0) + 1, at.lineno or 1, (at.end_colno or 0) + 1) \
        if at is not None and at.end_lineno == at.lineno else (Span(at.filename, at.lineno or 1, 1) if at else None)
    if isinstance(exc, ModuleNotFoundError) and exc.name:
        return UserError(f"importing {path.name} failed: no module named '{exc.name}'", span,
                         hint=missing_module_hint(exc.name))
    origin = frames[-1] if frames else None
    where = f" (raised at {origin.filename}:{origin.lineno})" if origin is not None and origin is not at else ""
    return UserError(f"importing {path.name} failed: {type(exc).__name__}: {exc}{where}", span,
                     hint="the file runs as Python before pypto reads its kernels; fix the error it raises at import")


def kernel_targets(module: Any) -> dict[str, Any]:
    """Public ``ir.Program`` objects and entry ``@pl.jit`` functions of a module, by name."""
    from pypto.jit import JITFunction

    out: dict[str, Any] = {}
    for key, obj in vars(module).items():
        if key.startswith("_"):
            continue
        if isinstance(obj, Program) or (isinstance(obj, JITFunction) and obj.kind in ("orchestration", "graph")):
            out[key] = obj
    return out


def select_target(path: Path, module: Any, name: str | None) -> tuple[str, Any]:
    """The kernel NAME picks, or the only one; a UserError listing the choices otherwise."""
    targets = kernel_targets(module)
    if name is not None:
        if name not in targets:
            raise UserError(f"{path}: no @pl.program or @pl.jit kernel named '{name}'",
                            hint=f"available: {', '.join(sorted(targets)) or 'none'}")
        return name, targets[name]
    if len(targets) != 1:
        what = ", ".join(sorted(targets)) if targets else "none found"
        raise UserError(f"{path}: pick one kernel with FILE::NAME ({what})")
    return next(iter(targets.items()))


def parse_dims(text: str) -> tuple[tuple[int, ...], DataType]:
    """``"128x128:f32"`` -> ((128, 128), FP32); the dtype defaults to f32."""
    dims, _, dtype = text.partition(":")
    try:
        shape = tuple(int(d) for d in dims.split("x"))
        dt = from_name(dtype or "f32")
    except ValueError as exc:
        raise UserError(f"bad shape spec {text!r}: {exc}", hint="write ROWSxCOLS[:DTYPE], e.g. 128x128:f32") from None
    if any(d <= 0 for d in shape):
        raise UserError(f"bad shape spec {text!r}: every extent must be positive")
    from pypto.flows.host_memory import too_large

    problem = too_large(shape, max(1, dt.bits // 8))
    if problem:
        raise UserError(f"bad shape spec {text!r}: {problem}")
    return shape, dt


def jit_shapes(module: Any, name: str, specs: tuple[Any, ...]) -> dict[str, tuple[tuple[int, ...], DataType]]:
    """Sample shapes of a jit kernel from ``--shape`` specs, else from the module's SHAPES dict."""
    if specs:
        return {s.name: (tuple(s.shape), from_meta(s.dtype)) for s in specs}
    table = getattr(module, "SHAPES", {}).get(name)
    if not table:
        raise UserError(f"@pl.jit kernel '{name}' needs sample shapes",
                        hint="pass --shape NAME=128x128:f32 for each tensor parameter, "
                             f"or define SHAPES = {{'{name}': {{'a': '128x128:f32', ...}}}} in the file")
    return {k: parse_dims(v) for k, v in table.items()}


def sample_args(module: Any, name: str, fn: Any) -> tuple[Any, ...]:
    """Zero-filled sample arguments of jit kernel ``name``: its ``SHAPES`` table, else ``sample_args()``.

    A kernel taking scalars or other non-tensor arguments provides ``sample_args() -> {name: (...)}``.
    """
    import inspect

    table = getattr(module, "SHAPES", {}).get(name)
    if table is not None:
        params = list(inspect.signature(fn.func).parameters)
        missing = [p for p in params if p not in table]
        if missing:
            raise UserError(f"SHAPES['{name}'] has no entry for {missing} (module {module.__file__})")
        return tuple(np.zeros(shape, dtype.numpy()) for shape, dtype in (parse_dims(table[p]) for p in params))
    provider = getattr(module, "sample_args", None)
    if provider is not None and name in provider():
        return tuple(provider()[name])
    raise UserError(f"@pl.jit kernel '{name}' in {module.__file__} has no sample inputs",
                    hint=f"add SHAPES = {{'{name}': {{'a': '128x128:f32', ...}}}} "
                         f"(or sample_args() -> {{'{name}': (...)}}) to the file")


def _numpy_dtype(pname: str, dtype: DataType) -> np.dtype:
    try:
        return np.dtype(dtype.numpy())
    except TypeError:
        raise UserError(f"parameter '{pname}': dtype {dtype.value} has no numpy equivalent, so the CLI "
                        "cannot make sample inputs for it",
                        hint="use f16/f32 (or int types) in --shape / SHAPES, or call the kernel from "
                             "Python with torch bf16 tensors") from None


def shape_inputs(params: list[tuple[str, str, tuple[int, ...], DataType]]) -> list[np.ndarray]:
    """Stand-ins carrying each parameter's shape and dtype, allocating nothing (a compile needs no data)."""
    from pypto.flows.host_memory import shape_only

    return [shape_only(shape, _numpy_dtype(pname, dtype)) for pname, _, shape, dtype in params]


def make_inputs(params: list[tuple[str, str, tuple[int, ...], DataType]], seed: int,
                what: str = "this run") -> list[np.ndarray]:
    """Seeded random inputs for In/InOut params, zeros for Out params (refused past ``run_max_bytes``)."""
    from pypto.flows.host_memory import check_run_bytes

    dtypes = [_numpy_dtype(pname, dtype) for pname, _, _, dtype in params]
    check_run_bytes(what, [(p[0], p[2], dt.itemsize) for p, dt in zip(params, dtypes, strict=True)])
    rng = np.random.default_rng(seed)
    arrays = []
    for (_, direction, shape, dtype), np_dtype in zip(params, dtypes, strict=True):
        if direction == "Out":
            arrays.append(np.zeros(shape, np_dtype))
        elif dtype.is_float:
            arrays.append(rng.standard_normal(shape).astype(np_dtype))
        else:
            arrays.append(rng.integers(-8, 8, shape).astype(np_dtype))
    return arrays


@dataclass
class FileResult:
    """What ``compile_file`` / ``run_file`` report to the CLI."""

    compiled: Any
    timings: dict[str, float] = field(default_factory=dict)
    max_error: float | None = None
    passed: bool | None = None
    dfx_dir: Path | None = None
    verdict: str | None = None
    """The run's verdict in words (``pypto run``): passed, what differs, or why nothing was checked."""
    checked: bool | None = None
    """``pypto run``: did a comparison with the golden happen (None: not a run)."""
    check_requested: bool = False
    """The file defines a golden, so the user asked for a check: a run that checked nothing fails."""

    @property
    def ok(self) -> bool:
        """Passed, or ran with no golden to compare with; False for a mismatch or a check not done."""
        return self.passed is not False and not (self.check_requested and not self.checked)

    @property
    def output_dir(self) -> Path:
        return self.compiled.output_dir

    def to_json(self) -> dict[str, Any]:
        program = getattr(self.compiled, "program", None)
        out: dict[str, Any] = {"artifact": str(self.output_dir),
                               "program": program.name if program is not None else self.output_dir.name}
        if self.passed is not None:
            out.update(max_error=self.max_error, passed=self.passed)
        if self.verdict is not None:
            out.update(checked=bool(self.checked), verdict=self.verdict)
        if self.dfx_dir is not None:
            out["dfx_outputs"] = str(self.dfx_dir)
        return out


def _jit_params(fn: Any, shapes: dict[str, tuple[tuple[int, ...], DataType]]) -> list[tuple[str, str, tuple[int, ...], DataType]]:
    import inspect

    params = []
    for pname, p in inspect.signature(fn.func).parameters.items():
        if pname not in shapes:
            raise UserError(f"no sample shape for parameter '{pname}' of @pl.jit kernel '{fn.__name__}'",
                            hint=f"add --shape {pname}=128x128:f32")
        ann = "" if p.annotation is inspect.Parameter.empty else str(p.annotation)
        direction = "Out" if "Out[" in ann and "InOut[" not in ann else "In"
        params.append((pname, direction, *shapes[pname]))
    return params


def _run_config(settings: Any, request: Any) -> Any:
    from pypto.runtime import RunConfig

    return RunConfig(platform=settings.platform, rtol=request.rtol, atol=request.atol,
                     save_kernels_dir=request.output_dir, dump_passes=request.dump_passes,
                     compile_profiling=bool(settings.compile_profiling),
                     **getattr(request, "extra", {}).get("run_config", {}))


def compile_target(path: Path, name: str | None, settings: Any, request: Any,
                   materialize: bool = True) -> tuple[Any, Any, list]:
    """Compile the selected kernel; returns (compiled, module, sample inputs).

    ``materialize=False`` (a compile only) specializes from shape stand-ins and returns no inputs:
    nothing is allocated, whatever the shapes.
    """
    from pypto.driver import CompileRequest, compile_with_settings

    module = load_module(path)
    key, target = select_target(path, module, name)
    if isinstance(target, Program):
        compiled = compile_with_settings(target, settings, CompileRequest(
            output_dir=request.output_dir, skip_ptoas=request.skip_ptoas, dump_passes=request.dump_passes))
        params = [(p.name, p.direction, p.shape, p.dtype) for p in compiled.params]
        if not materialize:
            return compiled, module, []
        if any(p[2] is None or p[3] is None for p in params):
            raise UserError(f"'{key}' has dynamic shapes: give concrete inputs through the Python API")
        return compiled, module, make_inputs(params, request.seed, f"running '{key}'")
    params = _jit_params(target, jit_shapes(module, key, tuple(request.shapes)))
    samples = shape_inputs(params)
    compiled = target.compile(*samples, config=_run_config(settings, request))
    _check_samples(key, compiled, samples)
    return compiled, module, make_inputs(params, request.seed, f"running '{key}'") if materialize else []


def _check_samples(key: str, compiled: Any, inputs: list[np.ndarray]) -> None:
    """The sample specs must agree with the dtypes the kernel's annotations fixed (else the run refuses them)."""
    for p, a in zip(getattr(compiled, "params", ()), inputs, strict=False):
        shape = getattr(p, "shape", None)
        if shape is not None and (len(shape) != a.ndim or any(
                isinstance(d, int) and d != n for d, n in zip(shape, a.shape, strict=False))):
            raise UserError(f"sample shape of '{p.name}' for kernel '{key}' is {list(a.shape)}, but the kernel "
                            f"declares {list(shape)}", hint="make the --shape / SHAPES entry match the annotation")
        dt = getattr(p, "dtype", None)
        with contextlib.suppress(TypeError):
            if dt is not None and a.dtype != dt.numpy():
                raise UserError(f"sample shape of '{p.name}' for kernel '{key}' has dtype {a.dtype}, but the "
                                f"kernel declares {dt.value}",
                                hint="make the --shape / SHAPES dtype match the parameter's annotation")


def run_target(path: Path, name: str | None, settings: Any, request: Any) -> FileResult:
    """Compile, run on the sim platform with seeded inputs, compare with the module's golden."""
    t0 = time.perf_counter()
    compiled, module, inputs = compile_target(path, name, settings, request)
    t1 = time.perf_counter()
    key = select_target(path, module, name)[0]
    golden_name, golden_fn = f"golden_{key}", getattr(module, f"golden_{key}", None)
    if golden_fn is None:
        golden_name, golden_fn = "golden", getattr(module, "golden", None)
    try:
        expected = golden_fn(*[a.copy() for a in inputs]) if golden_fn else None
    except Exception as exc:  # noqa: BLE001 - the user's golden function failed
        if not _raised_by_user_code(exc):
            raise
        raise user_code_error(exc, path.resolve(), f"calling golden of '{key}' in") from exc
    config = _run_config(settings, request)
    result = compiled(*inputs, config=config)
    t2 = time.perf_counter()
    out = FileResult(compiled, {"compile_seconds": round(t1 - t0, 6), "run_seconds": round(t2 - t1, 6)},
                     check_requested=golden_fn is not None)
    if config.dfx_enabled:
        out.dfx_dir = compiled.output_dir / "dfx_outputs"
    if golden_fn is None:
        out.checked, out.verdict = False, (f"not checked: {path.name} defines no golden_{key} (or golden) "
                                           "to compare the outputs with")
    elif expected is None:
        out.checked, out.verdict = False, (f"not checked: {golden_name}() returned None, so no output was "
                                           "compared (return the expected output array(s), in Out-parameter "
                                           "order)")
    else:
        _judge(out, compiled, inputs, result, expected, request)
    return out


def _judge(out: FileResult, compiled: Any, inputs: list[np.ndarray], result: Any, expected: Any,
           request: Any) -> None:
    """Compare the outputs with the golden's and record the verdict (max error over compared elements)."""
    from pypto.flows.harness import check_outputs

    outs = result if isinstance(result, tuple) else (result,) if result is not None else tuple(
        a for a, p in zip(inputs, compiled.params, strict=True) if p.direction in ("Out", "InOut"))
    exp = expected if isinstance(expected, tuple | list) else (expected,)
    comparison = check_outputs(outs, exp, request.rtol, request.atol)
    problem = comparison.problem
    out.checked = comparison.compared > 0
    out.max_error, out.passed = comparison.max_error, problem is None
    if problem is None:
        out.verdict = (f"passed: {comparison.compared} of {comparison.total} elements within "
                       f"rtol={request.rtol}, atol={request.atol}")
    elif comparison.mismatch is None:
        out.verdict = f"not checked: {problem}"
    else:
        out.verdict = f"outputs do not match the golden: {problem}"


def compile_file(path: Path, name: str | None, settings: Any, request: Any) -> Any:
    """``pypto compile FILE[::NAME]``: compile one kernel of a user file."""
    from pypto.flows.exit_guard import no_abrupt_exit

    t0 = time.perf_counter()
    with no_abrupt_exit():  # os._exit() in the file is an error, not a silent exit 0
        compiled, _, _ = compile_target(Path(path), name, settings, request, materialize=bool(request.run))
    return FileResult(compiled, {"compile_seconds": round(time.perf_counter() - t0, 6)})


def run_file(path: Path, name: str | None, settings: Any, request: Any) -> Any:
    """``pypto run FILE[::NAME]``: compile, run with seeded inputs, compare with the golden."""
    from pypto.flows.exit_guard import no_abrupt_exit

    with no_abrupt_exit():
        return run_target(Path(path), name, settings, request)
