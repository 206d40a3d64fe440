"""Diagnostic checks (warnings and perf hints) run by the PassManager at their registered phase."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pypto.diagnostics import Diagnostic, Severity
from pypto.ir.enums import ParamDirection
from pypto.ir.expr import Call, Var
from pypto.ir.function import Function, Program
from pypto.ir.ops.registry import op_of
from pypto.ir.options import BackendType, DiagnosticCheck, DiagnosticPhase
from pypto.ir.stmt import AssignStmt, ForStmt, IfStmt, ScopeStmt, SeqStmts, WhileStmt
from pypto.ir.types import ShapedType, TileType
from pypto.passes._util import calls_in, iter_stmts, used_vars
from pypto.passes.context import PassContext
from pypto.toolchain.logging import get_logger
from pypto.toolchain.platforms import BACKEND_ARCH
from pypto.toolchain.prefix_map import PrefixMap, apply_prefix_map

Check = Callable[[Program, PassContext], list[Diagnostic]]
INNERMOST_BYTES: dict[BackendType, int] = {BackendType.Ascend910B: 512, BackendType.Ascend950: 128}
BACKEND_SHORT: dict[BackendType, str] = {BackendType(b): arch for b, arch in BACKEND_ARCH.items()}


def _uses(func: Function) -> set[Var]:
    """Vars read by the function's statements (control-flow heads, not their bodies twice), one walk."""
    nodes: list[object] = []
    for s in iter_stmts(func.body):
        if isinstance(s, AssignStmt):
            nodes.append(s.value)
        elif isinstance(s, (SeqStmts, ScopeStmt)):
            continue
        elif not isinstance(s, (ForStmt, IfStmt, WhileStmt)):
            nodes.append(s)
        else:
            nodes.append(getattr(s, "cond", None) or s.stop)
            nodes.extend(getattr(s, "inits", ()))
            if isinstance(s, ForStmt):
                nodes += [s.start, s.step]
    return set(used_vars(nodes))


def _type_refs(func: Function) -> set[str]:
    """Names of tile.alloc bases that values' types point at (``MemRef(mem_vec_3, ...)``): those are used."""
    refs = (getattr(s.var.type, "memref", None) for s in iter_stmts(func.body) if isinstance(s, AssignStmt))
    return {mr.base.name for mr in refs if mr is not None and isinstance(mr.base, Var)}


def _unused_variable(program: Program, ctx: PassContext) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    for f in program.functions:
        used = _uses(f)
        used_names = {v.name for v in used} | _type_refs(f)
        for s in iter_stmts(f.body):
            # a call that updates an operand in place (``tile.store``, has_effect): its unused result is not dead
            if isinstance(s, AssignStmt) and s.var not in used and s.var.name not in used_names \
                    and not s.var.name.startswith("_") and not getattr(op_of(s.value), "has_effect", False):
                out.append(Diagnostic(Severity.WARNING, "UnusedVariable",
                                      f"Variable '{s.var.name}' is defined but never used", s.span))
    return out


def _unused_cf_result(program: Program, ctx: PassContext) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    for f in program.functions:
        used = _uses(f)
        out += [Diagnostic(Severity.WARNING, "UnusedControlFlowResult",
                           f"Control-flow result '{rv.name}' is never used", s.span)
                for s in iter_stmts(f.body) for rv in getattr(s, "return_vars", ()) if rv not in used]
    return out


def _out_param_write_dropped(program: Program, ctx: PassContext) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    for f in program.functions:
        outs = {p.name for p, d in zip(f.params, f.param_directions, strict=True) if d is ParamDirection.Out}
        for s in iter_stmts(f.body):
            # a call writing into the old value (``x = pl.assemble(x, ...)``) writes the buffer
            if isinstance(s, AssignStmt) and s.var.name in outs and not any(
                    isinstance(a, Var) and a.name == s.var.name for c in calls_in(s.value) for a in c.args):
                out.append(Diagnostic(
                    Severity.WARNING, "OutParamWriteDropped",
                    f"assignment to Out parameter '{s.var.name}' in '{f.name}' rebinds the name only — the "
                    f"caller's buffer is never written. Use '{s.var.name}[:] = <expr>' to write into it",
                    s.span))
    return out


def _granularity(program: Program, ctx: PassContext) -> list[Diagnostic]:
    limit = INNERMOST_BYTES[ctx.backend_type]
    out: list[Diagnostic] = []
    seen: set[tuple[str, int, int]] = set()
    for f in program.functions:
        if not f.is_incore:
            continue
        for c in calls_in(f.body):
            hint = _granularity_hint(c, limit, ctx.backend_type)
            key = (c.span.file, c.span.line, c.span.col)
            if hint is not None and (key not in seen or not c.span.is_known()):
                seen.add(key)
                out.append(Diagnostic(Severity.PERF_HINT, "TileInnermostDimGranularity", hint, c.span,
                                      code=1))
    return out


def _granularity_hint(c: Call, limit: int, backend: BackendType) -> str | None:
    if c.op not in ("tile.load", "tile.store"):
        return None
    tile = c.result_type if c.op == "tile.load" else c.args[0].type
    if not isinstance(tile, ShapedType) or tile.static_shape() is None or not tile.shape:
        return None
    inner = int(tile.shape[-1]) * tile.dtype.nbytes
    if inner >= limit:
        return None
    rows = (tile.nbytes() or 0) // max(inner, 1)
    space = tile.memory_space.value if isinstance(tile, TileType) and tile.memory_space else "DDR"
    return (f"{c.op} has innermost dim = {inner}B (tile {tile.dtype.value.lower()}[{tile.shape[-1]}], "
            f"target_memory={space}); moves {tile.nbytes()}B as {rows} x {inner}B rows; recommended >= "
            f"{limit}B for backend {BACKEND_SHORT[backend]} (L2 cache line = {limit}B). Consider widening "
            f"the innermost tile dimension or transposing the layout")


@dataclass(frozen=True)
class CheckSpec:
    """When a check runs; the check gives each Diagnostic its severity."""

    phase: DiagnosticPhase
    run: Check


CHECKS: dict[DiagnosticCheck, CheckSpec] = {
    DiagnosticCheck.UnusedVariable: CheckSpec(DiagnosticPhase.PRE_PIPELINE, _unused_variable),
    DiagnosticCheck.UnusedControlFlowResult: CheckSpec(DiagnosticPhase.PRE_PIPELINE, _unused_cf_result),
    DiagnosticCheck.OutParamWriteDropped: CheckSpec(DiagnosticPhase.PRE_PIPELINE, _out_param_write_dropped),
    DiagnosticCheck.TileInnermostDimGranularity: CheckSpec(DiagnosticPhase.POST_PIPELINE, _granularity),
}
PHASE_LABEL = {DiagnosticPhase.PRE_PIPELINE: "pipeline_input", DiagnosticPhase.POST_PASS: "post_pass",
               DiagnosticPhase.POST_PIPELINE: "pipeline_output"}


def format_warning(d: Diagnostic, phase: DiagnosticPhase) -> str:
    """``[warning] [Rule] (pipeline_input) <msg> at file:line:col``."""
    where = f" at {d.span}" if d.span is not None and d.span.is_known() else ""
    return f"[warning] [{d.rule}] ({PHASE_LABEL[phase]}) {d.message}{where}"


def format_perf_hint(d: Diagnostic, file_map: PrefixMap = ()) -> str:
    """``[perf_hint PHnnn] Rule: msg at file:line:col`` (the file through ``file_map``)."""
    known = d.span is not None and d.span.is_known()
    where = f" at {apply_prefix_map(d.span.file, file_map)}:{d.span.line}:{d.span.col}" if known else ""
    return f"[perf_hint PH{d.code:03d}] {d.rule}: {d.message}{where}"


class DiagnosticsRunner:
    """Runs the enabled checks of each phase, logs warnings, appends perf hints to the report dir."""

    def __init__(self, ctx: PassContext, report_dir: Path | None, file_map: PrefixMap = ()) -> None:
        self.ctx = ctx
        self.report_dir = report_dir
        self.file_map = file_map
        self.found: list[Diagnostic] = []
        off = ctx.diagnostic_phase is DiagnosticPhase.NONE
        self.enabled = [] if off else [c for c in CHECKS if c not in (ctx.disabled_diagnostics or ())]
        self._phases = frozenset(CHECKS[c].phase for c in self.enabled)
        self._post_pass = DiagnosticPhase.POST_PASS in self._phases

    def _run(self, program: Program, phase: DiagnosticPhase, warn: bool = False) -> list[Diagnostic]:
        out = [d for c in self.enabled if CHECKS[c].phase is phase for d in CHECKS[c].run(program, self.ctx)]
        self.found.extend(out)
        for d in out if warn else ():
            get_logger("pypto.passes").warning(format_warning(d, phase))
        return out

    def pre_pipeline(self, program: Program) -> None:
        self._run(program, DiagnosticPhase.PRE_PIPELINE, warn=True)

    def post_pass(self, program: Program) -> list[Diagnostic]:
        return self._run(program, DiagnosticPhase.POST_PASS, warn=True) if self._post_pass else []

    def post_pipeline(self, program: Program) -> None:
        hints = self._run(program, DiagnosticPhase.POST_PIPELINE)
        if not hints:
            return
        log = get_logger("pypto.passes")
        if self.report_dir is None:
            for d in hints:
                log.info(format_perf_hint(d))
            return
        self.report_dir.mkdir(parents=True, exist_ok=True)
        path = self.report_dir / "perf_hints.log"
        with path.open("a") as fh:
            fh.writelines(format_perf_hint(d, self.file_map) + "\n" for d in hints)
        sites = len({(d.span.file, d.span.line, d.span.col) for d in hints if d.span is not None})
        log.info(f"[perf_hint] {len(hints)} hints across {sites} sites; see {path}")
