"""Upstream's ``pypto_core.ir`` helper functions, over pypto's IR utilities."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pypto.ir.enums import INCORE_TYPES, FunctionType
from pypto.ir.expr import Call, Expr, Var
from pypto.ir.stmt import AssignStmt, Stmt, YieldStmt, flatten, preorder
from pypto.ir.types import Type
from pypto.span import Span


def create_op_call(op_name: str, args: Sequence[Expr], kwargs: Mapping[str, Any] | Span | None = None,
                   span: Span | None = None) -> Call:
    """A typed Call of a registered op: ``(name, args, span)`` or ``(name, args, kwargs, span)``."""
    from pypto.ir.ops.registry import make_call

    if isinstance(kwargs, Span):
        kwargs, span = None, kwargs
    return make_call(op_name, list(args), dict(kwargs or {}), span=span)


def is_incore_type(func_type: FunctionType) -> bool:
    """InCore, AIC or AIV."""
    return func_type in INCORE_TYPES


def has_op_conversion(op_name: str) -> bool:
    """Whether a user conversion rule (``ir.register_op_conversion`` & co) exists for ``op_name``."""
    from pypto.ir.op_conversion import lookup_conversion

    return lookup_conversion(op_name) is not None


def register_op_conversion_custom(from_op: str, func: Any) -> None:
    """``func(args, kwargs_items, span) -> Expr | (stmts, Expr)`` converts ``from_op``."""
    from pypto.ir.op_conversion import register_rule

    register_rule(from_op, func)


def python_print_type(type: Type, prefix: str = "pl", format: bool = True,  # noqa: A002
                      explicit_layout: bool = False) -> str:
    """A type as the printer writes it in annotations (``pl.Tensor[[16, 16], pl.FP32]``)."""
    from pypto.ir.printer import Printer

    return Printer(prefix).type(type)


def flatten_to_stmts(stmt: Stmt) -> list[Stmt]:
    """The children of a SeqStmts (nested ones expanded), or ``[stmt]``."""
    return flatten(stmt)


def collect_def_vars(stmt: Stmt) -> list[Var]:
    """The Vars assigned anywhere in ``stmt`` (AssignStmt targets), in pre-order."""
    return [s.var for s in preorder(stmt) if isinstance(s, AssignStmt)]


def find_yield_stmt(body: Stmt) -> YieldStmt | None:
    """The first YieldStmt among the body's statements (through SeqStmts, not into nested loops/ifs)."""
    return next((s for s in flatten(body) if isinstance(s, YieldStmt)), None)


def get_last_yield_stmt(body: Stmt) -> YieldStmt | None:
    """The body's last statement when it is a YieldStmt."""
    stmts = flatten(body)
    return stmts[-1] if stmts and isinstance(stmts[-1], YieldStmt) else None


def substitute_expr(expr: Expr, var_map: Sequence[tuple[Var, Expr]]) -> Expr:
    """``expr`` with each original Var replaced by its replacement."""
    from pypto.ir.visitor import substitute

    return substitute(expr, dict(var_map))


def substitute_stmt(body: Stmt, var_map: Sequence[tuple[Var, Expr]]) -> Stmt:
    """``body`` with each original Var's uses replaced by its replacement."""
    from pypto.ir.visitor import substitute

    return substitute(body, dict(var_map))
