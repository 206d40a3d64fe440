"""Upstream's ``pypto.language.dsl_api``: the control-flow and scope constructs, and the types that
annotate them.

The constructs (``range``, ``at``, ``spmd``, ...) are pl's own objects: the frontend recognises them
inside a ``@pl.function`` body, which is parsed and never executed; called as plain Python they raise
a UserError saying so. ``RangeIterator`` / ``WhileIterator`` iterate like upstream's when driven by
hand; the ``*Context`` classes record a scope's arguments, and entering one outside a DSL body raises.
"""

from __future__ import annotations

from typing import Any, Generic, TypeVar, Union

from pypto.errors import UserError
from pypto.ir.expr import Expr
from pypto.language.dsl import (
    at,
    cluster,
    cond,
    const,
    parallel,
    range,  # noqa: A004
    spmd,
    static_assert,
    static_print,
    unroll,
    while_,
    yield_,
)
from pypto.language.unsupported import lookup

RangeArg = Union[int, Expr]  # noqa: UP007 (a runtime alias, as upstream's)
CondArg = Union[bool, Expr]  # noqa: UP007
T = TypeVar("T")
W = TypeVar("W")

split_aiv = lookup("pl", "split_aiv")


class RangeIterator(Generic[T]):
    """``start, start+step, ... < stop``; with ``init_values`` each item is ``(i, init_values)``."""

    def __init__(self, stop: Any, start: Any = 0, step: Any = 1, init_values: tuple[Any, ...] | None = None,
                 pipeline_stages: int | None = None) -> None:
        self.start, self.stop, self.step = start, stop, step
        self.init_values = tuple(init_values or ())
        self.pipeline_stages = pipeline_stages
        self.current = start

    def __iter__(self) -> RangeIterator[T]:
        return self

    def __next__(self) -> Any:
        if self.current >= self.stop:
            raise StopIteration
        value = self.current
        self.current += self.step
        return (value, self.init_values) if self.init_values else value


class WhileIterator(Generic[W]):
    """Yields ``init_values`` once (the frontend, not Python, runs the loop); they are required."""

    def __init__(self, *, init_values: tuple[Any, ...] | None = None) -> None:
        if init_values is None:
            raise ValueError("while_() requires init_values to be specified")
        self.init_values = tuple(init_values)
        self._done = False

    def __iter__(self) -> WhileIterator[W]:
        return self

    def __next__(self) -> tuple[Any, ...]:
        if self._done:
            raise StopIteration
        self._done = True
        return self.init_values


class _ScopeContext:
    """The arguments of a scope construct; ``with`` on it outside a DSL body is a UserError."""

    construct = ""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.args = args
        self.kwargs = kwargs

    def __enter__(self) -> Any:
        raise UserError(f"pl.{self.construct}(...) can only be used in a with-statement inside a @pl.function body "
                        "(function bodies are parsed, not executed)")

    def __exit__(self, *exc: object) -> None:
        return None


class AtContext(_ScopeContext):
    """``with pl.at(level, role, ...)``: an InCore region (CORE_GROUP) or a hierarchy scope."""

    construct = "at"


class ClusterContext(_ScopeContext):
    """``with pl.cluster()``: co-scheduled cube and vector kernels, outlined into a Group function."""

    construct = "cluster"


class SpmdContext(_ScopeContext):
    """``with pl.spmd(n)`` / ``for i in pl.spmd(n)``: one task launched as ``n`` blocks."""

    construct = "spmd"

    def __iter__(self) -> Any:
        return self.__enter__()


class SplitAivContext(_ScopeContext):
    """``for lane in pl.split_aiv(2, mode=...)``: not expressible with ptoas 0.1.1 (no cross-core pipes)."""

    construct = "split_aiv"

    def __iter__(self) -> Any:
        raise split_aiv.error()


__all__ = [
    "AtContext", "ClusterContext", "CondArg", "RangeArg", "RangeIterator", "SplitAivContext", "SpmdContext",
    "WhileIterator", "at", "cluster", "cond", "const", "parallel", "range", "split_aiv", "spmd", "static_assert",
    "static_print", "unroll", "while_", "yield_",
]
