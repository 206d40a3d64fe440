"""``ir.compile``: begin an artifact directory, run the passes, generate code, assemble, commit.

Floor: above ``passes``, ``codegen``, ``backend`` and ``artifact``; never imports the runtime (the
returned handle, :mod:`pypto.compiled`, runs it) nor the flows above. ``compiled_meta.json`` is the
completeness marker: ``artifact.begin`` deletes it (and the other build-kind markers) first and
``artifact.commit`` writes it last, with an atomic rename. A failed or interrupted compile therefore
never leaves a directory that looks complete (``CompiledProgram.from_dir`` refuses it), while the files
it did produce stay for inspection.
"""

from __future__ import annotations

import inspect
import os
import time
from contextlib import nullcontext
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from pypto.artifact import PASSES_DUMP_DIR, REPORT_DIR, ArtifactMeta, begin, commit
from pypto.artifact.names import check_program, contained
from pypto.compiled import CompiledProgram
from pypto.errors import PartialCodegenError, ToolchainError, UnsupportedFeatureError, UserError
from pypto.ir.function import Program
from pypto.ir.options import (
    BackendType,
    DiagnosticCheck,
    DiagnosticPhase,
    MemoryPlanner,
    OptimizationStrategy,
    PassDumpLevel,
    RuntimeKind,
    VerificationLevel,
    backend_for_platform,
    default_sim_platform,
)
from pypto.passes.context import DEFAULT_DISABLED
from pypto.toolchain.prefix_map import PrefixMap, parse_prefix_map


@dataclass
class CompileOptions:
    """Every ``ir.compile`` knob after defaults and settings were applied."""

    output_dir: Path
    dump_level: PassDumpLevel
    backend_type: BackendType
    platform: str
    skip_ptoas: bool
    verification_level: VerificationLevel
    diagnostic_phase: DiagnosticPhase
    disabled_diagnostics: set[DiagnosticCheck]
    memory_planner: MemoryPlanner
    l0c_double_buffer: bool
    profiling: bool
    analyze_auto_scopes_for_deps: bool
    emit_source_loc: bool
    dump_ptoas_passes: bool
    runtime: RuntimeKind
    settings: Any = None
    stages: list[dict[str, Any]] = field(default_factory=list)
    explicit_output: bool = True  # False: a default dir name, claimed (created) atomically before writing


def _settings() -> Any:
    from pypto.toolchain.logging import ensure_configured
    from pypto.toolchain.settings import resolve_settings

    settings = resolve_settings()
    ensure_configured(settings)  # PYPTO_LOG_LEVEL / PYPTO_LOG_FORMAT apply to library use too
    return settings


def _conflict(name: str, value: Any, op: str = "compile") -> None:
    from pypto.passes.context import PassContext

    if value is not None and PassContext.current() is not None:
        raise RuntimeError(
            f"{op}() was called with {name} while a PassContext is already active. "
            f"Set the {name} on the existing PassContext instead.")


def _default_output_dir(program: Program, settings: Any) -> Path:
    """``<prog_build_dir>/<program>_<timestamp>``: a candidate name, claimed by :func:`_claim_output_dir`."""
    base = Path(getattr(settings, "prog_build_dir", None) or "build_output")
    return base / f"{program.name}_{datetime.now().strftime('%Y%m%d_%H%M%S')}"


def _claim_output_dir(out: Path) -> Path:
    """Create a fresh default output dir; ``mkdir`` is the claim, so concurrent compiles never share one."""
    _make_dirs(out.parent)
    for n in range(10000):
        cand = out if n == 0 else out.with_name(f"{out.name}_{n}")
        try:
            cand.mkdir()
            return cand
        except FileExistsError:
            continue
        except OSError as exc:
            raise _unusable_output(cand, exc) from exc
    raise UserError(f"no free output directory name next to {out}", hint="clean up old build output")


def _make_dirs(path: Path) -> None:
    if os.path.isdir(path):  # the usual case: one stat instead of a failing mkdir and a stat
        return
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise _unusable_output(path, exc) from exc


def _unusable_output(path: Path, exc: OSError) -> UserError:
    return UserError(f"cannot create the output directory {path}: {exc.strerror or exc}",
                     hint="pass -o/--output-dir (output_dir=) a writable directory, or set PYPTO_PROG_BUILD_DIR")


def resolve_options(program: Program, kw: dict[str, Any]) -> CompileOptions:
    """Apply defaults, the PassContext conflict rule and settings to the raw keyword arguments.

    Every name that becomes a file or a symbol is checked first (:func:`pypto.artifact.names.check_program`):
    nothing is created for a program whose name could leave the output directory.
    """
    check_program(program)
    for name in ("verification_level", "diagnostic_phase", "memory_planner", "runtime"):
        _conflict(name, kw[name])
    if kw["strategy"] is not OptimizationStrategy.Default:
        raise ValueError(f"Unsupported optimization strategy: {kw['strategy']!r}")
    settings = kw.get("settings") or _settings()
    backend = kw["backend_type"]
    platform = kw["platform"]
    if platform is not None:
        backend = backend_for_platform(platform)
    ctx = _active_context()
    vlevel = kw["verification_level"] or (ctx.verification_level if ctx else None) or VerificationLevel(
        getattr(settings, "verify_level", "basic") or "basic")
    dphase = kw["diagnostic_phase"] or (ctx.diagnostic_phase if ctx else None) or DiagnosticPhase(
        getattr(settings, "warning_level", "pre_pipeline") or "pre_pipeline")
    disabled = kw["disabled_diagnostics"]
    runtime = kw["runtime"] or (ctx.runtime if ctx else None) or getattr(settings, "runtime", None)
    emit_loc = kw["emit_source_loc"]
    _check_graph_runtime(program, runtime, "argument" if kw["runtime"] is not None else
                         settings.source_of("runtime") if hasattr(settings, "source_of") else "default")
    return CompileOptions(
        output_dir=Path(kw["output_dir"]) if kw["output_dir"] is not None else _default_output_dir(program, settings),
        dump_level=PassDumpLevel.coerce(kw["dump_passes"]),
        backend_type=backend,
        platform=platform or default_sim_platform(backend),
        skip_ptoas=bool(kw["skip_ptoas"]),
        verification_level=vlevel,
        diagnostic_phase=dphase,
        disabled_diagnostics=set(disabled if disabled is not None else DEFAULT_DISABLED),
        memory_planner=kw["memory_planner"] or (ctx.memory_planner if ctx else None) or MemoryPlanner.PYPTO,
        l0c_double_buffer=bool(kw["enable_pypto_l0c_double_buffer"]),
        profiling=bool(kw["profiling"]) or bool(getattr(settings, "compile_profiling", False))
        or _profiler_active(),
        analyze_auto_scopes_for_deps=bool(kw["analyze_auto_scopes_for_deps"]),
        emit_source_loc=bool(getattr(settings, "emit_pto_loc", True)) if emit_loc is None else bool(emit_loc),
        dump_ptoas_passes=bool(kw["dump_ptoas_passes"]),
        runtime=RuntimeKind.from_name(runtime or RuntimeKind.TENSORMAP_AND_RINGBUFFER),
        settings=settings,
        explicit_output=kw["output_dir"] is not None,
    )


def _check_graph_runtime(program: Program, runtime: Any, source: str) -> None:
    """A Graph function needs the host_build_graph runtime (the host records and replays it)."""
    from pypto.ir.enums import FunctionType
    from pypto.toolchain.platforms import check_graph_runtime

    name = RuntimeKind.from_name(runtime or RuntimeKind.TENSORMAP_AND_RINGBUFFER).value
    for func in program.functions:
        if func.func_type is FunctionType.Graph:
            check_graph_runtime(func.name, name, source)


def _prefix_map(opts: CompileOptions) -> PrefixMap:
    """The ``file_prefix_map`` setting: source paths recorded in the artifact go through it."""
    return parse_prefix_map(getattr(opts.settings, "file_prefix_map", None))


def _active_context() -> Any:
    from pypto.passes.context import PassContext

    return PassContext.current()


def compile(  # noqa: A001 - the upstream API name
    program: Program,
    *,
    output_dir: str | os.PathLike[str] | None = None,
    strategy: OptimizationStrategy = OptimizationStrategy.Default,
    dump_passes: bool | PassDumpLevel = True,
    backend_type: BackendType = BackendType.Ascend910B,
    skip_ptoas: bool = False,
    verification_level: VerificationLevel | None = None,
    diagnostic_phase: DiagnosticPhase | None = None,
    disabled_diagnostics: set[DiagnosticCheck] | None = None,
    memory_planner: MemoryPlanner | None = None,
    enable_pypto_l0c_double_buffer: bool | None = None,
    profiling: bool = False,
    platform: str | None = None,
    distributed_config: Any = None,
    analyze_auto_scopes_for_deps: bool = False,
    emit_source_loc: bool | None = None,
    dump_ptoas_passes: bool = False,
    runtime: RuntimeKind | str | None = None,
) -> CompiledProgram:
    """Compile ``program`` into an artifact directory and return a CompiledProgram handle on it.

    See the README ("ir.compile") for every parameter; all but ``program`` are keyword-only.
    """
    if not isinstance(program, Program):
        raise TypeError(f"ir.compile() expects an ir.Program (a @pl.program class), got {type(program).__name__}")
    if distributed_config is not None:
        raise UnsupportedFeatureError(
            "distributed_config: pypto.driver.compile compiles one chip-level program",
            hint="compile distributed (HOST-level) programs with pypto.ir.compile(..., distributed_config=...)")
    opts = resolve_options(program, dict(locals()))
    return _compile(program, opts)


def lower(program: Program, **kw: Any) -> Program:
    """Run the pass pipeline only and return the post-pass Program; writes nothing."""
    from pypto.passes import run_pipeline
    from pypto.passes.context import PassContext

    planner = kw.pop("memory_planner", None)
    _conflict("memory_planner", planner, op="lower")
    outer = PassContext.current()
    ctx = outer or PassContext(memory_planner=planner or MemoryPlanner.PYPTO, **kw)
    with nullcontext() if outer else ctx:
        return run_pipeline(program, ctx=ctx, dump_level=PassDumpLevel.NONE, dump_dir=None,
                            report_dir=None).program


def _compile(program: Program, opts: CompileOptions) -> CompiledProgram:
    """Compile into the output dir: a fresh default dir is claimed; an explicit one is locked while written."""
    from pypto.toolchain.storage import storage_errors

    with storage_errors(opts.output_dir):  # a full or read-only disk is the user's to fix, not a pypto bug
        return _compile_locked(program, opts)


def _compile_locked(program: Program, opts: CompileOptions) -> CompiledProgram:
    from pypto.toolchain.cachefs import dir_lock
    from pypto.toolchain.logging import bound_context

    if opts.explicit_output:
        _make_dirs(opts.output_dir.parent)
        lock = dir_lock(opts.output_dir)
    else:
        opts.output_dir = _claim_output_dir(opts.output_dir)
        lock = nullcontext()
    with lock, bound_context(program=program.name, platform=opts.platform, output_dir=opts.output_dir,
                             toolchain=getattr(opts.settings, "toolchain", None)):
        return _compile_in_context(program, opts)


def _compile_in_context(program: Program, opts: CompileOptions) -> CompiledProgram:
    from pypto.passes import run_pipeline
    from pypto.passes.context import PassContext
    from pypto.toolchain.logging import stage

    _make_dirs(opts.output_dir)
    out = begin(opts.output_dir)
    outer = PassContext.current()
    ctx = outer or PassContext(
        verification_level=opts.verification_level, diagnostic_phase=opts.diagnostic_phase,
        disabled_diagnostics=opts.disabled_diagnostics, memory_planner=opts.memory_planner,
        runtime=opts.runtime, backend_type=opts.backend_type,
        enable_l0c_double_buffer=opts.l0c_double_buffer)
    with nullcontext() if outer else ctx, stage("passes"):
        t0 = time.perf_counter()
        result = run_pipeline(program, ctx=ctx, dump_level=opts.dump_level,
                              dump_dir=out / PASSES_DUMP_DIR if opts.dump_level else None,
                              report_dir=out / REPORT_DIR, file_prefix_map=_prefix_map(opts),
                              analyze_auto_scopes_for_deps=opts.analyze_auto_scopes_for_deps)
        opts.stages.append({"name": "passes", "seconds": time.perf_counter() - t0,
                            "children": [{"name": n, "seconds": s, "children": []} for n, s in result.pass_times]})
    compiled = _codegen_and_commit(program, result.program, opts)
    if opts.profiling:
        from pypto.compile_profiling import record_compile

        _write_profile(out, opts.stages)
        record_compile(opts.stages, f"compile {program.name}")
    return compiled


def _codegen_and_commit(program: Program, lowered: Program, opts: CompileOptions) -> CompiledProgram:
    from pypto.backend import assemble
    from pypto.codegen import generate
    from pypto.toolchain.logging import stage

    out = opts.output_dir
    meta = ArtifactMeta.from_program(program, platform=opts.platform, backend_type=opts.backend_type.value,
                                     runtime=opts.runtime.value, toolchain=getattr(opts.settings, "toolchain", None))
    t0 = time.perf_counter()
    with stage("codegen"):
        try:
            artifact = generate(lowered, backend_type=opts.backend_type, platform=opts.platform,
                                runtime=opts.runtime, emit_source_loc=opts.emit_source_loc,
                                file_prefix_map=_prefix_map(opts))
        except PartialCodegenError as exc:  # keep what was generated, for reading (no completeness marker)
            for rel, text in exc.files.items():
                path = contained(out, rel)
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text)
            raise
    t1 = time.perf_counter()
    try:
        with stage("ptoas" if not opts.skip_ptoas else "assemble"):
            assemble(artifact, out, ptoas=None if opts.skip_ptoas else _ptoas(opts),
                     skip_ptoas=opts.skip_ptoas, dump_ptoas_passes=opts.dump_ptoas_passes,
                     max_workers=getattr(opts.settings, "codegen_max_workers", None),
                     timeout=getattr(opts.settings, "ptoas_timeout_s", None) or _ptoas_timeout())
    except ToolchainError as exc:
        raise _relocated(exc, out) from None
    opts.stages.append({"name": "codegen", "seconds": t1 - t0, "children": []})
    opts.stages.append({"name": "ptoas", "seconds": time.perf_counter() - t1, "children": []})
    if not opts.skip_ptoas:
        from pypto.artifact.run_script import write_run_script
        from pypto.toolchain.platforms import sim_twin

        write_run_script(out, meta.params, platform=sim_twin(opts.platform))
    commit(out, meta)
    return CompiledProgram.from_meta(program, out, meta, backend_type=opts.backend_type)


def _ptoas_timeout() -> float:
    from pypto.toolchain.settings import tool_timeout

    return tool_timeout("ptoas_timeout_s")


def _relocated(exc: ToolchainError, out: Path) -> ToolchainError:
    """The same error with ``<artifact dir>`` in its repro command replaced by the real directory."""
    repro = exc.repro.replace("<artifact dir>", str(out.resolve()))
    message = exc.message
    if isinstance(exc, PartialCodegenError):
        return PartialCodegenError(message, files=exc.files, stderr=exc.stderr, repro=repro, hint=exc.hint)
    return ToolchainError(message, stderr=exc.stderr, repro=repro, hint=exc.hint)


def _ptoas(opts: CompileOptions) -> Path:
    from pypto.toolchain.ptoas import require_ptoas

    settings = opts.settings
    cache = getattr(settings, "cache_dir", None)
    return require_ptoas(getattr(settings, "ptoas_root", None), Path(cache) if cache else None)


def _profiler_active() -> bool:
    """True inside ``with pypto.compile_profiling.CompileProfiler()`` (it turns profiling on)."""
    from pypto.compile_profiling import get_active_profiler

    return get_active_profiler() is not None


def _write_profile(out: Path, stages: list[dict[str, Any]]) -> None:
    from pypto.passes.profiling import format_profile_json, format_profile_txt

    (out / REPORT_DIR / "pipeline_profile.txt").write_text(format_profile_txt(stages))
    (out / REPORT_DIR / "pipeline_profile.json").write_text(format_profile_json(stages))


def compile_with_settings(program: Program, settings: Any, **kw: Any) -> CompiledProgram:
    """``ir.compile`` with an already-resolved Settings object (the CLI path)."""
    raw: dict[str, Any] = {name: p.default for name, p in inspect.signature(compile).parameters.items()
                           if name != "program"}
    raw.update(platform=settings.platform, runtime=settings.runtime, settings=settings)
    raw.update(kw)
    if raw["verification_level"] is None and settings.source_of("verify_level") != "default":
        raw["verification_level"] = VerificationLevel(settings.verify_level)
    return _compile(program, resolve_options(program, raw))
