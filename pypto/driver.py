"""``ir.compile``: begin an artifact directory, run the passes, generate code, assemble, commit.

Floor: above ``passes``, ``codegen``, ``backend`` and ``artifact``; never imports the runtime (the
returned handle, :mod:`pypto.compiled`, runs it) nor the flows above. ``compiled_meta.json`` is the
completeness marker: ``artifact.begin`` deletes it (and the other build-kind markers) first and
``artifact.commit`` writes it last, with an atomic rename. A failed or interrupted compile therefore
never leaves a directory that looks complete (``CompiledProgram.from_dir`` refuses it), while the files
it did produce stay for inspection.
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections import Counter
from collections.abc import Iterable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Unpack

from pypto.artifact import PASSES_DUMP_DIR, REPORT_DIR, ArtifactMeta, begin, commit
from pypto.artifact.names import check_program, contained
from pypto.codegen.ub_budget import UbOverflow, ub_overflows
from pypto.compiled import CompiledProgram
from pypto.errors import PartialCodegenError, ToolchainError, UnsupportedFeatureError, UserError
from pypto.ir.function import Function, Program
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
from pypto.passes._ub_cut import RegionKey, region_key, ub_cut_plan
from pypto.passes.context import DEFAULT_DISABLED
from pypto.toolchain.prefix_map import PrefixMap, parse_prefix_map

if TYPE_CHECKING:
    from pypto.backend.ptoas_cache import PtoasCache
    from pypto.ir.distributed_compiled_program import DistributedConfig
    from pypto.passes.context import PassContext, PassOptions
    from pypto.passes.profiling import Stage
    from pypto.toolchain.settings_model import Settings


@dataclass(frozen=True)
class CompileRequest:
    """The keyword arguments of :func:`compile` as given (None: not given; settings fill it in)."""

    output_dir: str | os.PathLike[str] | None = None
    strategy: OptimizationStrategy = OptimizationStrategy.Default
    dump_passes: bool | PassDumpLevel = True
    backend_type: BackendType = BackendType.Ascend910B
    skip_ptoas: bool = False
    verification_level: VerificationLevel | None = None
    diagnostic_phase: DiagnosticPhase | None = None
    disabled_diagnostics: Iterable[DiagnosticCheck] | None = None
    memory_planner: MemoryPlanner | None = None
    enable_pypto_l0c_double_buffer: bool | None = None
    profiling: bool = False
    platform: str | None = None
    analyze_auto_scopes_for_deps: bool = False
    emit_source_loc: bool | None = None
    dump_ptoas_passes: bool = False
    runtime: RuntimeKind | str | None = None


@dataclass(frozen=True)
class CompileOptions:
    """Every ``ir.compile`` knob after defaults and settings were applied (resolved once, never changed)."""

    output_dir: Path
    dump_level: PassDumpLevel
    backend_type: BackendType
    platform: str
    skip_ptoas: bool
    verification_level: VerificationLevel
    diagnostic_phase: DiagnosticPhase
    disabled_diagnostics: frozenset[DiagnosticCheck]
    memory_planner: MemoryPlanner
    l0c_double_buffer: bool
    profiling: bool
    analyze_auto_scopes_for_deps: bool
    emit_source_loc: bool
    dump_ptoas_passes: bool
    runtime: RuntimeKind
    file_prefix_map: PrefixMap
    toolchain: str
    codegen_max_workers: int | None
    ptoas_root: str | None
    cache_dir: Path
    ptoas_timeout_s: float
    cache_max_mb: int = 0  # bound of the ptoas output cache; 0: ptoas runs for every unit
    explicit_output: bool = True  # False: a default dir name, claimed (created) atomically before writing


def _settings() -> Settings:
    from pypto.toolchain.logging import ensure_configured
    from pypto.toolchain.settings import resolve_settings

    settings = resolve_settings()
    ensure_configured(settings)  # PYPTO_LOG_LEVEL / PYPTO_LOG_FORMAT apply to library use too
    return settings


def _conflict(name: str, value: object, op: str = "compile") -> None:
    from pypto.passes.context import PassContext

    if value is not None and PassContext.current() is not None:
        raise RuntimeError(
            f"{op}() was called with {name} while a PassContext is already active. "
            f"Set the {name} on the existing PassContext instead.")


def _default_output_dir(program: Program, settings: Settings) -> Path:
    """``<prog_build_dir>/<program>_<timestamp>``: a candidate name, claimed by :func:`_claim_output_dir`."""
    return settings.output_base / f"{program.name}_{datetime.now().strftime('%Y%m%d_%H%M%S')}"


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


def resolve_options(program: Program, req: CompileRequest, settings: Settings | None = None) -> CompileOptions:
    """Apply the PassContext conflict rule and settings to the keyword arguments, once.

    Every name that becomes a file or a symbol is checked first (:func:`pypto.artifact.names.check_program`):
    nothing is created for a program whose name could leave the output directory.
    """
    check_program(program)
    for name, value in (("verification_level", req.verification_level), ("diagnostic_phase", req.diagnostic_phase),
                        ("memory_planner", req.memory_planner), ("runtime", req.runtime)):
        _conflict(name, value)
    if req.strategy is not OptimizationStrategy.Default:
        raise ValueError(f"Unsupported optimization strategy: {req.strategy!r}")
    settings = settings or _settings()
    backend = backend_for_platform(req.platform) if req.platform is not None else req.backend_type
    ctx = _active_context()
    runtime = req.runtime or (ctx.runtime if ctx else None) or settings.runtime
    _check_graph_runtime(program, runtime, "argument" if req.runtime is not None else settings.source_of("runtime"))
    return CompileOptions(
        output_dir=Path(req.output_dir) if req.output_dir is not None else _default_output_dir(program, settings),
        dump_level=PassDumpLevel.coerce(req.dump_passes),
        backend_type=backend,
        platform=req.platform or default_sim_platform(backend),
        skip_ptoas=bool(req.skip_ptoas),
        verification_level=req.verification_level or (ctx.verification_level if ctx else None)
        or VerificationLevel(settings.verify_level),
        diagnostic_phase=req.diagnostic_phase or (ctx.diagnostic_phase if ctx else None)
        or DiagnosticPhase(settings.warning_level),
        disabled_diagnostics=frozenset(req.disabled_diagnostics if req.disabled_diagnostics is not None
                                       else DEFAULT_DISABLED),
        memory_planner=req.memory_planner or (ctx.memory_planner if ctx else None) or MemoryPlanner.PYPTO,
        l0c_double_buffer=bool(req.enable_pypto_l0c_double_buffer),
        profiling=bool(req.profiling) or settings.compile_profiling or _profiler_active(),
        analyze_auto_scopes_for_deps=bool(req.analyze_auto_scopes_for_deps),
        emit_source_loc=settings.emit_pto_loc if req.emit_source_loc is None else bool(req.emit_source_loc),
        dump_ptoas_passes=bool(req.dump_ptoas_passes),
        runtime=RuntimeKind.from_name(runtime),
        file_prefix_map=parse_prefix_map(settings.file_prefix_map),
        toolchain=settings.toolchain,
        codegen_max_workers=settings.codegen_max_workers,
        ptoas_root=settings.ptoas_root,
        cache_dir=settings.cache_dir,
        ptoas_timeout_s=settings.ptoas_timeout_s,
        cache_max_mb=settings.cache_max_mb,
        explicit_output=req.output_dir is not None,
    )


def _check_graph_runtime(program: Program, runtime: RuntimeKind | str, source: str) -> None:
    """A Graph function needs the host_build_graph runtime (the host records and replays it)."""
    from pypto.ir.enums import FunctionType
    from pypto.toolchain.platforms import check_graph_runtime

    name = RuntimeKind.from_name(runtime).value
    for func in program.functions:
        if func.func_type is FunctionType.Graph:
            check_graph_runtime(func.name, name, source)


def _active_context() -> PassContext | None:
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
    disabled_diagnostics: Iterable[DiagnosticCheck] | None = None,
    memory_planner: MemoryPlanner | None = None,
    enable_pypto_l0c_double_buffer: bool | None = None,
    profiling: bool = False,
    platform: str | None = None,
    distributed_config: DistributedConfig | None = None,
    analyze_auto_scopes_for_deps: bool = False,
    emit_source_loc: bool | None = None,
    dump_ptoas_passes: bool = False,
    runtime: RuntimeKind | str | None = None,
) -> CompiledProgram:
    """Compile ``program`` into an artifact directory and return a CompiledProgram handle on it.

    Every parameter is described on the Compiling page of the documentation (docs/compiling.md); all
    but ``program`` are keyword-only.
    """
    if not isinstance(program, Program):
        raise TypeError(f"ir.compile() expects an ir.Program (a @pl.program class), got {type(program).__name__}")
    if distributed_config is not None:
        raise UnsupportedFeatureError(
            "distributed_config: pypto.driver.compile compiles one chip-level program",
            hint="compile distributed (HOST-level) programs with pypto.ir.compile(..., distributed_config=...)")
    request = CompileRequest(
        output_dir=output_dir, strategy=strategy, dump_passes=dump_passes, backend_type=backend_type,
        skip_ptoas=skip_ptoas, verification_level=verification_level, diagnostic_phase=diagnostic_phase,
        disabled_diagnostics=disabled_diagnostics, memory_planner=memory_planner,
        enable_pypto_l0c_double_buffer=enable_pypto_l0c_double_buffer, profiling=profiling, platform=platform,
        analyze_auto_scopes_for_deps=analyze_auto_scopes_for_deps, emit_source_loc=emit_source_loc,
        dump_ptoas_passes=dump_ptoas_passes, runtime=runtime)
    return _compile(program, resolve_options(program, request))


def lower(program: Program, *, memory_planner: MemoryPlanner | None = None,
          **options: Unpack[PassOptions]) -> Program:
    """Run the pass pipeline only and return the post-pass Program; writes nothing.

    ``options`` are :class:`PassContext`'s (its defaults apply); inside an active PassContext that one
    is used, and a ``memory_planner`` argument is an error.
    """
    from pypto.passes import run_pipeline
    from pypto.passes.context import PassContext

    _conflict("memory_planner", memory_planner, op="lower")
    outer = PassContext.current()
    ctx = outer or PassContext(memory_planner=memory_planner or MemoryPlanner.PYPTO, **options)
    from pypto.toolchain.gc_headroom import gc_headroom

    with gc_headroom(), nullcontext() if outer else ctx:
        return run_pipeline(program, ctx=ctx, dump_level=PassDumpLevel.NONE, dump_dir=None,
                            report_dir=None).program


def _compile(program: Program, opts: CompileOptions) -> CompiledProgram:
    """Compile into the output dir: a fresh default dir is claimed; an explicit one is locked while written."""
    from pypto.passes.guards import reject_unsupported
    from pypto.toolchain.gc_headroom import gc_headroom
    from pypto.toolchain.storage import storage_errors

    reject_unsupported(program)  # before an output dir is claimed
    # fewer collector passes over the compile's short-lived IR; a full or read-only disk is the user's
    # to fix, not a pypto bug
    with gc_headroom(), storage_errors(opts.output_dir):
        return _compile_locked(program, opts)


def _compile_locked(program: Program, opts: CompileOptions) -> CompiledProgram:
    from pypto.toolchain.cachefs import dir_lock
    from pypto.toolchain.logging import bound_context

    lock: AbstractContextManager[object]
    if opts.explicit_output:
        _make_dirs(opts.output_dir.parent)
        lock = dir_lock(opts.output_dir)
    else:
        opts = dataclasses.replace(opts, output_dir=_claim_output_dir(opts.output_dir))
        lock = nullcontext()
    with lock, bound_context(program=program.name, platform=opts.platform, output_dir=opts.output_dir,
                             toolchain=opts.toolchain):
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
        enable_pypto_l0c_double_buffer=opts.l0c_double_buffer)
    stages: list[Stage] = []
    plan: dict[RegionKey, int] = {}
    before: Counter[RegionKey] = Counter()
    while True:  # again with kernels cut, while one of them asks for more UB than the core has
        with nullcontext() if outer else ctx, stage("passes"), ub_cut_plan(plan):
            t0 = time.perf_counter()
            result = run_pipeline(program, ctx=ctx, dump_level=opts.dump_level,
                                  dump_dir=out / PASSES_DUMP_DIR if opts.dump_level else None,
                                  report_dir=out / REPORT_DIR, file_prefix_map=opts.file_prefix_map,
                                  analyze_auto_scopes_for_deps=opts.analyze_auto_scopes_for_deps)
            stages.append({"name": "passes", "seconds": time.perf_counter() - t0, "children": [
                {"name": n, "seconds": s, "children": []} for n, s in result.pass_times]})
        try:
            compiled = _codegen_and_commit(program, result.program, opts, stages)
            break
        except _NoRoom as exc:
            over = exc.over
        # outside the handler: a kernel that cannot be cut raises its own located error, not one chained to _NoRoom
        plan, before = _more_tasks(plan, before, over, result.program, opts.platform), _region_counts(result.program)
    if opts.profiling:
        from pypto.compile_profiling import record_compile

        _write_profile(out, stages)
        record_compile(stages, f"compile {program.name}")
    return compiled


def _codegen_and_commit(program: Program, lowered: Program, opts: CompileOptions,
                        stages: list[Stage]) -> CompiledProgram:
    from pypto.backend import assemble
    from pypto.codegen import generate
    from pypto.toolchain.logging import stage

    out = opts.output_dir
    meta = ArtifactMeta.from_program(program, platform=opts.platform, backend_type=opts.backend_type.value,
                                     runtime=opts.runtime.value, toolchain=opts.toolchain, lowered=lowered)
    t0 = time.perf_counter()
    with stage("codegen"):
        try:
            artifact = generate(lowered, backend_type=opts.backend_type, platform=opts.platform,
                                runtime=opts.runtime, emit_source_loc=opts.emit_source_loc,
                                file_prefix_map=opts.file_prefix_map,
                                ptoas_plans_memory=opts.memory_planner is MemoryPlanner.PTOAS)
        except PartialCodegenError as exc:  # keep what was generated, for reading (no completeness marker)
            for rel, text in exc.files.items():
                path = contained(out, rel)
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text)
            raise
    # kernels whose UB buffers add up past the core's: ptoas may still fit them (its PlanMemory shares bytes between
    # tiles that are not live together when space runs short, and always under PTOAS, where tiles have no
    # addresses), so a kernel is cut only when ptoas itself reports the overflow
    over = [] if opts.memory_planner is MemoryPlanner.PTOAS else [o for u in artifact.units for o in ub_overflows(u.pto)]
    t1 = time.perf_counter()
    exe = None if opts.skip_ptoas else _ptoas(opts)
    try:
        with stage("ptoas" if not opts.skip_ptoas else "assemble"):
            assemble(artifact, out, ptoas=exe, skip_ptoas=opts.skip_ptoas, dump_ptoas_passes=opts.dump_ptoas_passes,
                     max_workers=opts.codegen_max_workers, timeout=opts.ptoas_timeout_s,
                     cache=_ptoas_cache(opts, exe))
    except ToolchainError as exc:
        if over and _UB_OVERFLOW in str(exc):
            raise _NoRoom(over) from None
        raise _relocated(exc, out) from None
    stages.append({"name": "codegen", "seconds": t1 - t0, "children": []})
    stages.append({"name": "ptoas", "seconds": time.perf_counter() - t1, "children": []})
    if not opts.skip_ptoas:
        from pypto.artifact.run_script import write_run_script
        from pypto.toolchain.platforms import sim_twin

        write_run_script(out, meta.params, platform=sim_twin(opts.platform))
    commit(out, meta)
    return CompiledProgram.from_meta(program, out, meta, backend_type=opts.backend_type)


_UB_OVERFLOW = "ub overflow"  # ptoas 0.1.1's PlanMemory: "ub overflow, requires N bits while M bits avaliable!"


class _NoRoom(Exception):
    """Generated kernels whose UB buffers exceed the core's (the driver cuts them and compiles again)."""

    def __init__(self, over: list[UbOverflow]) -> None:
        super().__init__(", ".join(o.func for o in over))
        self.over = over


_MAX_TASKS = 4  # tasks one kernel is cut into, at most, to fit its UB


def _region_counts(lowered: Program) -> Counter[RegionKey]:
    """How many kernels of ``lowered`` come from each source region."""
    return Counter(region_key(f.span) for f in lowered.functions if f.is_incore)


def _more_tasks(plan: dict[RegionKey, int], before: Counter[RegionKey], over: list[UbOverflow],
                lowered: Program, platform: str) -> dict[RegionKey, int]:
    """``plan`` with one more task for the source region of each kernel in ``over``; a located error for
    a kernel that cannot be cut (further) and still does not fit. ``before``: the region counts of the
    previous compile (a region whose count did not grow was not cut further)."""
    new = dict(plan)
    now = _region_counts(lowered)
    for o in over:
        f = lowered.get_function(o.func)
        key = region_key(f.span) if f is not None else None
        if key is None or plan.get(key, 1) >= _MAX_TASKS or (key in plan and now[key] <= before[key]):
            raise _too_big(o, f, key in plan, platform)
        new[key] = plan.get(key, 1) + 1
    return new


def _too_big(o: UbOverflow, f: Function | None, cut: bool, platform: str) -> UserError:
    tried = " (and cutting its pl.at region into more tasks did not make it fit)" if cut else ""
    return UserError(
        f"kernel '{o.func}' needs {o.needed} bytes ({o.needed / 1024:.1f} KiB) of on-chip vector memory (UB), "
        f"and the {platform} vector core has {o.available} ({o.available // 1024} KiB){tried}: ptoas 0.1.1 reported "
        "'ub overflow' (its PlanMemory shares bytes only between tiles of one dtype)",
        None if f is None else f.span,
        hint="use smaller tiles (fewer rows or columns per pl.load / pl.create_tensor), or split the pl.at "
             "region into two, the second loading what the first stored into a pl.create_tensor")


def _relocated(exc: ToolchainError, out: Path) -> ToolchainError:
    """The same error with ``<artifact dir>`` in its repro command replaced by the real directory."""
    repro = exc.repro.replace("<artifact dir>", str(out.resolve()))
    message = exc.message
    if isinstance(exc, PartialCodegenError):
        return PartialCodegenError(message, files=exc.files, stderr=exc.stderr, repro=repro, hint=exc.hint)
    return ToolchainError(message, stderr=exc.stderr, repro=repro, hint=exc.hint)


def _ptoas(opts: CompileOptions) -> Path:
    from pypto.toolchain.ptoas import require_ptoas

    return require_ptoas(opts.ptoas_root, opts.cache_dir)


def _ptoas_cache(opts: CompileOptions, exe: Path | None) -> PtoasCache | None:
    if exe is None:
        return None
    from pypto.backend.ptoas_cache import PtoasCache

    return PtoasCache.from_settings(opts.cache_dir, exe, opts.cache_max_mb)


def _profiler_active() -> bool:
    """True inside ``with pypto.compile_profiling.CompileProfiler()`` (it turns profiling on)."""
    from pypto.compile_profiling import get_active_profiler

    return get_active_profiler() is not None


def _write_profile(out: Path, stages: list[Stage]) -> None:
    from pypto.passes.profiling import format_profile_json, format_profile_txt

    (out / REPORT_DIR / "pipeline_profile.txt").write_text(format_profile_txt(stages))
    (out / REPORT_DIR / "pipeline_profile.json").write_text(format_profile_json(stages))


def compile_with_settings(program: Program, settings: Settings,
                          request: CompileRequest | None = None) -> CompiledProgram:
    """``ir.compile`` with an already-resolved Settings object (the CLI path): the request's platform,
    runtime and (if set anywhere) verification level default to the settings' ones."""
    request = request or CompileRequest()
    request = dataclasses.replace(request, platform=request.platform or settings.platform,
                                  runtime=request.runtime or settings.runtime)
    if request.verification_level is None and settings.source_of("verify_level") != "default":
        request = dataclasses.replace(request, verification_level=VerificationLevel(settings.verify_level))
    return _compile(program, resolve_options(program, request, settings))
