"""``pld.CommCtx``: the handle ``pld.get_comm_ctx(window)`` gives a kernel, read by ``pld.rank`` / ``pld.nranks``.

``CommCtx()`` is an annotation placeholder; ``CommCtx(expr=e)`` wraps the IR expression of a handle.
``CommCtxType`` is the (singleton) IR type of such a handle.
"""

from __future__ import annotations

from dataclasses import dataclass

from pypto.ir.expr import Expr
from pypto.ir.types import Type


@dataclass(frozen=True, slots=True)
class CommCtxType(Type):
    """The type of a communication-context handle; all instances are equal, ``get()`` is the shared one."""

    @staticmethod
    def get() -> CommCtxType:
        return _SHARED


_SHARED = CommCtxType()


class CommCtx:
    """A communication-context handle in a kernel (or, without ``expr``, an annotation placeholder)."""

    def __init__(self, *, expr: Expr | None = None) -> None:
        self._expr = expr

    def unwrap(self) -> Expr:
        """The wrapped expression; a placeholder has none (RuntimeError)."""
        if self._expr is None:
            raise RuntimeError("CommCtx() is an annotation placeholder and wraps no expression")
        return self._expr

    def __repr__(self) -> str:
        return "CommCtx()" if self._expr is None else f"CommCtx(expr={self._expr!r})"


__all__ = ["CommCtx", "CommCtxType"]
