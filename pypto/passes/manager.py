"""PassManager: runs a pipeline of passes with instruments (dumps, verification, round trips,
diagnostics) and collects per-pass timings."""

from __future__ import annotations

import time
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pypto.diagnostics import Diagnostic
from pypto.errors import InternalError, PyptoError
from pypto.ir.function import Program
from pypto.ir.options import OptimizationStrategy, PassDumpLevel, VerificationLevel
from pypto.passes import get_pass
from pypto.passes.base import Pass
from pypto.passes.context import PassContext
from pypto.passes.diagnostics import DiagnosticsRunner
from pypto.passes.instruments import (
    DumpInstrument,
    Instrument,
    PassStep,
    RoundtripInstrument,
    VerifyInstrument,
)
from pypto.passes.pipelines import pass_names
from pypto.toolchain.prefix_map import PrefixMap


@dataclass(frozen=True)
class PipelineResult:
    """Output of :func:`run_pipeline`: the lowered program, ``(pass, seconds)`` pairs, diagnostics."""

    program: Program
    pass_times: list[tuple[str, float]] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)


def _active() -> PassContext:
    return PassContext.current() or PassContext()


class PassManager:
    """An ordered list of passes; the memory planner is fixed when the manager is constructed."""

    def __init__(self, names: tuple[str, ...], ctx: PassContext | None = None, *,
                 analyze_auto_scopes_for_deps: bool = False) -> None:
        self.ctx = ctx or _active()
        self.planner = self.ctx.memory_planner
        self.analyze_auto_scopes_for_deps = analyze_auto_scopes_for_deps
        self._passes: list[Pass] = list(_build_passes(tuple(names), self.ctx))

    @classmethod
    def get_strategy(cls, strategy: OptimizationStrategy = OptimizationStrategy.Default, *,
                     analyze_auto_scopes_for_deps: bool = False) -> PassManager:
        """The manager for ``strategy`` under the active context's memory planner."""
        ctx = _active()
        return cls(pass_names(strategy, ctx.memory_planner), ctx,
                   analyze_auto_scopes_for_deps=analyze_auto_scopes_for_deps)

    @property
    def passes(self) -> list[Pass]:
        return list(self._passes)

    @property
    def pass_names(self) -> list[str]:
        return [p.name for p in self._passes]

    def get_pass_names(self) -> list[str]:
        """Kept for upstream compatibility (``PassManager.get_pass_names``); same as :attr:`pass_names`."""
        return self.pass_names

    def run_passes(self, program: Program, dump_ir: bool | PassDumpLevel = False,
                   output_dir: str | Path | None = None, prefix: str = "pl") -> Program:
        """Run every pass; dump to ``output_dir`` when ``dump_ir`` is truthy / a non-NONE level."""
        level = PassDumpLevel.coerce(dump_ir)
        if level is not PassDumpLevel.NONE and output_dir is None:
            raise ValueError("run_passes(dump_ir=...) needs output_dir")
        return self.run(program, dump_level=level, dump_dir=output_dir, prefix=prefix).program

    def _check_planner(self, ctx: PassContext) -> None:
        if ctx.memory_planner is not self.planner:
            raise RuntimeError(
                f"PassManager was constructed under memory_planner={self.planner.name} but is being run "
                f"under memory_planner={ctx.memory_planner.name}; construct the PassManager inside the "
                f"same PassContext you run it in")

    def _instruments(self, ctx: PassContext, dump_level: PassDumpLevel, dump_dir: str | Path | None,
                     prefix: str) -> list[Instrument]:
        out: list[Instrument] = []
        if ctx.verification_level is not VerificationLevel.NONE:
            out.append(VerifyInstrument())
        if ctx.verification_level is VerificationLevel.ROUNDTRIP:
            out.append(RoundtripInstrument(prefix))
        out.extend(ctx.instruments)
        if dump_level is not PassDumpLevel.NONE and dump_dir is not None:
            out.append(DumpInstrument(Path(dump_dir), dump_level, prefix))
        return out

    def run(self, program: Program, *, dump_level: PassDumpLevel = PassDumpLevel.NONE,
            dump_dir: str | Path | None = None, report_dir: str | Path | None = None,
            file_prefix_map: PrefixMap = (),
            prefix: str = "pl") -> PipelineResult:
        """Run the pipeline with instruments; returns the program, timings and diagnostics."""
        ctx = _active()
        self._check_planner(ctx)
        instruments = self._instruments(ctx, dump_level, dump_dir, prefix)
        diags = DiagnosticsRunner(ctx, Path(report_dir) if report_dir else None, file_prefix_map)
        diags.pre_pipeline(program)
        for inst in instruments:
            inst.before_pipeline(program)
        times: list[tuple[str, float]] = []
        for index, p in enumerate(self._passes, start=1):
            t0 = time.perf_counter()
            after = _run_one(p, program)
            times.append((p.name, time.perf_counter() - t0))
            step = PassStep(index, p, program, after, diags.post_pass(after))
            for inst in instruments:
                inst.after_pass(step)
            program = after
        diags.post_pipeline(program)
        for inst in instruments:
            inst.after_pipeline(program)
        return PipelineResult(program, times, diags.found)


_BUILT: dict[tuple[Any, ...], tuple[Pass, ...]] = {}


def _build_passes(names: tuple[str, ...], ctx: PassContext) -> tuple[Pass, ...]:
    """The pass objects for ``names`` under ``ctx``'s options, built once per distinct set of options
    (passes are frozen dataclasses made from those options alone, so equal options give equal passes)."""
    key = (names, ctx.verification_level, ctx.diagnostic_phase, ctx.disabled_diagnostics, ctx.memory_planner,
           ctx.runtime, ctx.backend_type, ctx.enable_pypto_l0c_double_buffer)
    try:
        built = _BUILT.get(key)
    except TypeError:  # an option value that cannot be a key: build afresh, remember nothing
        return tuple(get_pass(n).from_context(ctx) for n in names)
    if built is None:
        if len(_BUILT) >= 16:
            _BUILT.clear()
        built = _BUILT[key] = tuple(get_pass(n).from_context(ctx) for n in names)
    return built


def _run_one(p: Pass, program: Program) -> Program:
    try:
        return p.run(program)
    except PyptoError:
        raise
    except Exception as exc:  # a crash inside a pass is our bug: name the pass
        raise InternalError(f"pass {p.name} crashed: {type(exc).__name__}: {exc}") from exc


def run_pipeline(program: Program, *, ctx: PassContext | None = None,
                 dump_level: PassDumpLevel = PassDumpLevel.NONE, dump_dir: str | Path | None = None,
                 report_dir: str | Path | None = None, file_prefix_map: PrefixMap = (),
                 strategy: OptimizationStrategy = OptimizationStrategy.Default,
                 analyze_auto_scopes_for_deps: bool = False) -> PipelineResult:
    """The driver's entry: build the strategy's PassManager under ``ctx`` and run it."""
    from pypto.passes.guards import reject_unsupported

    reject_unsupported(program)
    ctx = ctx or _active()
    with nullcontext() if PassContext.current() is ctx else ctx:
        pm = PassManager.get_strategy(strategy, analyze_auto_scopes_for_deps=analyze_auto_scopes_for_deps)
        return pm.run(program, dump_level=PassDumpLevel.coerce(dump_level), dump_dir=dump_dir,
                      report_dir=report_dir, file_prefix_map=file_prefix_map)
