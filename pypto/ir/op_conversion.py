"""User rules for ConvertTensorToTileOps: how a ``tensor.*`` op inside an InCore kernel becomes tile ops.

``register_op_conversion("tensor.foo", "tile.foo")`` converts by name (tensor operands are loaded into
Vec tiles first); ``@op_conversion("tensor.foo")`` registers ``fn(ctx, args, kwargs, span) -> Expr``,
which may bind helper values with ``ctx.let(name, value)``. A registered rule takes precedence over
the pass's built-in ones. Rules are process-wide.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pypto.errors import UserError
from pypto.ir.expr import Expr, Var
from pypto.ir.stmt import AssignStmt, Stmt
from pypto.span import Span

Rule = Callable[[list[Expr], list[tuple[str, Any]], Span], "Expr | tuple[list[Stmt], Expr]"]
_SIMPLE: dict[str, str] = {}
_CUSTOM: dict[str, Rule] = {}


class ConversionContext:
    """Collects the statements a conversion rule emits before its result expression."""

    def __init__(self, span: Span) -> None:
        self._stmts: list[Stmt] = []
        self._span = span

    def let(self, name: str, value: Expr) -> Var:
        """Bind ``value`` to a new Var ``name`` (an AssignStmt) and return the Var."""
        var = Var(name, value.type, span=self._span)
        self._stmts.append(AssignStmt(var, value, span=self._span))
        return var

    def emit(self, stmt: Stmt) -> None:
        self._stmts.append(stmt)

    @property
    def stmts(self) -> list[Stmt]:
        return list(self._stmts)


def _check(from_op: str) -> None:
    if not from_op.startswith("tensor."):
        raise UserError(f"op conversions convert tensor ops; '{from_op}' is not a tensor.* op")


def register_op_conversion(from_op: str, to_op: str) -> None:
    """Convert ``from_op`` to ``to_op`` by name (same operands and keywords, tensors loaded as tiles)."""
    _check(from_op)
    _CUSTOM.pop(from_op, None)
    _SIMPLE[from_op] = to_op


def op_conversion(from_op: str) -> Callable[[Callable[..., Expr]], Callable[..., Expr]]:
    """Decorator: ``fn(ctx, args, kwargs, span) -> Expr`` converts calls of ``from_op``."""
    _check(from_op)

    def decorator(func: Callable[..., Expr]) -> Callable[..., Expr]:
        def rule(args: list[Expr], kwargs: list[tuple[str, Any]], span: Span) -> Expr | tuple[list[Stmt], Expr]:
            ctx = ConversionContext(span)
            result = func(ctx, args, kwargs, span)
            return (ctx.stmts, result) if ctx.stmts else result

        _SIMPLE.pop(from_op, None)
        _CUSTOM[from_op] = rule
        return func

    return decorator


def register_rule(from_op: str, rule: Rule) -> None:
    """A raw rule ``rule(args, kwargs_items, span) -> Expr | (stmts, Expr)`` for ``from_op``."""
    _check(from_op)
    _SIMPLE.pop(from_op, None)
    _CUSTOM[from_op] = rule


def lookup_conversion(op: str) -> str | Rule | None:
    """The registered rule for ``op``: a target op name, a custom rule, or None."""
    return _SIMPLE.get(op) or _CUSTOM.get(op)


def unregister_op_conversion(from_op: str) -> None:
    _SIMPLE.pop(from_op, None)
    _CUSTOM.pop(from_op, None)


__all__ = ["ConversionContext", "op_conversion", "register_op_conversion"]
