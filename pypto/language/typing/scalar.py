"""``pl.Scalar[dtype]`` and predicate helpers.

``BoolLike`` is pl's stand-in like ``pl.IntLike`` (pypto annotates with concrete types);
``predicate_to_expr`` turns a Python bool into an IR boolean constant and passes an Expr through.
"""

from __future__ import annotations

from pypto.ir.expr import ConstBool, Expr
from pypto.language.types import Scalar
from pypto.language.unsupported import Unsupported
from pypto.span import Span

BoolLike = Unsupported("pypto.language.typing.BoolLike", "typing")


def predicate_to_expr(value: bool | Expr | None, span: Span | None = None) -> Expr | None:
    """None stays None; a bool becomes ``ConstBool``; an Expr (or a DSL value wrapping one) is returned."""
    if value is None:
        return None
    if isinstance(value, bool):
        return ConstBool(value, span=span or Span.unknown())
    var = getattr(value, "var", value)
    if not isinstance(var, Expr):
        raise TypeError(f"a predicate must be a bool or an IR expression, got {type(value).__name__}")
    return var


class RuntimeScalarMarker:
    """The type of ``pl.RUNTIME``: as a scalar argument of a signature-mode compile it keeps that parameter
    a runtime value of the compiled program instead of a specialized constant. Use the ``RUNTIME`` singleton."""

    def __repr__(self) -> str:
        return "pl.RUNTIME"


RUNTIME = RuntimeScalarMarker()

__all__ = ["RUNTIME", "BoolLike", "RuntimeScalarMarker", "Scalar", "predicate_to_expr"]
