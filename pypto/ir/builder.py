"""``IRBuilder``: build IR statement by statement with context managers (upstream's builder API).

pypto's IR is immutable, so the builder collects statements in frames and makes each node when its
``with`` block closes: ``with ib.function("f") as f:`` ... gives ``f.get_result()``, a Function.
Spans default to the caller's source line. Misuse (a parameter outside a function, ``else_`` twice,
a return value read before the loop is built) is a ValueError, as upstream's builder raises.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from pypto.ir.enums import ForKind, FunctionType, Level, ParamDirection, Role
from pypto.ir.expr import Expr, GlobalVar, IterArg, MakeTuple, Var
from pypto.ir.function import Function, Program
from pypto.ir.stmt import (
    AssignStmt,
    BreakStmt,
    ContinueStmt,
    EvalStmt,
    ForStmt,
    IfStmt,
    ReturnStmt,
    SeqStmts,
    Stmt,
    WhileStmt,
)
from pypto.ir.types import Type
from pypto.ir.utils import _get_span_or_capture, _normalize_expr
from pypto.span import Span


@dataclass
class _Frame:
    kind: str  # "function" | "for" | "while" | "if" | "program"
    stmts: list[Stmt] = field(default_factory=list)
    else_stmts: list[Stmt] | None = None


def _seq(stmts: list[Stmt], span: Span) -> Stmt:
    return stmts[0] if len(stmts) == 1 else SeqStmts(tuple(stmts), span=span)


class IRBuilder:
    """Builds Functions, loops, ifs and Programs from a sequence of calls (see the module docstring)."""

    def __init__(self) -> None:
        self._frames: list[_Frame] = []

    # ----- frames
    def _top(self, what: str) -> _Frame:
        for frame in reversed(self._frames):
            if frame.kind != "program":
                return frame
        raise ValueError(f"{what} must be inside a function (with ib.function(...))")

    def emit(self, stmt: Stmt) -> None:
        """Append a statement to the innermost open block."""
        frame = self._top("a statement")
        (frame.else_stmts if frame.else_stmts is not None else frame.stmts).append(stmt)

    def in_function(self) -> bool:
        return any(f.kind == "function" for f in self._frames)

    def in_loop(self) -> bool:
        return any(f.kind in ("for", "while") for f in self._frames)

    def in_if(self) -> bool:
        return any(f.kind == "if" for f in self._frames)

    # ----- scopes
    @contextmanager
    def function(self, name: str, span: Span | None = None, type: FunctionType = FunctionType.Opaque,  # noqa: A002
                 level: Level | None = None, role: Role | None = None,
                 attrs: dict[str, Any] | None = None) -> Iterator[FunctionBuilder]:
        sp = _get_span_or_capture(span, frame_offset=2)
        fb = FunctionBuilder(self)
        self._frames.append(_Frame("function"))
        try:
            yield fb
        finally:
            frame = self._frames.pop()
        fb._result = Function(name, tuple(fb._params), tuple(fb._dirs), tuple(fb._returns), _seq(frame.stmts, sp),
                              type, level, role, dict(attrs or {}), span=sp)

    @contextmanager
    def for_loop(self, loop_var: Var, start: int | Expr, stop: int | Expr, step: int | Expr,
                 span: Span | None = None, kind: ForKind = ForKind.Sequential,
                 attrs: dict[str, object] | None = None) -> Iterator[ForLoopBuilder]:
        sp = _get_span_or_capture(span, frame_offset=2)
        lb = ForLoopBuilder(self)
        self._top("a for loop")
        self._frames.append(_Frame("for"))
        try:
            yield lb
        finally:
            frame = self._frames.pop()
        lb._result = ForStmt(loop_var, _normalize_expr(start, sp), _normalize_expr(stop, sp), _normalize_expr(step, sp),
                             _seq(frame.stmts, sp), tuple(lb._iter_args), tuple(lb._return_vars), kind,
                             dict(attrs or {}), inits=tuple(lb._inits), span=sp)
        self.emit(lb._result)

    @contextmanager
    def while_loop(self, condition: int | Expr, span: Span | None = None) -> Iterator[WhileLoopBuilder]:
        sp = _get_span_or_capture(span, frame_offset=2)
        wb = WhileLoopBuilder(self, _normalize_expr(condition, sp))
        self._top("a while loop")
        self._frames.append(_Frame("while"))
        try:
            yield wb
        finally:
            frame = self._frames.pop()
        wb._result = WhileStmt(wb._condition, _seq(frame.stmts, sp), tuple(wb._iter_args), tuple(wb._return_vars),
                               inits=tuple(wb._inits), span=sp)
        self.emit(wb._result)

    @contextmanager
    def if_stmt(self, condition: int | Expr, span: Span | None = None) -> Iterator[IfStmtBuilder]:
        sp = _get_span_or_capture(span, frame_offset=2)
        ib = IfStmtBuilder(self)
        self._top("an if statement")
        frame = _Frame("if")
        ib._frame = frame
        self._frames.append(frame)
        try:
            yield ib
        finally:
            self._frames.pop()
        else_body = None if frame.else_stmts is None else _seq(frame.else_stmts, sp)
        ib._result = IfStmt(_normalize_expr(condition, sp), _seq(frame.stmts, sp), else_body,
                            tuple(ib._return_vars), span=sp)
        self.emit(ib._result)

    @contextmanager
    def program(self, name: str, span: Span | None = None) -> Iterator[ProgramBuilder]:
        sp = _get_span_or_capture(span, frame_offset=2)
        pb = ProgramBuilder(self)
        self._frames.append(_Frame("program"))
        try:
            yield pb
        finally:
            self._frames.pop()
        pb._result = Program(name, tuple(pb._functions), span=sp)

    # ----- statements
    def var(self, name: str, type: Type, span: Span | None = None) -> Var:  # noqa: A002
        return Var(name, type, span=_get_span_or_capture(span))

    def assign(self, var: Var, value: int | float | Expr, span: Span | None = None) -> AssignStmt:
        sp = _get_span_or_capture(span)
        stmt = AssignStmt(var, _normalize_expr(value, sp), span=sp)
        self.emit(stmt)
        return stmt

    def let(self, name: str, value: int | float | Expr, type: Type | None = None,  # noqa: A002
            span: Span | None = None) -> Var:
        """A new Var of ``value``'s type (or ``type``, which must be the same kind), assigned ``value``."""
        sp = _get_span_or_capture(span)
        expr = _normalize_expr(value, sp)
        if type is not None and expr.type.__class__ is not type.__class__:
            raise ValueError(f"let '{name}': type {type.__class__.__name__} does not match the value's "
                             f"{expr.type.__class__.__name__}")
        var = Var(name, type or expr.type, span=sp)
        self.emit(AssignStmt(var, expr, span=sp))
        return var

    def make_tuple(self, values: list[int | float | Expr], span: Span | None = None) -> MakeTuple:
        sp = _get_span_or_capture(span)
        return MakeTuple(tuple(_normalize_expr(v, sp) for v in values), span=sp)

    def return_stmt(self, values: Expr | list[Expr] | None = None, span: Span | None = None) -> ReturnStmt:
        sp = _get_span_or_capture(span)
        vals = [] if values is None else values if isinstance(values, list) else [values]
        stmt = ReturnStmt(tuple(_normalize_expr(v, sp) for v in vals), span=sp)
        self.emit(stmt)
        return stmt

    def eval_stmt(self, expr: Expr, span: Span | None = None) -> EvalStmt:
        stmt = EvalStmt(expr, span=_get_span_or_capture(span))
        self.emit(stmt)
        return stmt

    def break_stmt(self, span: Span | None = None) -> BreakStmt:
        if not self.in_loop():
            raise ValueError("break must be inside a loop")
        stmt = BreakStmt(span=_get_span_or_capture(span))
        self.emit(stmt)
        return stmt

    def continue_stmt(self, span: Span | None = None) -> ContinueStmt:
        if not self.in_loop():
            raise ValueError("continue must be inside a loop")
        stmt = ContinueStmt(span=_get_span_or_capture(span))
        self.emit(stmt)
        return stmt


class _Result:
    _result: Any = None

    def get_result(self) -> Any:
        if self._result is None:
            raise ValueError(f"{type(self).__name__}: the result exists once its with-block has closed")
        return self._result


class FunctionBuilder(_Result):
    """Parameters and return types of the function being built."""

    def __init__(self, builder: IRBuilder) -> None:
        self._builder = builder
        self._params: list[Var] = []
        self._dirs: list[ParamDirection] = []
        self._returns: list[Type] = []

    def param(self, name: str, type: Type, span: Span | None = None,  # noqa: A002
              direction: ParamDirection = ParamDirection.In) -> Var:
        var = Var(name, type, span=_get_span_or_capture(span))
        self._params.append(var)
        self._dirs.append(direction)
        return var

    def return_type(self, type: Type) -> None:  # noqa: A002
        self._returns.append(type)


class _ReturnVars(_Result):
    _return_vars: list[Var]

    def output(self, index: int = 0) -> Var:
        if not 0 <= index < len(self._return_vars):
            raise ValueError(f"output({index}): the statement has {len(self._return_vars)} return values")
        return self._return_vars[index]

    def outputs(self) -> list[Var]:
        return list(self._return_vars)

    def return_var(self, name: str, type: Type | None = None, span: Span | None = None) -> Var:  # noqa: A002
        """A value the statement defines (a loop's final iter-arg, an if's merged value)."""
        carried = getattr(self, "_iter_args", [])
        if type is None:
            if len(carried) <= len(self._return_vars):
                raise ValueError(f"return_var '{name}' needs a type (no iter_arg to take it from)")
            type = carried[len(self._return_vars)].var_type  # noqa: A001
        var = Var(name, type, span=_get_span_or_capture(span))
        self._return_vars.append(var)
        return var


class ForLoopBuilder(_ReturnVars):
    def __init__(self, builder: IRBuilder) -> None:
        self._builder = builder
        self._iter_args: list[IterArg] = []
        self._inits: list[Expr] = []  # the loop's ``inits``, parallel to ``_iter_args``
        self._return_vars: list[Var] = []

    def iter_arg(self, name: str, init_value: int | float | Expr, type: Type | None = None,  # noqa: A002
                 span: Span | None = None) -> IterArg:
        sp = _get_span_or_capture(span)
        init = _normalize_expr(init_value, sp)
        if type is not None and type != init.type:
            raise ValueError(f"iter_arg '{name}': type {type} does not match its initial value's {init.type}")
        arg = IterArg(name, init.type, span=sp)
        self._iter_args.append(arg)
        self._inits.append(init)
        return arg


class WhileLoopBuilder(ForLoopBuilder):
    def __init__(self, builder: IRBuilder, condition: Expr) -> None:
        super().__init__(builder)
        self._condition = condition

    def set_condition(self, condition: int | Expr) -> None:
        """Replace the loop condition (it may read the iter_args declared since)."""
        self._condition = _normalize_expr(condition)


class IfStmtBuilder(_ReturnVars):
    def __init__(self, builder: IRBuilder) -> None:
        self._builder = builder
        self._return_vars: list[Var] = []
        self._frame: _Frame | None = None

    def else_(self, span: Span | None = None) -> None:
        """Statements from here on go to the else branch."""
        if self._frame is None or self._frame.else_stmts is not None:
            raise ValueError("else_() can be called once, inside the if_stmt block")
        self._frame.else_stmts = []


class ProgramBuilder(_Result):
    def __init__(self, builder: IRBuilder) -> None:
        self._builder = builder
        self._declared: dict[str, GlobalVar] = {}
        self._functions: list[Function] = []

    def declare_function(self, name: str) -> GlobalVar:
        """The GlobalVar other functions call ``name`` through (declare before building callers)."""
        return self._declared.setdefault(name, GlobalVar(name))

    def get_global_var(self, name: str) -> GlobalVar:
        if name not in self._declared:
            raise ValueError(f"function '{name}' was not declared (ProgramBuilder.declare_function)")
        return self._declared[name]

    def add_function(self, func: Function) -> None:
        if func.name not in self._declared:
            raise ValueError(f"function '{func.name}' was not declared (ProgramBuilder.declare_function)")
        if any(f.name == func.name for f in self._functions):
            raise ValueError(f"function '{func.name}' was added twice")
        self._functions.append(func)


__all__ = ["ForLoopBuilder", "FunctionBuilder", "IRBuilder", "IfStmtBuilder", "ProgramBuilder", "WhileLoopBuilder"]
