"""``pl.submit(self.kernel, *args, deps=[...])``, ``pl.spmd_submit(..., core_num=N, sync_start=...)``
and ``pl.system.task_dummy(deps=[...])``.

Both are the kernel call itself with launch attributes, typed ``tuple[<kernel results>..., TASK_ID]``:
the last item is the producer task id (``out, tid = pl.submit(...)``, or ``r = pl.submit(...)`` and
``r[i]``). The printer writes them back as an annotated ``self.kernel(..., attrs={...})`` call.
"""

from __future__ import annotations

import ast
import dataclasses
from typing import TYPE_CHECKING, Any

from pypto.errors import ParserTypeError
from pypto.ir.dtypes import DataType
from pypto.ir.expr import Call, Expr, GlobalVar, MakeTuple, as_int
from pypto.ir.types import ScalarType, TupleType, UnknownType
from pypto.span import Span

if TYPE_CHECKING:
    from pypto.language.expr_parser import ExprParser

_LAUNCH_KW = ("deps", "allow_early_resolve", "core_num", "sync_start", "predicate", "dumps")


def parse_submit(ev: ExprParser, spmd: bool, node: ast.Call, span: Span) -> Call:
    name = "pl.spmd_submit" if spmd else "pl.submit"
    if not node.args:
        raise ParserTypeError(f"{name}() needs the kernel as its first argument: {name}(self.kernel, *args)", span)
    first = node.args[0]
    is_self = isinstance(first, ast.Attribute) and isinstance(first.value, ast.Name) and first.value.id == "self"
    if not is_self and isinstance(ev.eval(first), Expr):
        raise ParserTypeError(f"{name}() launches a kernel: its first argument must be a function such as "
                              f"self.kernel, not the value '{ast.unparse(first)}'", span)
    launch = {k.arg: ev.eval(k.value) for k in node.keywords if k.arg in _LAUNCH_KW}
    rest = [k for k in node.keywords if k.arg not in _LAUNCH_KW]
    inner = ast.copy_location(ast.Call(func=node.args[0], args=list(node.args[1:]), keywords=rest), node)
    call = ev.eval(inner)
    if not isinstance(call, Call) or not isinstance(call.op, GlobalVar):
        raise ParserTypeError(f"{name}() launches a kernel: its first argument must be a function such as "
                              "self.kernel", span)
    return _launch(ev, name, spmd, call, launch, span)


def _launch(ev: ExprParser, name: str, spmd: bool, call: Call, launch: dict[str, Any], span: Span) -> Call:
    attrs = dict(call.attrs)
    dumps = launch.pop("dumps", None) or []
    if dumps:  # selective argument dump: the orchestration marks these arguments (params.dump(...))
        attrs["dump_args"] = _dump_positions(ev, name, call, dumps, span)
    predicate = launch.pop("predicate", None)
    if predicate is not None:  # dispatched only when it holds (a dependency-only task stands in otherwise)
        attrs["predicate"] = predicate_expr(ev, name, predicate, span)
    deps = launch.pop("deps", None) or []
    if deps:
        attrs["manual_dep_edges"] = tuple(ev.to_expr(d, span) for d in deps)
    if launch.pop("allow_early_resolve", False):
        attrs["allow_early_resolve"] = True
    core_num = launch.pop("core_num", None)
    if spmd:
        n = as_int(core_num) if core_num is not None and not isinstance(core_num, bool) else None
        if core_num is None or isinstance(core_num, bool) or (n is not None and n <= 0):
            raise ParserTypeError(f"{name}() needs core_num=<positive integer>", span)
        attrs["block_num"] = n if n is not None else ev.to_expr(core_num, span)
        if launch.pop("sync_start", False):
            attrs["sync_start"] = True
    elif core_num is not None or launch.get("sync_start"):
        raise ParserTypeError(f"{name}() takes no core_num=/sync_start=; use pl.spmd_submit", span)
    rets = call.result_type.types if isinstance(call.result_type, TupleType) else (call.result_type,)
    rets = tuple(t for t in rets if not isinstance(t, UnknownType))
    return dataclasses.replace(call, attrs=attrs, result_type=TupleType((*rets, ScalarType(DataType.TASK_ID))))


def _dump_positions(ev: ExprParser, name: str, call: Call, dumps: Any, span: Span) -> list[int]:
    if not isinstance(dumps, list | tuple):
        raise ParserTypeError(f"{name}(dumps=...) takes a list of the call's tensor arguments", span)
    positions = []
    for d in dumps:
        e = ev.to_expr(d, span)
        hits = [i for i, a in enumerate(call.args) if a is e]
        if not hits:
            raise ParserTypeError(f"{name}(dumps=...) names '{getattr(e, 'name', e)}', which is not an argument "
                                  "of the call", span, hint="list tensors passed to the kernel")
        positions += [i for i in hits if i not in positions]
    return positions


def predicate_expr(ev: ExprParser, name: str, value: Any, span: Span) -> Expr:
    """The ``predicate=`` of a submit or ``pl.spmd`` scope: a boolean (or integer) scalar expression."""
    e = ev.to_expr(value, span)
    if not isinstance(e.type, ScalarType) or e.type.dtype.is_float:
        raise ParserTypeError(f"{name}(predicate=...) takes a boolean scalar such as (gate[0, 0] > 0), got "
                              f"{e.type}", span)
    return e


def parse_task_dummy(ev: ExprParser, node: ast.Call, span: Span) -> Call:
    """``pl.system.task_dummy(deps=[...])``: a ``system.task_dummy`` call typed ``TASK_ID``."""
    from pypto.ir.ops.registry import make_call

    name = "pl.system.task_dummy"
    if node.args:
        raise ParserTypeError(f"{name}() takes no positional arguments", span,
                              hint=f"write {name}(deps=[task_id, ...])")
    extra = [k.arg for k in node.keywords if k.arg != "deps"]
    if extra:
        raise ParserTypeError(f"{name}() got an unexpected keyword argument '{extra[0]}'", span,
                              hint=f"write {name}(deps=[task_id, ...])")
    dep_nodes = [k.value for k in node.keywords if k.arg == "deps"]
    if not dep_nodes:
        raise ParserTypeError(f"{name}() needs deps=[...]", span, hint=f"write {name}(deps=[]) for a join of nothing")
    deps = ev.eval(dep_nodes[0])
    if not isinstance(deps, list | tuple):
        raise ParserTypeError(f"{name}(deps=...) takes a list of task ids", span)
    elements = tuple(ev.to_expr(d, span) for d in deps)
    return make_call("system.task_dummy", [MakeTuple(elements, span=span)], {}, span)
