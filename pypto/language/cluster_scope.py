"""``with pl.cluster():``: what its body may hold.

A cluster groups the cube and vector kernels it launches so they run as one group on one physical
cluster; the kernels inside are members of that group, not tasks of their own. So a ``pl.spmd``
inside it cannot name its own task (``as tid``) or carry a dispatch hint (``allow_early_resolve=``),
its block count must be known where the cluster starts, and clusters do not nest.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from pypto.errors import ParserSyntaxError
from pypto.language import dsl

if TYPE_CHECKING:
    from pypto.language.function_parser import FunctionParser


def check_cluster_body(p: FunctionParser, body: list[ast.stmt]) -> None:
    """Raise a located error for a construct a cluster's group cannot carry."""
    assigned = {n.id for s in body for n in ast.walk(s) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    for s in body:
        for node in ast.walk(s):
            if isinstance(node, ast.With):
                for item in node.items:
                    _check_item(p, item, assigned)


def _check_item(p: FunctionParser, item: ast.withitem, assigned: set[str]) -> None:
    c = p._construct(item.context_expr)
    call = item.context_expr
    if c is dsl.cluster:
        raise ParserSyntaxError("`pl.cluster()` cannot be nested inside another `pl.cluster()`: a cluster is "
                                "one physical cluster", p.span(call), hint="remove the inner `with pl.cluster():`")
    if c is not dsl.spmd or not isinstance(call, ast.Call):
        return
    if item.optional_vars is not None:
        raise ParserSyntaxError("`with pl.spmd(...) as tid` cannot be nested inside `pl.cluster()`: the kernels "
                                "of a cluster run as one group, so the spmd dispatch has no task id of its own",
                                p.span(item.optional_vars),
                                hint="move the `with pl.spmd(...) as tid:` out of the cluster")
    for kw in call.keywords:
        if kw.arg == "allow_early_resolve" and not (isinstance(kw.value, ast.Constant) and kw.value.value is False):
            raise ParserSyntaxError("`pl.spmd(..., allow_early_resolve=...)` cannot be nested inside "
                                    "`pl.cluster()`: the cluster's group is dispatched as a whole, so the "
                                    "early-dispatch hint would be lost", p.span(kw.value),
                                    hint="use a `with pl.spmd(...)` outside the cluster to keep the hint")
    count = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "core_num"), None)
    inner = sorted({n.id for n in ast.walk(count) if isinstance(n, ast.Name)} & assigned) if count else []
    if inner:
        raise ParserSyntaxError(f"pl.spmd() block count uses '{inner[0]}', which is computed inside the enclosing "
                                "`pl.cluster()`; the count is needed where the cluster starts", p.span(count),
                                hint=f"compute '{inner[0]}' before `with pl.cluster():`")
