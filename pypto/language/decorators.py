"""``@pl.program``, ``@pl.function`` and ``pl.inline``: read the decorated source and parse it."""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass
from typing import Any

from pypto.ir.enums import FunctionType
from pypto.ir.function import Function, Program
from pypto.language.parser import FuncOptions
from pypto.language.source import Source


@dataclass(frozen=True)
class PendingFunction:
    """A ``@pl.function`` method inside a class body; ``@pl.program`` parses it with its siblings."""

    func: Any
    options: FuncOptions

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError(f"'{self.func.__qualname__}' is a DSL function; decorate its class with @pl.program "
                        "and compile the program")


@dataclass(frozen=True)
class InlineFunction:
    """``pl.inline(f)``: a helper meant to be expanded at each call site."""

    func: Any


def _env(frame: Any, func: Any = None) -> dict[str, Any]:
    """Names visible to a decorated object: module globals, caller locals, closure cells."""
    env: dict[str, Any] = dict(frame.f_globals) if frame is not None else {}
    if func is not None:
        env.update(func.__globals__)
    if frame is not None:
        env.update(frame.f_locals)
    code = getattr(func, "__code__", None)
    if code is not None and func.__closure__:
        for name, cell in zip(code.co_freevars, func.__closure__, strict=True):
            try:
                env[name] = cell.cell_contents
            except ValueError:
                pass
    import pypto.language as pl

    env.setdefault("pl", pl)
    return env


def _in_class(func: Any) -> bool:
    parts = getattr(func, "__qualname__", "").split(".")
    return len(parts) >= 2 and parts[-2] != "<locals>"


def function(func: Any = None, *, type: FunctionType = FunctionType.Opaque, level: Any = None,  # noqa: A002
             role: Any = None, attrs: dict | None = None, auto_scope: bool = True, strict_ssa: bool = False,
             external_source: str | None = None) -> Any:
    """Parse a function into an ``ir.Function`` (methods are parsed by ``@pl.program``)."""
    from pypto.language.programs import options_from_kwargs

    opts = options_from_kwargs({"type": type, "level": level, "role": role, "attrs": attrs,
                                "auto_scope": auto_scope, "strict_ssa": strict_ssa,
                                "external_source": external_source})

    def wrap(f: Any, frame: Any) -> Any:
        if _in_class(f):
            return PendingFunction(f, opts)
        return _parse_function(f, opts, frame)

    if func is None:
        return lambda f: wrap(f, sys._getframe(1))
    return wrap(func, sys._getframe(1))


def _parse_function(f: Any, opts: FuncOptions, frame: Any) -> Function:
    from pypto.language.programs import parse_function

    source = Source.from_object(f)
    tree = source.parse().body[0]
    if not isinstance(tree, ast.FunctionDef):
        raise TypeError("@pl.function can only decorate a 'def'")
    return parse_function(tree, source, _env(frame, f), opts)


def program(cls: Any = None, *, strict_ssa: bool = False) -> Any:
    """Parse a class of ``@pl.function`` methods into an ``ir.Program`` named after the class."""

    def wrap(c: Any, frame: Any) -> Program:
        from pypto.language.programs import parse_class

        source = Source.from_object(c)
        tree = source.parse().body[0]
        if not isinstance(tree, ast.ClassDef):
            raise TypeError("@pl.program can only decorate a class")
        first = next((v for v in vars(c).values() if isinstance(v, PendingFunction)), None)
        env = _env(frame, first.func if first else None)
        return parse_class(tree, source, env, strict_ssa=strict_ssa)

    if cls is None:
        return lambda c: wrap(c, sys._getframe(1))
    return wrap(cls, sys._getframe(1))


def inline(func: Any) -> InlineFunction:
    """Mark a helper for expansion at each call (calls to it are not supported by this frontend yet)."""
    return InlineFunction(func)
