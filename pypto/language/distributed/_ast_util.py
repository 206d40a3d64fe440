"""Small AST builders and constant readers shared by the comm split."""

from __future__ import annotations

import ast
from typing import Any


class Subst(ast.NodeTransformer):
    """A loop variable replaced by one step's value."""

    def __init__(self, name: str, value: int) -> None:
        self.name = name
        self.value = value

    def visit_Name(self, node: ast.Name) -> ast.expr:
        return ast.copy_location(ast.Constant(self.value), node) if node.id == self.name else node


def static_int(node: ast.expr, env: dict[str, Any]) -> int | None:
    try:
        value = eval(compile(ast.Expression(node), "<bound>", "eval"), env)  # noqa: S307 - the kernel's own bound
    except Exception:  # noqa: BLE001 - not a constant
        return None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def static_list(node: ast.expr, env: dict[str, Any], default: list[Any]) -> list[Any]:
    try:
        value = eval(compile(ast.Expression(node), "<shape>", "eval"), env)  # noqa: S307 - the kernel's own literal
        return [int(v) for v in value]
    except Exception:  # noqa: BLE001 - not a static list: the window's shape
        return default


def name(n: str) -> ast.Name:
    return ast.Name(n, ast.Load())


def attr(*parts: str) -> ast.expr:
    node: ast.expr = ast.Name(parts[0], ast.Load())
    for p in parts[1:]:
        node = ast.Attribute(node, p, ast.Load())
    return node


def call(func: ast.expr, args: list[ast.expr], keywords: list[ast.keyword]) -> ast.Call:
    return ast.Call(func=func, args=args, keywords=keywords)


def assign(target: str, value: ast.expr) -> ast.Assign:
    return ast.Assign(targets=[ast.Name(target, ast.Store())], value=value)


def values(items: list[Any]) -> ast.List:
    return ast.List([ast.Constant(v) for v in items], ast.Load())


def zeros(n: int) -> ast.List:
    return values([0] * n)


def resolve(node: ast.expr, env: dict[str, Any]) -> Any:
    if isinstance(node, ast.Name):
        return env.get(node.id)
    if isinstance(node, ast.Attribute):
        base = resolve(node.value, env)
        return None if base is None else getattr(base, node.attr, None)
    return None
