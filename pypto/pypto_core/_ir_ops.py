"""Upstream's per-operator expression classes and helpers, built on pypto's BinaryExpr / UnaryExpr."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pypto.ir.dtypes import DataType
from pypto.ir.expr import BinaryExpr, BinOp, Expr, UnaryExpr, UnOp
from pypto.ir.operators import binary, unary
from pypto.span import Span

_BINARY = {"Add": BinOp.Add, "Sub": BinOp.Sub, "Mul": BinOp.Mul, "FloorDiv": BinOp.FloorDiv,
           "FloorMod": BinOp.FloorMod, "FloatDiv": BinOp.FloatDiv, "Min": BinOp.Min, "Max": BinOp.Max,
           "Pow": BinOp.Pow, "Eq": BinOp.Eq, "Ne": BinOp.Ne, "Lt": BinOp.Lt, "Le": BinOp.Le, "Gt": BinOp.Gt,
           "Ge": BinOp.Ge, "And": BinOp.And, "Or": BinOp.Or, "BitAnd": BinOp.BitAnd, "BitOr": BinOp.BitOr,
           "BitXor": BinOp.BitXor, "BitShiftLeft": BinOp.BitShiftLeft, "BitShiftRight": BinOp.BitShiftRight}
_UNARY = {"Abs": UnOp.Abs, "Neg": UnOp.Neg, "Not": UnOp.Not, "BitNot": UnOp.BitNot, "Cast": UnOp.Cast}


class _OpClass(type):
    """``ir.Add(lhs, rhs, dtype, span)`` builds a BinaryExpr; ``isinstance(e, ir.Add)`` checks its operator."""

    def __instancecheck__(cls, obj: object) -> bool:
        node = cls._node  # type: ignore[attr-defined]
        return isinstance(obj, node) and obj.op is cls._op  # type: ignore[attr-defined]

    def __call__(cls, *args: Any, span: Span | None = None, **kwargs: Any) -> Any:
        if isinstance(args[-1] if args else None, Span):
            *args, span = args  # type: ignore[assignment]
        return cls._node(cls._op, *args, span=span or Span.unknown(), **kwargs)  # type: ignore[attr-defined]


def _classes(table: dict[str, Any], node: type) -> dict[str, type]:
    return {name: _OpClass(name, (), {"_op": op, "_node": node, "__doc__": f"A {node.__name__} with op {op.name}."})
            for name, op in table.items()}


BINARY_CLASSES = _classes(_BINARY, BinaryExpr)
UNARY_CLASSES = _classes(_UNARY, UnaryExpr)


def operator_helpers() -> dict[str, Callable[..., Expr]]:
    """``add(lhs, rhs, span=...)`` & co: the result dtype follows the operands (BOOL for comparisons)."""
    ops = {"add": BinOp.Add, "sub": BinOp.Sub, "mul": BinOp.Mul, "truediv": BinOp.FloatDiv,
           "floordiv": BinOp.FloorDiv, "mod": BinOp.FloorMod, "pow": BinOp.Pow, "eq": BinOp.Eq, "ne": BinOp.Ne,
           "lt": BinOp.Lt, "le": BinOp.Le, "gt": BinOp.Gt, "ge": BinOp.Ge, "bit_and": BinOp.BitAnd,
           "bit_or": BinOp.BitOr, "bit_xor": BinOp.BitXor, "bit_shift_left": BinOp.BitShiftLeft,
           "bit_shift_right": BinOp.BitShiftRight, "and_": BinOp.And, "or_": BinOp.Or, "min_": BinOp.Min,
           "max_": BinOp.Max}
    out: dict[str, Callable[..., Expr]] = {}
    for name, op in ops.items():
        def helper(lhs: Any, rhs: Any, span: Span | None = None, _op: BinOp = op) -> Expr:
            return binary(_op, lhs, rhs, span)
        helper.__name__ = name
        out[name] = helper
    for name, uop in {"neg": UnOp.Neg, "bit_not": UnOp.BitNot, "not_": UnOp.Not}.items():
        def uhelper(operand: Expr, span: Span | None = None, _op: UnOp = uop) -> Expr:
            return unary(_op, operand, DataType.BOOL if _op is UnOp.Not else None, span)
        uhelper.__name__ = name
        out[name] = uhelper

    def cast(operand: Expr, dtype: DataType, span: Span | None = None) -> Expr:
        return unary(UnOp.Cast, operand, dtype, span)

    out["cast"] = cast
    return out
