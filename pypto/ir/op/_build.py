"""``ir.op.<namespace>.<name>(*operands, span=None, **keywords)``: a typed registry Call."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pypto.ir.expr import Call, Expr, MakeTuple, const
from pypto.ir.ops.registry import all_ops, get_op, has_op, make_call
from pypto.span import Span


def operand(value: Any) -> Expr:
    """Python numbers / bools -> constants, sequences -> MakeTuple, Exprs unchanged."""
    if isinstance(value, Expr):
        return value
    if isinstance(value, (list, tuple)):
        return MakeTuple(tuple(operand(v) for v in value))
    if isinstance(value, (bool, int, float)):
        return const(value)
    raise TypeError(f"cannot use {value!r} as an IR operand")


def builder(full_name: str) -> Callable[..., Call]:
    opdef = get_op(full_name)

    def build(*args: Any, span: Span | None = None, **kwargs: Any) -> Call:
        n = len(opdef.args)
        extra = args[n:]
        names = opdef.positional_kwargs or tuple(opdef.kwargs)
        if len(extra) > len(names):
            raise TypeError(f"{full_name}() takes at most {n + len(names)} positional arguments")
        kwargs.update(zip(names, extra, strict=False))
        return make_call(full_name, [operand(a) for a in args[:n]], kwargs, span=span)

    build.__name__ = opdef.short
    build.__qualname__ = full_name
    build.__doc__ = opdef.doc or f"Build a ``{full_name}`` call; operands: {', '.join(opdef.args) or 'none'}."
    return build


def lookup(namespace: str, name: str, module: str) -> Callable[..., Call]:
    if name.startswith("__") or not has_op(f"{namespace}.{name}"):
        raise AttributeError(f"module '{module}' has no attribute '{name}'")
    return builder(f"{namespace}.{name}")


def names(namespace: str) -> list[str]:
    return sorted(o.short for o in all_ops().values() if o.namespace == namespace)
