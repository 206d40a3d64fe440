"""Statement and function layout of the ``pl`` printer, below ``printer.py`` (which drives it).

Each entry of :data:`STMT_PRINTERS` writes one statement through a :class:`StmtSink` (the
:class:`~pypto.ir.printer.Printer`); ``printer.py`` imports this table, this file imports nothing of it.
"""

from __future__ import annotations

from typing import Any, Protocol

from pypto.ir.enums import INCORE_TYPES, ForKind, FunctionType, ParamDirection
from pypto.ir.expr import ConstInt, Var
from pypto.ir.function import Function
from pypto.ir.stmt import (
    LOOP_ATTRS,
    AssignStmt,
    BreakStmt,
    ClusterScopeStmt,
    ContinueStmt,
    EvalStmt,
    ForStmt,
    HierarchyScopeStmt,
    IfStmt,
    InCoreScopeStmt,
    ReturnStmt,
    RuntimeScopeStmt,
    SeqStmts,
    SpmdScopeStmt,
    WhileStmt,
    YieldStmt,
)
from pypto.ir.types import UnknownType

_LOOP_NAME = {ForKind.Sequential: "range", ForKind.Parallel: "parallel", ForKind.Unroll: "unroll",
              ForKind.Pipeline: "pipeline"}
_DIR_WRAP = {ParamDirection.Out: "Out", ParamDirection.InOut: "InOut"}
_DECORATOR_ATTRS = ("auto_scope", "external_source")


class StmtSink(Protocol):
    """What the statement printers use of the expression/type printer."""

    p: str
    concise: bool
    namer: Any
    lines: list[str]

    def emit(self, indent: int, text: str) -> None: ...

    def block(self, body: Any, indent: int, targets: tuple[Var, ...] = ()) -> None: ...

    def expr(self, e: Any) -> str: ...

    def type(self, t: Any) -> str: ...

    def value(self, v: Any) -> str: ...


def _assign(pr: StmtSink, s: AssignStmt, indent: int, targets: tuple) -> None:
    value = pr.expr(s.value)
    ann = "" if pr.concise or isinstance(s.var.var_type, UnknownType) else f": {pr.type(s.var.var_type)}"
    name = pr.namer.define(s.var)
    pr.emit(indent, f"{name}{ann} = {value}")


def _eval(pr: StmtSink, s: EvalStmt, indent: int, targets: tuple) -> None:
    pr.emit(indent, pr.expr(s.expr))


def _return(pr: StmtSink, s: ReturnStmt, indent: int, targets: tuple) -> None:
    vals = ", ".join(pr.expr(v) for v in s.values)
    pr.emit(indent, f"return {vals}" if vals else "return")


def _yield(pr: StmtSink, s: YieldStmt, indent: int, targets: tuple[Var, ...]) -> None:
    vals = ", ".join(pr.expr(v) for v in s.values)
    call = f"{pr.p}.yield_({vals})"
    if not targets:
        pr.emit(indent, call)
        return
    if len(targets) == 1 and not pr.concise:
        t = pr.type(targets[0].var_type)
        pr.emit(indent, f"{pr.namer.define(targets[0])}: {t} = {call}")
        return
    names = ", ".join(pr.namer.define(t) for t in targets)
    pr.emit(indent, f"{names} = {call}")


def _simple(text: str):
    def run(pr: StmtSink, s: Any, indent: int, targets: tuple) -> None:
        pr.emit(indent, text)
    return run


def _seq(pr: StmtSink, s: SeqStmts, indent: int, targets: tuple) -> None:
    pr.block(s, indent, targets)


def _range_args(pr: StmtSink, s: ForStmt) -> list[str]:
    start0 = isinstance(s.start, ConstInt) and s.start.value == 0
    step1 = isinstance(s.step, ConstInt) and s.step.value == 1
    if start0 and step1:
        return [pr.expr(s.stop)]
    if step1:
        return [pr.expr(s.start), pr.expr(s.stop)]
    return [pr.expr(s.start), pr.expr(s.stop), pr.expr(s.step)]


def _carried(pr: StmtSink, s: ForStmt | WhileStmt) -> tuple[str, str]:
    inits = [pr.expr(e) for e in s.inits]
    names = [pr.namer.define(ia) for ia in s.iter_args]
    comma = "," if len(names) == 1 else ""
    return f"({', '.join(names)}{comma})", f"init_values=({', '.join(inits)}{comma})"


def _for(pr: StmtSink, s: ForStmt, indent: int, targets: tuple) -> None:
    args = _range_args(pr, s)
    if s.kind is ForKind.Pipeline and "pipeline_stages" in s.attrs:
        args.append(f"stage={s.attrs['pipeline_stages']}")
    shown = [f'"{k}": {s.attrs[k]!r}' for k in sorted(LOOP_ATTRS) if k in s.attrs]
    if shown:
        args.append(f"attrs={{{', '.join(shown)}}}")
    if s.iter_args:
        group, init = _carried(pr, s)
        loop = pr.namer.define(s.loop_var)
        header = f"for {loop}, {group} in {pr.p}.{_LOOP_NAME[s.kind]}({', '.join(args + [init])}):"
    else:
        loop = pr.namer.define(s.loop_var)
        header = f"for {loop} in {pr.p}.{_LOOP_NAME[s.kind]}({', '.join(args)}):"
    pr.emit(indent, header)
    pr.block(s.body, indent + 1, s.return_vars)


def _while(pr: StmtSink, s: WhileStmt, indent: int, targets: tuple) -> None:
    group, init = _carried(pr, s)
    pr.emit(indent, f"for {group} in {pr.p}.while_({init}):")
    pr.emit(indent + 1, f"{pr.p}.cond({pr.expr(s.cond)})")
    pr.block(s.body, indent + 1, s.return_vars)


def _if(pr: StmtSink, s: IfStmt, indent: int, targets: tuple) -> None:
    pr.emit(indent, f"if {pr.expr(s.cond)}:")
    pr.block(s.then_body, indent + 1, s.return_vars)
    if s.else_body is not None:
        pr.emit(indent, "else:")
        pr.block(s.else_body, indent + 1, s.return_vars)


def _kw(pr: StmtSink, key: str, value: Any) -> str:
    return f"{key}={pr.value(value)}"


def _incore(pr: StmtSink, s: InCoreScopeStmt, indent: int, targets: tuple) -> None:
    parts = [f"level={pr.p}.Level.CORE_GROUP"]
    if s.name_hint:
        parts.append(_kw(pr, "name_hint", s.name_hint))
    if s.deps:
        parts.append("deps=[" + ", ".join(pr.expr(d) for d in s.deps) + "]")
    if s.dumps:
        parts.append("dumps=[" + ", ".join(pr.expr(d) for d in s.dumps) + "]")
    parts += [_kw(pr, k, v) for k, v in s.attrs.items()]
    tail = f" as {pr.namer.define(s.task_var)}" if s.task_var is not None else ""
    pr.emit(indent, f"with {pr.p}.at({', '.join(parts)}){tail}:")
    pr.block(s.body, indent + 1)


def _hierarchy(pr: StmtSink, s: HierarchyScopeStmt, indent: int, targets: tuple) -> None:
    parts = [f"level={pr.p}.Level.{s.level.name}"]
    if s.role is not None:
        parts.append(f"role={pr.p}.Role.{s.role.name}")
    if s.name_hint:
        parts.append(_kw(pr, "name_hint", s.name_hint))
    pr.emit(indent, f"with {pr.p}.at({', '.join(parts)}):")
    pr.block(s.body, indent + 1)


def _cluster(pr: StmtSink, s: ClusterScopeStmt, indent: int, targets: tuple) -> None:
    arg = _kw(pr, "name_hint", s.name_hint) if s.name_hint else ""
    pr.emit(indent, f"with {pr.p}.cluster({arg}):")
    pr.block(s.body, indent + 1)


def _spmd(pr: StmtSink, s: SpmdScopeStmt, indent: int, targets: tuple) -> None:
    parts = [pr.expr(s.core_num)]
    if s.sync_start:
        parts.append("sync_start=True")
    if s.name_hint:
        parts.append(_kw(pr, "name_hint", s.name_hint))
    if s.deps:
        parts.append("deps=[" + ", ".join(pr.expr(d) for d in s.deps) + "]")
    if s.predicate is not None:
        parts.append(f"predicate={pr.expr(s.predicate)}")
    tail = f" as {pr.namer.define(s.task_var)}" if s.task_var is not None else ""
    pr.emit(indent, f"with {pr.p}.spmd({', '.join(parts)}){tail}:")
    pr.block(s.body, indent + 1)


def _runtime(pr: StmtSink, s: RuntimeScopeStmt, indent: int, targets: tuple) -> None:
    pr.emit(indent, f"with {pr.p}.{'manual_scope' if s.manual else 'scope'}():")
    pr.block(s.body, indent + 1, targets)  # a loop/branch body wrapped in a scope ends with its yield


STMT_PRINTERS = {
    AssignStmt: _assign, EvalStmt: _eval, ReturnStmt: _return, YieldStmt: _yield, BreakStmt: _simple("break"),
    ContinueStmt: _simple("continue"), SeqStmts: _seq, ForStmt: _for, WhileStmt: _while, IfStmt: _if,
    InCoreScopeStmt: _incore, HierarchyScopeStmt: _hierarchy, ClusterScopeStmt: _cluster,
    RuntimeScopeStmt: _runtime, SpmdScopeStmt: _spmd,
}


def _decorator(pr: StmtSink, f: Function) -> str:
    parts = []
    if f.func_type is not FunctionType.Opaque:
        parts.append(f"type={pr.p}.FunctionType.{f.func_type.name}")
    if f.level is not None:
        parts.append(f"level={pr.p}.Level.{f.level.name}")
    if f.role is not None:
        parts.append(f"role={pr.p}.Role.{f.role.name}")
    if f.attrs.get("auto_scope", True) is False:
        parts.append("auto_scope=False")
    if "external_source" in f.attrs:
        parts.append(_kw(pr, "external_source", f.attrs["external_source"]))
    return f"@{pr.p}.function({', '.join(parts)})" if parts else f"@{pr.p}.function"


def _signature(pr: StmtSink, f: Function, in_class: bool) -> str:
    params = ["self"] if in_class and f.func_type not in INCORE_TYPES else []
    for var, d in zip(f.params, f.param_directions, strict=True):
        t = pr.type(var.var_type)
        wrap = _DIR_WRAP.get(d)
        params.append(f"{pr.namer.define(var)}: {f'{pr.p}.{wrap}[{t}]' if wrap else t}")
    ret = ""
    if len(f.return_types) == 1:
        ret = f" -> {pr.type(f.return_types[0])}"
    elif f.return_types:
        ret = " -> tuple[" + ", ".join(pr.type(t) for t in f.return_types) + "]"
    return f"def {f.name}({', '.join(params)}){ret}:"


def render_function(f: Function, pr: StmtSink, in_class: bool, indent: int) -> None:
    pr.emit(indent, _decorator(pr, f))
    pr.emit(indent, _signature(pr, f, in_class))
    extra = {k: v for k, v in f.attrs.items() if k not in _DECORATOR_ATTRS}
    if extra:
        pr.emit(indent + 1, f"{pr.p}.func_attr({pr.value(extra)})")
    if "external_source" in f.attrs:
        pr.emit(indent + 1, "...")  # signature only: the body is the C++ file
        return
    pr.block(f.body, indent + 1)
