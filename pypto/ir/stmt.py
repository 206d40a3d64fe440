"""IR statements. ``span`` and ``comments`` never take part in structural equality."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pypto.ir.enums import ForKind, Level, Role, SplitMode
from pypto.ir.expr import Call, Expr, GlobalVar, IterArg, Var, as_int
from pypto.ir.memo import IdentityMemo
from pypto.span import Span


@dataclass(frozen=True, slots=True, eq=False)
class Stmt:
    """Base of statements."""

    span: Span = field(default_factory=Span.unknown, kw_only=True, repr=False)
    comments: tuple[str, ...] = field(default=(), kw_only=True, repr=False)


@dataclass(frozen=True, slots=True, eq=False)
class AssignStmt(Stmt):
    """``var = value`` (defines ``var``)."""

    var: Var
    value: Expr


@dataclass(frozen=True, slots=True, eq=False)
class EvalStmt(Stmt):
    """An expression evaluated for its effect."""

    expr: Expr


@dataclass(frozen=True, slots=True, eq=False)
class ReturnStmt(Stmt):
    values: tuple[Expr, ...] = ()


@dataclass(frozen=True, slots=True, eq=False)
class YieldStmt(Stmt):
    """Binds the results of the enclosing ``for``/``while``/``if`` (its ``return_vars``)."""

    values: tuple[Expr, ...] = ()


@dataclass(frozen=True, slots=True, eq=False)
class BreakStmt(Stmt):
    pass


@dataclass(frozen=True, slots=True, eq=False)
class ContinueStmt(Stmt):
    pass


@dataclass(frozen=True, slots=True, eq=False)
class SeqStmts(Stmt):
    stmts: tuple[Stmt, ...]


@dataclass(frozen=True, slots=True, eq=False)
class IfStmt(Stmt):
    cond: Expr
    then_body: Stmt
    else_body: Stmt | None = None
    return_vars: tuple[Var, ...] = ()


# Loop attributes the printer writes as ``attrs={...}`` and the parser reads back (upstream's spelling);
# ``pipeline_stages`` prints as ``pl.pipeline(..., stage=F)`` instead.
LOOP_ATTRS = frozenset({"pipeline_double_buffer_c"})


@dataclass(frozen=True, slots=True, eq=False)
class ForStmt(Stmt):
    """``for loop_var in pl.range(start, stop, step, init_values=inits)``.

    ``inits[i]`` is the value ``iter_args[i]`` holds on entry (an operand of the loop, read before it).
    """

    loop_var: Var
    start: Expr
    stop: Expr
    step: Expr
    body: Stmt
    iter_args: tuple[IterArg, ...] = ()
    inits: tuple[Expr, ...] = field(default=(), kw_only=True)
    return_vars: tuple[Var, ...] = ()
    kind: ForKind = ForKind.Sequential
    attrs: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        _check_inits(self)


@dataclass(frozen=True, slots=True, eq=False)
class WhileStmt(Stmt):
    """``for (a, ...) in pl.while_(init_values=(...))`` (``iter_args``/``inits`` as on ForStmt)."""

    cond: Expr
    body: Stmt
    iter_args: tuple[IterArg, ...] = ()
    inits: tuple[Expr, ...] = field(default=(), kw_only=True)
    return_vars: tuple[Var, ...] = ()

    def __post_init__(self) -> None:
        _check_inits(self)


def runs_at_least_once(loop: ForStmt) -> bool:
    """Whether ``loop`` has constant bounds that give it one iteration or more."""
    start, stop, step = (as_int(e) for e in (loop.start, loop.stop, loop.step))
    if start is None or stop is None or not step:
        return False
    return start < stop if step > 0 else start > stop


def initial_values(loop: ForStmt | WhileStmt) -> dict[IterArg, Expr]:
    """``{iter_arg: the value it starts from}`` for a loop."""
    return dict(zip(loop.iter_args, loop.inits, strict=True))


def _check_inits(loop: ForStmt | WhileStmt) -> None:
    if len(loop.inits) != len(loop.iter_args):
        raise ValueError(f"{type(loop).__name__}: {len(loop.iter_args)} iter_args need as many inits, "
                         f"got {len(loop.inits)} (inits[i] is the value iter_args[i] starts from)")


@dataclass(frozen=True, slots=True, eq=False)
class ScopeStmt(Stmt):
    """Base of ``with`` scopes."""

    body: Stmt


# The call attribute that carries pl.dump_tag marks to the pl.at scopes of an inline function the call
# splices in (InlineFunctions adds them to those scopes' dumps).
DUMP_TAGS_ATTR = "dump_tags"


@dataclass(frozen=True, slots=True, eq=False)
class InCoreScopeStmt(ScopeStmt):
    """``with pl.at(level=pl.Level.CORE_GROUP, name_hint=..., deps=[...], dumps=[...]) [as tid]:``."""

    name_hint: str = ""
    deps: tuple[Expr, ...] = ()
    task_var: Var | None = None
    attrs: dict[str, Any] = field(default_factory=dict)
    dumps: tuple[Expr, ...] = ()  # tensors to dump at this task (dumps=[...] / pl.dump_tag), enable_dump_args=1


@dataclass(frozen=True, slots=True, eq=False)
class HierarchyScopeStmt(ScopeStmt):
    """``with pl.at(level=<not CORE_GROUP>, role=...)``."""

    level: Level = Level.CHIP
    role: Role | None = None
    name_hint: str = ""


@dataclass(frozen=True, slots=True, eq=False)
class ClusterScopeStmt(ScopeStmt):
    """``with pl.cluster(name_hint=...)`` -> a Group function."""

    name_hint: str = ""


@dataclass(frozen=True, slots=True, eq=False)
class SpmdScopeStmt(ScopeStmt):
    """``with pl.spmd(core_num, sync_start=..., name_hint=...) [as tid]:`` (and ``for i in pl.spmd(n)``).

    One task launched as ``core_num`` blocks. The body is either one InCore region (each block reads its
    index with ``tile.get_block_idx``) or a dispatch of one kernel call; OutlineIncoreScopes folds the
    scope into the launched call's ``block_num`` / ``sync_start`` attrs.
    """

    core_num: Expr
    sync_start: bool = False
    name_hint: str = ""
    deps: tuple[Expr, ...] = ()
    task_var: Var | None = None
    predicate: Expr | None = None  # dispatched only when it holds (orch_predicate)


@dataclass(frozen=True, slots=True, eq=False)
class RuntimeScopeStmt(ScopeStmt):
    """``with pl.scope()`` / ``pl.manual_scope()`` -> ``PTO2_SCOPE()`` in orchestration C++."""

    manual: bool = False


def seq(stmts: list[Stmt] | tuple[Stmt, ...], span: Span | None = None) -> Stmt:
    """One statement for a list: the single element itself, else a SeqStmts."""
    if len(stmts) == 1:
        return stmts[0]
    return SeqStmts(tuple(stmts), span=span or Span.unknown())


def flatten(stmt: Stmt | None) -> list[Stmt]:
    """The statements of a body as a flat list (nested SeqStmts expanded)."""
    if stmt is None:
        return []
    if isinstance(stmt, SeqStmts):
        out: list[Stmt] = []
        for s in stmt.stmts:
            if isinstance(s, SeqStmts):
                out.extend(flatten(s))
            else:
                out.append(s)
        return out
    return [stmt]


# Pre-order statement lists, remembered per statement object: passes hand on untouched subtrees as they
# are, so one body is walked once however many passes and checkers scan it.
_PREORDER = IdentityMemo(4096)


def preorder(stmt: Stmt | None) -> tuple[Stmt, ...]:
    """Every statement of ``stmt`` (itself first, nested bodies included) in pre-order."""
    return () if stmt is None else _PREORDER.get(None, stmt, _walk_preorder)


def _walk_preorder(stmt: Stmt) -> tuple[Stmt, ...]:
    out: list[Stmt] = []
    stack: list[Stmt | None] = [stmt]
    while stack:
        s = stack.pop()
        if s is None:
            continue
        out.append(s)
        if isinstance(s, SeqStmts):
            stack.extend(reversed(s.stmts))
        elif isinstance(s, IfStmt):
            stack.append(s.else_body)
            stack.append(s.then_body)
        elif isinstance(s, (ForStmt, WhileStmt, ScopeStmt)):
            stack.append(s.body)
    return tuple(out)


def stmt_value(s: Stmt) -> Expr | None:
    """The expression an assignment or an expression statement computes; None for any other statement."""
    return s.value if isinstance(s, AssignStmt) else s.expr if isinstance(s, EvalStmt) else None


def defined_by(stmt: Stmt) -> tuple[Var, ...]:
    """The Vars ``stmt`` itself defines (not its nested bodies): an assignment's var; a loop's loop var,
    iter args and results; an if's results."""
    if isinstance(stmt, AssignStmt):
        return (stmt.var,)
    if isinstance(stmt, ForStmt):
        return (stmt.loop_var, *stmt.iter_args, *stmt.return_vars)
    if isinstance(stmt, (WhileStmt, IfStmt)):
        return (*getattr(stmt, "iter_args", ()), *stmt.return_vars)
    return ()


def trailing_yield(body: Stmt | None) -> YieldStmt | None:
    """The yield ending a loop/branch body; a trailing scope is looked into (MaterializeRuntimeScopes wraps
    a whole orchestration loop / branch body, its yield included, in a RuntimeScopeStmt)."""
    stmts = flatten(body)
    last = stmts[-1] if stmts else None
    if isinstance(last, ScopeStmt):
        return trailing_yield(last.body)
    return last if isinstance(last, YieldStmt) else None


def merge_sources(s: Stmt) -> list[tuple[Var, Expr]]:
    """``(merged Var, a value it takes)`` of a loop (each iter arg and its init, each result and its iter
    arg) or an if (each result and what the then-branch yields for it); none for other statements."""
    if isinstance(s, ForStmt | WhileStmt):
        return [*zip(s.iter_args, s.inits, strict=True), *zip(s.return_vars, s.iter_args, strict=False)]
    y = trailing_yield(s.then_body) if isinstance(s, IfStmt) else None
    return list(zip(s.return_vars, y.values, strict=False)) if y is not None else []


def first_program_call(stmts: list[Stmt]) -> int | None:
    """Index of the first ``x = self.f(...)`` / ``self.f(...)`` statement (a call to a program function)."""
    for i, s in enumerate(stmts):
        value = stmt_value(s)
        if isinstance(value, Call) and isinstance(value.op, GlobalVar):
            return i
    return None


class Optimization:
    """Base of the entries of ``pl.at(..., optimizations=[...])`` (kept in InCoreScopeStmt.attrs)."""


@dataclass(frozen=True, slots=True)
class Split(Optimization):
    """``pl.split(mode)``: cross-core split mode of the outlined kernel.

    ``slot_num`` is the deprecated ``pl.split(mode, slot_num=N)`` spelling of ``pl.cross_core_slot``.
    """

    mode: SplitMode
    slot_num: int | None = None

    def dsl_text(self, prefix: str = "pl") -> str:
        slots = "" if self.slot_num is None else f", slot_num={self.slot_num}"
        return f"{prefix}.split({prefix}.SplitMode.{self.mode.name}{slots})"

    def __repr__(self) -> str:
        return self.dsl_text()


@dataclass(frozen=True, slots=True)
class CrossCoreSlot(Optimization):
    """``pl.cross_core_slot(slot_num=N)``: ring depth of the automatic cross-core pipeline."""

    slot_num: int

    def dsl_text(self, prefix: str = "pl") -> str:
        return f"{prefix}.cross_core_slot(slot_num={self.slot_num})"

    def __repr__(self) -> str:
        return self.dsl_text()
