"""LowerPipelineLoops: ``for i in pl.pipeline(n, stage=F)`` becomes a loop stepping by ``F * step`` whose
body holds F copies of the original body (stage k sees ``i + k * step``), each with fresh def-vars so
every stage gets its own buffers.

Under the PTOAS planner a pipeline loop around another pipeline loop keeps one stage (it is only marked as
lowered): ptoas 0.1.1 gives every copy's tiles bytes of their own, so nested stages would multiply the inner
loop's L0 / UB blocks (four copies for two levels) past the buffers; the inner loop keeps its stages.

A static trip count that F does not divide leaves the last iterations as straight-line copies after
the loop; with a run-time bound, copies 1..F-1 are guarded by ``if i + k * step < stop`` (only
``addi`` and ``cmpi``, which ptoas 0.1.1 lowers). The lowered loop keeps ``ForKind.Pipeline`` with
``pipeline_stages`` = 1 as a marker (so running the pass again changes nothing); MemoryReuse never
lets a buffer loaded in such a loop share storage with another buffer of the same loop.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from pypto.errors import PartialCodegenError, UnsupportedFeatureError, UserError
from pypto.ir.dtypes import DataType
from pypto.ir.enums import ForKind
from pypto.ir.expr import BinaryExpr, BinOp, ConstInt, Expr, IterArg, Var, as_int
from pypto.ir.function import Function, Program
from pypto.ir.options import MemoryPlanner
from pypto.ir.properties import IRProperty
from pypto.ir.stmt import AssignStmt, ForStmt, IfStmt, Stmt, YieldStmt, flatten, seq
from pypto.passes._index import iadd
from pypto.passes._rewrite import clone, expand_stmts
from pypto.passes._slots import colive_slot_defs, resolve_slots, share_unresolved, slot_memref, unroll_period
from pypto.passes._util import base_name, iter_stmts
from pypto.passes.base import Pass
from pypto.passes.simplify import _Fold

if TYPE_CHECKING:
    from pypto.passes.context import PassContext


def stages(loop: ForStmt) -> int:
    """The stage count a pipeline loop still has to be lowered with (1 = already lowered)."""
    return int(loop.attrs.get("pipeline_stages", 1)) if loop.kind is ForKind.Pipeline else 1


@dataclass
class _Lowering:
    loop: ForStmt
    factor: int
    slots: bool = False    # unrolled for pl.MemRef(..., slots=N)[i % N]: the copies keep the loop's kind
    resolve: bool = False  # evaluate the copies' slot indices (their period divides factor * step)

    def clone(self, iv_value: Expr, carried: list[Expr], rep: int | None = None) -> tuple[list[Stmt], list[Expr]]:
        """One copy of the body for loop value ``iv_value``; returns it (without its yield) and the new carries.
        ``rep`` is a value of the loop variable congruent to ``iv_value`` modulo the unroll period; slot
        indices ``f(i) % N`` of the copy are evaluated with it."""
        mapping = {self.loop.loop_var: iv_value, **dict(zip(self.loop.iter_args, carried, strict=True))}
        stmts = clone(flatten(self.loop.body), mapping)
        if isinstance(iv_value, ConstInt):  # a tail copy: fold `6 * 64` as the parser would
            stmts = [_Fold().visit(x) for x in stmts]
        if rep is not None:
            stmts = resolve_slots(stmts, self.loop.loop_var, rep)
        if stmts and isinstance(stmts[-1], YieldStmt):
            carried = list(stmts.pop().values)
        return stmts, carried

    def guarded(self, iv_value: Expr, carried: list[Expr], rep: int | None) -> tuple[list[Stmt], list[Expr]]:
        """A copy run only when ``iv_value`` is still below the loop's (run-time) stop."""
        stmts, new = self.clone(iv_value, carried, rep)
        span = self.loop.span
        cond = BinaryExpr(BinOp.Lt, iv_value, self.loop.stop, DataType.BOOL, span=span)
        if not carried:
            return [IfStmt(cond, seq(stmts, span), span=span)], carried
        rvs = tuple(Var(ia.name, ia.var_type, span=span) for ia in self.loop.iter_args)
        then = seq([*stmts, YieldStmt(tuple(new), span=span)], span)
        return [IfStmt(cond, then, YieldStmt(tuple(carried), span=span), rvs, span=span)], list(rvs)

    def main_loop(self, stop: Expr, dynamic: bool) -> tuple[list[Stmt], list[Expr]]:
        """The loop over whole groups of F iterations; returns it and its results."""
        lp, step = self.loop, as_int(self.loop.step)
        assert step is not None
        iv = Var(lp.loop_var.name, lp.loop_var.var_type, span=lp.loop_var.span)
        iters = [IterArg(ia.name, ia.var_type, span=ia.span) for ia in lp.iter_args]
        carried: list[Expr] = list(iters)
        body: list[Stmt] = []
        start = as_int(lp.start)
        for k in range(self.factor):
            value = iadd(iv, k * step, iv.span)
            rep = start + k * step if self.resolve and start is not None else None
            stmts, carried = (self.guarded if dynamic and k else self.clone)(value, carried, rep)
            body += stmts
        if iters:
            body.append(YieldStmt(tuple(carried), span=lp.span))
        rvs = [Var(rv.name, rv.var_type, span=rv.span) for rv in lp.return_vars]
        new_step = ConstInt(step * self.factor, DataType.INDEX, span=lp.step.span)
        kind, attrs = (lp.kind, lp.attrs) if self.slots else (ForKind.Pipeline, {**lp.attrs, "pipeline_stages": 1})
        loop = ForStmt(iv, lp.start, stop, new_step, seq(body, lp.span), tuple(iters), tuple(rvs), kind, attrs,
                       inits=lp.inits, span=lp.span)
        return [loop], list(rvs)

    def lower(self) -> list[Stmt]:
        lp = self.loop
        start, stop, step = as_int(lp.start), as_int(lp.stop), as_int(lp.step)
        if step is None or step <= 0:
            raise UserError("pl.pipeline() needs a constant positive step", lp.span,
                            hint="use pl.range for loops with a run-time or negative step")
        if start is None or stop is None:
            out, carried = self.main_loop(lp.stop, dynamic=True)
        else:
            trip = max(0, -(-(stop - start) // step))
            whole = trip // self.factor * self.factor
            out, carried = [], list(lp.inits)
            if whole:
                out, carried = self.main_loop(ConstInt(start + whole * step, DataType.INDEX, span=lp.stop.span),
                                              dynamic=False)
            for r in range(whole, trip):  # the tail: straight-line copies
                value = start + r * step
                stmts, carried = self.clone(ConstInt(value, DataType.INDEX, span=lp.span), carried,
                                            value if self.resolve else None)
                out += stmts
        out += [AssignStmt(rv, v, span=lp.span) for rv, v in zip(lp.return_vars, carried, strict=True)]
        return out


@dataclass(frozen=True)
class LowerPipelineLoops(Pass):
    """Expand ``pl.pipeline(..., stage=F)`` loops into F-stage bodies (see the module docstring)."""

    name = "LowerPipelineLoops"
    produces = frozenset({IRProperty.PipelineResolved})
    memory_planner: MemoryPlanner = MemoryPlanner.PYPTO

    @classmethod
    def from_context(cls, ctx: PassContext) -> LowerPipelineLoops:
        return cls(memory_planner=ctx.memory_planner)

    def run_function(self, func: Function, program: Program) -> Function:
        if self.memory_planner is MemoryPlanner.PTOAS:
            _refuse_colive_slots(func)
        if not any((isinstance(s, ForStmt) and stages(s) > 1) or (isinstance(s, AssignStmt) and slot_memref(s.var))
                   for s in iter_stmts(func.body)):
            return func
        nested = self.memory_planner is not MemoryPlanner.PTOAS
        body = expand_stmts(func.body, lambda s: _lower(s, nested))
        return func.with_(body=share_unresolved(body, _warn_shared))


def _lower(s: Stmt, nested: bool) -> list[Stmt]:
    if not isinstance(s, ForStmt):
        return [s]
    period, step = unroll_period(s), as_int(s.step)
    if stages(s) > 1 and not nested and any(isinstance(x, ForStmt) and x.kind is ForKind.Pipeline
                                            for x in iter_stmts(s.body)):
        return [replace(s, attrs={**s.attrs, "pipeline_stages": 1})]  # see the module doc (PTOAS)
    if stages(s) > 1:
        resolve = period is not None and step is not None and (stages(s) * step) % period == 0
        return _Lowering(s, stages(s), resolve=resolve).lower()
    if period is not None:
        return _Lowering(s, period, slots=True, resolve=True).lower()
    return [s]


def _warn_shared(s: AssignStmt) -> None:
    from pypto.toolchain.logging import get_logger

    where = f" at {s.span.file}:{s.span.line}:{s.span.col}" if s.span.is_known() else ""
    get_logger("pypto.passes").warning(
        f"[MemRefSlots] the slot index of '{s.var.name}' is not 'i % N' of an enclosing pl.range loop with a "
        f"constant start and step; ptoas 0.1.1 has no multi-slot buffer, so all its slots share one buffer "
        f"(same results, no overlap){where}")


def _refuse_colive_slots(func: Function) -> None:
    """Upstream's PTOAS rule: one slot of a declared multi-slot buffer per loop iteration (see :mod:`._slots`).

    Upstream refuses it in code generation, so it is a :class:`PartialCodegenError` here too (no files yet)."""
    found = colive_slot_defs(func.body)
    if found is None:
        return
    first, second, loop, memref = found
    base = memref.base
    a, b = base_name(first.var.name), base_name(second.var.name)
    at = f" (line {loop.span.line})" if loop.span.is_known() else ""
    err = UnsupportedFeatureError(
        f"'{a}' and '{b}' take two slots of pl.MemRef '{base if isinstance(base, str) else base.name}' in one "
        f"iteration of a loop{at}; under memory_planner=PTOAS a declared multi-slot buffer gives one slot per "
        "iteration. Upstream makes the buffer one ptoas multi-buffer region (pto.alloc_multi_tile, not in ptoas "
        "0.1.1), whose per-slot sync guards only the first slot an iteration takes (wrong results measured with "
        "ptoas 0.54, no version known to fix it); pypto refuses the same programs", second.span,
        hint=f"compile with memory_planner=MemoryPlanner.PYPTO (or DSA_RP), which keeps the slots apart, or give "
             f"'{b}' a pl.MemRef(slots=N) declaration of its own")
    raise PartialCodegenError(str(err), user_error=err)
