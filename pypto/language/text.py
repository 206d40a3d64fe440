"""``pl.parse`` / ``pl.loads``: the DSL frontend run on text (printed dumps or user code), never exec'd."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

from pypto.errors import UnsupportedFeatureError
from pypto.ir.function import Function, Program
from pypto.language.bindings import Scope
from pypto.language.expr_parser import ExprParser
from pypto.language.function_parser import FuncOptions
from pypto.language.source import Source


def _module_env(tree: ast.Module, source: Source, env: dict[str, Any]) -> None:
    """Bind ``import pypto.language as X`` aliases and ``M = pl.dynamic("M")`` lines."""
    import pypto.language as pl

    ev = ExprParser(source, env, Scope(), text_mode=True)
    for node in tree.body:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "pypto.language":
                    env[alias.asname or "pypto"] = pl if alias.asname else __import__("pypto")
        elif isinstance(node, ast.ImportFrom) and node.module == "pypto":
            for alias in node.names:
                if alias.name == "language":
                    env[alias.asname or "language"] = pl
        elif isinstance(node, ast.Assign) and len(node.targets) == 1:
            _bind(node.targets[0], node.value, ev, env)
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            _bind(node.target, node.value, ev, env)


def _bind(target: ast.expr, value: ast.expr, ev: ExprParser, env: dict[str, Any]) -> None:
    """``N = 64`` and the unpacking forms ``M, N = 16, 64`` / ``M, N = SHAPE`` (a tuple or list of that length)."""
    if isinstance(target, ast.Name):
        env[target.id] = ev.eval(value)
        return
    if not isinstance(target, (ast.Tuple, ast.List)) or not all(isinstance(e, ast.Name) for e in target.elts):
        return
    names = [e.id for e in target.elts if isinstance(e, ast.Name)]
    if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(names):
        values = [ev.eval(v) for v in value.elts]
    else:
        packed = ev.eval(value)
        if not isinstance(packed, (tuple, list)) or len(packed) != len(names):
            return
        values = list(packed)
    env.update(zip(names, values, strict=True))


def _is_decorated(node: ast.AST, name: str) -> bool:
    decs = getattr(node, "decorator_list", [])
    for d in decs:
        target = d.func if isinstance(d, ast.Call) else d
        if (isinstance(target, ast.Attribute) and target.attr == name) or \
                (isinstance(target, ast.Name) and target.id == name):
            return True
    return False


def parse(code: str, filename: str = "<string>", env: dict[str, Any] | None = None) -> Program | Function:
    """Parse DSL text holding exactly one ``@pl.program`` class or one ``@pl.function``."""
    import pypto.language as pl
    from pypto.language.programs import decorator_options, parse_class, parse_function

    source = Source(filename, code, embed_text=True)
    tree = source.parse()
    scope_env: dict[str, Any] = {"pl": pl, **(env or {})}
    _module_env(tree, source, scope_env)
    items = [n for n in tree.body if (isinstance(n, ast.ClassDef) and _is_decorated(n, "program"))
             or (isinstance(n, ast.FunctionDef) and _is_decorated(n, "function"))]
    if len(items) != 1:
        raise ValueError(f"pl.parse: expected exactly one @pl.program or @pl.function in {filename}, "
                         f"found {len(items)}")
    node = items[0]
    if isinstance(node, ast.ClassDef):
        strict = _program_strict(node, source, scope_env)
        return parse_class(node, source, scope_env, strict_ssa=strict, text_mode=True)
    assert isinstance(node, ast.FunctionDef)
    opts = decorator_options(node, source, scope_env) or FuncOptions()
    return parse_function(node, source, scope_env, opts, text_mode=True)


def _program_strict(node: ast.ClassDef, source: Source, env: dict[str, Any]) -> bool:
    for d in node.decorator_list:
        if isinstance(d, ast.Call):
            for kw in d.keywords:
                if kw.arg == "strict_ssa":
                    return bool(ExprParser(source, env, Scope()).eval(kw.value))
                raise UnsupportedFeatureError(f"@pl.program() got an unexpected keyword '{kw.arg}'", source.span(kw))
    return False


def loads(path: str | Path) -> Program | Function:
    """``pl.parse`` of a file (FileNotFoundError when it does not exist)."""
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"pl.loads: no such file: {p}")
    return parse(p.read_text(encoding="utf-8"), filename=str(p))


def parse_program(code: str, filename: str = "<string>") -> Program:
    """Like :func:`parse` but the text must hold a ``@pl.program``."""
    out = parse(code, filename)
    if not isinstance(out, Program):
        raise ValueError(f"pl.parse_program: {filename} holds a @pl.function, not a @pl.program")
    return out


def loads_program(path: str | Path) -> Program:
    """Like :func:`loads` but the file must hold a ``@pl.program``."""
    out = loads(path)
    if not isinstance(out, Program):
        raise ValueError(f"pl.loads_program: {path} holds a @pl.function, not a @pl.program")
    return out
