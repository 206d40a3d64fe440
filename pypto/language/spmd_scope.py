"""``pl.spmd``: ``for i in pl.spmd(n):`` and ``with pl.spmd(n[, deps=...]) [as tid]:``.

Both build a :class:`SpmdScopeStmt` (one task launched as ``n`` blocks). Its body is one InCore region
(the loop form and an inline ``with`` body, which read the block index) or a dispatch of one kernel
(``out = self.kernel(...)``). OutlineIncoreScopes later folds the scope into the launched call.
"""

from __future__ import annotations

import ast
import dataclasses
from typing import TYPE_CHECKING, Any

from pypto.errors import ParserSyntaxError, ParserTypeError, UnsupportedFeatureError
from pypto.ir.dtypes import DataType
from pypto.ir.expr import Call, Expr, Var, as_int
from pypto.ir.ops.common import SPMD_IDS
from pypto.ir.ops.registry import make_call
from pypto.ir.stmt import AssignStmt, InCoreScopeStmt, SpmdScopeStmt, Stmt, first_program_call, flatten, seq
from pypto.ir.types import ScalarType
from pypto.ir.visitor import IRVisitor
from pypto.language.submit_call import predicate_expr
from pypto.span import Span

if TYPE_CHECKING:
    from pypto.language.function_parser import FunctionParser

_INCORE_KEYS = ("optimizations", "allow_early_resolve")
_BLOCK_ID_OPS = frozenset(f"{ns}.{op}" for ns in ("tile", "tensor") for op in SPMD_IDS)


class _Header:
    """The evaluated arguments of one ``pl.spmd(...)`` call."""

    def __init__(self, p: FunctionParser, call: ast.expr) -> None:
        assert isinstance(call, ast.Call)
        self.span = span = p.span(call)
        args, kwargs = p.ev.call_args(call)
        if "core_num" in kwargs and not args:  # pl.spmd(core_num=4)
            args = [kwargs.pop("core_num")]
            node = next(k.value for k in call.keywords if k.arg == "core_num")
        else:
            node = call.args[0] if call.args else call
        if len(args) != 1:
            raise ParserTypeError(f"pl.spmd() takes the block count (core_num) as its first argument, got "
                                  f"{len(args)} arguments", span, hint="e.g. pl.spmd(4)")
        self.core_num = _core_num(p, args[0], node)
        self.sync_start = bool(kwargs.pop("sync_start", False))
        self.name_hint = kwargs.pop("name_hint", "") or ""
        self.deps = tuple(p.ev.to_expr(d, span) for d in (kwargs.pop("deps", None) or []))
        self.incore_attrs = {k: kwargs.pop(k) for k in _INCORE_KEYS if k in kwargs}
        pred = kwargs.pop("predicate", None)
        self.predicate = predicate_expr(p.ev, "pl.spmd", pred, span) if pred is not None else None
        if kwargs:
            raise ParserTypeError(f"pl.spmd() got an unexpected keyword argument '{next(iter(kwargs))}'", span)
        if not isinstance(self.name_hint, str):
            raise ParserTypeError("pl.spmd(name_hint=...) takes a string", span)
        if self.name_hint:
            from pypto.artifact.names import check_symbol

            check_symbol(self.name_hint, "pl.spmd(name_hint=...)", span, error=ParserSyntaxError)


def _core_num(p: FunctionParser, value: Any, node: ast.expr) -> Expr:
    span = p.span(node)
    if isinstance(value, bool) or isinstance(value, float):
        raise ParserTypeError(f"pl.spmd() block count must be a positive integer, got {value!r}", span)
    e = p.ev.to_expr(value, span, node)
    n = as_int(e)
    if n is not None and n <= 0:
        raise ParserTypeError(f"pl.spmd() block count must be a positive integer, got {n}", span)
    t = e.type
    if not isinstance(t, ScalarType) or t.dtype.is_float:
        raise ParserTypeError(f"pl.spmd() block count '{ast.unparse(node)}' must be an integer", span)
    return e


def parse_spmd_for(p: FunctionParser, node: ast.For) -> list[Stmt]:
    """``for i in pl.spmd(n):``: the body becomes one InCore region with ``i = tile.get_block_idx()``."""
    h = _Header(p, node.iter)
    if h.deps or h.predicate is not None:
        raise ParserTypeError(f"{'deps=' if h.deps else 'predicate='} is only accepted by the "
                              "`with pl.spmd(n, deps=[...]) as tid:` form", h.span)
    if not isinstance(node.target, ast.Name):
        raise ParserTypeError("the pl.spmd() loop target must be a single name (the block index)",
                              p.span(node.target))
    if node.orelse:
        raise UnsupportedFeatureError("for-else is not supported", p.span(node))
    idx = Var(node.target.id, ScalarType(DataType.INDEX), span=p.span(node.target))
    p.scope.bind(idx.name, idx, idx.span)
    body = [x for s in p.body(node.body, node.lineno) for x in flatten(s)]
    bind = AssignStmt(idx, make_call("tile.get_block_idx", [], span=idx.span), span=idx.span)
    if len(body) == 1 and isinstance(body[0], InCoreScopeStmt):  # the body is already one pl.at region
        if h.incore_attrs or h.name_hint:
            raise ParserTypeError("with a pl.at(...) body, put name_hint=/optimizations= on the pl.at(...) "
                                  "line, not on pl.spmd(...)", h.span)
        region = body[0]
        incore = dataclasses.replace(region, body=seq([bind, *flatten(region.body)], region.span))
    elif any(isinstance(s, InCoreScopeStmt) for x in body for s in _walk(x)):
        raise ParserSyntaxError("the body of `for i in pl.spmd(n)` is one kernel: it cannot contain a pl.at(...) "
                                "region next to other statements", h.span,
                                hint="drop the pl.at(...) (the loop body is outlined as one InCore kernel)")
    else:
        incore = InCoreScopeStmt(seq([bind, *body], h.span), h.name_hint, (), None, h.incore_attrs, span=h.span)
    return [SpmdScopeStmt(incore, h.core_num, h.sync_start, span=h.span)]


def _walk(s: Stmt):
    yield s
    for child in (getattr(s, "body", None), getattr(s, "then_body", None), getattr(s, "else_body", None)):
        if isinstance(child, Stmt):
            for x in flatten(child):
                yield from _walk(x)


def parse_spmd_with(p: FunctionParser, item: ast.withitem, body: list[Stmt], span: Span) -> list[Stmt]:
    """``with pl.spmd(n[, deps=...]) [as tid]:`` over an InCore region, an inline body or one dispatch."""
    h = _Header(p, item.context_expr)
    task = None
    if item.optional_vars is not None:
        if not isinstance(item.optional_vars, ast.Name):
            raise ParserTypeError("'as' needs a single name", p.span(item.optional_vars))
        task = Var(item.optional_vars.id, ScalarType(DataType.TASK_ID), span=p.span(item.optional_vars))
        p.scope.bind(task.name, task, task.span)
    elif h.deps:
        raise ParserTypeError("pl.spmd(deps=[...]) needs the `as tid` form", span,
                              hint="write `with pl.spmd(n, deps=[...]) as tid:`")
    stmts = [s for s in body for s in flatten(s)]
    if len(stmts) == 1 and isinstance(stmts[0], InCoreScopeStmt):
        if h.incore_attrs:
            raise ParserTypeError("with a pl.at(...) body, put optimizations=/allow_early_resolve= on the "
                                  "pl.at(...) line, not on pl.spmd(...)", span)
        inner: Stmt = stmts[0]
    elif _reads_block_id(stmts):
        inner = InCoreScopeStmt(seq(stmts, span), h.name_hint, (), None, h.incore_attrs, span=span)
    elif first_program_call(stmts) is not None:
        inner = seq(stmts, span)
    else:
        raise ParserSyntaxError("a `with pl.spmd(n):` body must dispatch a kernel (self.kernel(...)) or read "
                                "the block index; otherwise every block would do identical work", span,
                                hint="read pl.tile.get_block_idx(), or call a kernel")
    hint = "" if isinstance(inner, InCoreScopeStmt) else h.name_hint
    pre: list[Stmt] = []
    pred = h.predicate
    if pred is not None and not isinstance(pred, Var):  # evaluated once, before the dispatch (a tensor
        var = Var("predicate", pred.type, span=pred.span)  # read in it becomes an orchestration statement)
        pre, pred = [AssignStmt(var, pred, span=pred.span)], var
    return [*pre, SpmdScopeStmt(inner, h.core_num, h.sync_start, hint, h.deps, task, pred, span=span)]


def _reads_block_id(stmts: list[Stmt]) -> bool:
    found: list[Call] = []

    class _Scan(IRVisitor):
        def visit_Call(self, c: Call) -> None:  # noqa: N802
            if c.op in _BLOCK_ID_OPS:
                found.append(c)
            self.generic_visit(c)

    for s in stmts:
        _Scan().visit(s)
    return bool(found)
