"""``@pl.program``, ``@pl.function`` and ``pl.inline``: read the decorated source and parse it."""

from __future__ import annotations

import ast
import os
import sys
from dataclasses import dataclass
from typing import Any

from pypto.ir.enums import FunctionType
from pypto.ir.function import Function, Program
from pypto.language.function_parser import FuncOptions
from pypto.language.source import Source


@dataclass(frozen=True)
class PendingFunction:
    """A ``@pl.function`` method inside a class body; ``@pl.program`` parses it with its siblings."""

    func: Any
    options: FuncOptions

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError(f"'{self.func.__qualname__}' is a DSL function; decorate its class with @pl.program "
                        "and compile the program")


@dataclass(frozen=True, eq=False)
class InlineFunction:
    """``pl.inline(f)``: a helper expanded at each call site.

    A call to it inside a DSL function adds the helper to the program as a
    ``FunctionType.Inline`` function (parsed from its source, with its annotations); the
    InlineFunctions pass splices its body into every call site and deletes it.
    """

    func: Any

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError(f"'{self.func.__qualname__}' is a pl.inline helper; call it from a DSL function")

    def ir_function(self) -> Function:
        """The helper as an Inline ir.Function (parsed once)."""
        cached = _INLINE_CACHE.get(id(self))
        if cached is not None and cached[0] is self:
            return cached[1]
        from pypto.language.programs import parse_function

        source = Source.from_object(self.func)
        tree = source.parse().body[0]
        if not isinstance(tree, ast.FunctionDef):
            raise TypeError("pl.inline expects a plain 'def' function")
        tree.decorator_list = []
        func = parse_function(tree, source, _env(None, self.func), FuncOptions(func_type=FunctionType.Inline))
        _INLINE_CACHE[id(self)] = (self, func)
        return func


_INLINE_CACHE: dict[int, tuple[InlineFunction, Function]] = {}


def _inline_call(parser: Any, target: InlineFunction, node: ast.Call, span: Any) -> Any:
    return parser._external_call(target.ir_function(), node, span)


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
             external_source: str | os.PathLike[str] | None = None) -> Any:
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
    from pypto.toolchain.gc_headroom import gc_headroom

    with gc_headroom():  # the parse, like a compile, makes many short-lived acyclic objects
        source = Source.from_object(f)
        tree = source.parse().body[0]
        if not isinstance(tree, ast.FunctionDef):
            raise TypeError("@pl.function can only decorate a 'def'")
        return parse_function(tree, source, _env(frame, f), opts)


def program(cls: Any = None, *, strict_ssa: bool = False) -> Any:
    """Parse a class of ``@pl.function`` methods into an ``ir.Program`` named after the class."""

    def wrap(c: Any, frame: Any) -> Program:
        from pypto.language.programs import parse_class
        from pypto.toolchain.gc_headroom import gc_headroom

        with gc_headroom():  # the parse, like a compile, makes many short-lived acyclic objects
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
    """Mark a helper for expansion at each call site (see :class:`InlineFunction`)."""
    from pypto.language.expr_parser import register_call_handler

    register_call_handler(InlineFunction, _inline_call)
    return InlineFunction(func)
