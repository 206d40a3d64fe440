"""``[f(i) for i in range(...)]`` in a DSL body: unrolled at parse time into a Python list.

The comprehension must have one ``for`` over ``range(...)`` (or a list/tuple) with compile-time
integer bounds; its ``if`` clauses must fold to Python booleans. The loop name is bound to each
constant in turn while the element is parsed, so ``deps=[tids[i] for i in range(N)]`` becomes
``deps=[tids[0], ..., tids[N - 1]]``.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Any

from pypto.errors import ParserTypeError, UnsupportedFeatureError

if TYPE_CHECKING:
    from pypto.language.expr_parser import ExprParser

_HINT = "write [... for i in range(N)] with N a compile-time integer, or list the elements"


def unroll_list_comp(ev: ExprParser, node: ast.ListComp) -> list[Any]:
    """The elements of ``node``, each parsed with the loop name bound to a Python int."""
    if len(node.generators) != 1:
        raise UnsupportedFeatureError("list comprehensions with more than one 'for' are not supported in DSL "
                                      "functions", ev.span(node), hint=_HINT)
    gen = node.generators[0]
    if not isinstance(gen.target, ast.Name) or gen.is_async:
        raise UnsupportedFeatureError("a list comprehension in a DSL function binds one plain name",
                                      ev.span(gen.target), hint=_HINT)
    out: list[Any] = []
    for value in _static_items(ev, gen.iter):
        with ev.bound_constant(gen.target.id, value):
            if all(_static_cond(ev, c) for c in gen.ifs):
                out.append(ev.eval(node.elt))
    return out


def _static_items(ev: ExprParser, node: ast.expr) -> list[Any]:
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "range"
            and not node.keywords and 1 <= len(node.args) <= 3):
        bounds = [ev.eval(a) for a in node.args]
        if all(isinstance(b, int) and not isinstance(b, bool) for b in bounds):
            return list(range(*bounds))
    else:
        items = ev.eval(node)
        if isinstance(items, (list, tuple)):
            return list(items)
    raise ParserTypeError(f"the list comprehension iterates over '{ast.unparse(node)}', which is not known at "
                          "compile time", ev.span(node), hint=_HINT)


def _static_cond(ev: ExprParser, node: ast.expr) -> bool:
    value = ev.eval(node)
    if not isinstance(value, (bool, int)):
        raise ParserTypeError(f"the list comprehension condition '{ast.unparse(node)}' is not known at compile "
                              "time", ev.span(node), hint="filter with a condition on the loop name and constants")
    return bool(value)
