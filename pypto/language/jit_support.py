"""Entry point for the ``@pl.jit`` specializer: parse one rewritten function with its real spans."""

from __future__ import annotations

import ast
from typing import Any

from pypto.ir.function import Function
from pypto.language.expr_parser import ProgramCtx
from pypto.language.function_parser import FuncOptions, FunctionParser
from pypto.language.source import Source


def parse_jit_function(text: str, *, filename: str, line_offset: int = 0, col_offset: int = 0,
                       env: dict[str, Any] | None = None, program: ProgramCtx | None = None) -> Function:
    """Parse ``text`` (one dedented ``@pl.function``-decorated def) into a Function.

    ``line_offset``/``col_offset`` map the text back to the user's file (first line of the text is
    file line ``line_offset + 1``; ``col_offset`` is the indentation that was removed). ``env``
    holds the names the body may use (module globals, closure values, specialized scalars).
    """
    import pypto.language as pl
    from pypto.language.programs import decorator_options

    source = Source(filename, text, line_offset, col_offset)
    tree = source.parse().body[0]
    if not isinstance(tree, ast.FunctionDef):
        raise TypeError("parse_jit_function expects one 'def'")
    scope_env = dict(env or {})
    scope_env.setdefault("pl", pl)
    opts = decorator_options(tree, source, scope_env) or FuncOptions()
    return FunctionParser(source, scope_env, program).parse(tree, opts)
