"""Compound statements: ``for`` over pl.range/parallel/unroll/pipeline/while_ (with init_values and
pl.yield_), ``if``/``else`` with yields, and ``with`` scopes (pl.at, pl.cluster, pl.scope)."""

from __future__ import annotations

import ast
import dataclasses
from typing import TYPE_CHECKING, Any

from pypto.errors import ParserSyntaxError, ParserTypeError, UnsupportedFeatureError
from pypto.ir.dtypes import DataType
from pypto.ir.enums import ForKind, Level, Role, ScopeMode
from pypto.ir.expr import ConstInt, Expr, IterArg, Var, as_int
from pypto.ir.stmt import (
    LOOP_ATTRS,
    AssignStmt,
    ClusterScopeStmt,
    ForStmt,
    HierarchyScopeStmt,
    IfStmt,
    InCoreScopeStmt,
    RuntimeScopeStmt,
    ScopeStmt,
    SeqStmts,
    Stmt,
    WhileStmt,
    YieldStmt,
    flatten,
)
from pypto.ir.types import ScalarType, ShapedType
from pypto.language import dsl
from pypto.span import Span

if TYPE_CHECKING:
    from pypto.language.function_parser import FunctionParser, YieldFrame

_LOOPS = {dsl.range: ForKind.Sequential, dsl.parallel: ForKind.Parallel, dsl.unroll: ForKind.Unroll,
          dsl.pipeline: ForKind.Pipeline}
_AT_ATTRS = ("allow_early_resolve", "windowize", "no_dep_args", "optimizations")


def _reject_unsupported(p: FunctionParser, node: ast.expr) -> None:
    """``for x in pl.split_aiv(...)`` & co: the upstream construct's own 'not with ptoas 0.1.1' error."""
    from pypto.errors import ParserError
    from pypto.language.unsupported import Unsupported

    func = node.func if isinstance(node, ast.Call) else node
    try:
        target = p.ev.eval(func)
    except ParserError:
        return
    if isinstance(target, Unsupported):
        raise target.error(p.span(node))


def _block(p: FunctionParser, stmts: list[Stmt], span: Span) -> Stmt:
    return stmts[0] if len(stmts) == 1 else SeqStmts(tuple(stmts), span=span)


def _bound(p: FunctionParser, value: Any, node: ast.expr, literal: bool) -> Expr:
    span = p.span(node)
    if literal and as_int(value) is None:
        raise ParserTypeError("pl.unroll() bounds must be integer literals", span)
    if isinstance(value, bool) or isinstance(value, float):
        raise ParserTypeError(f"loop bounds must be integers, got {value!r}", span)
    e = p.ev.to_expr(value, span, node)
    t = e.type
    if not isinstance(t, ScalarType) or t.dtype.is_float:
        raise ParserTypeError(f"loop bound '{ast.unparse(node)}' must be an integer scalar", span)
    return e


def _loop_attrs(given: Any, span: Span) -> dict[str, Any]:
    """``attrs={"pipeline_double_buffer_c": True}`` on a loop (printed IR): known keys, constant values."""
    if given is None:
        return {}
    if not isinstance(given, dict) or any(k not in LOOP_ATTRS or not isinstance(v, bool | int)
                                          for k, v in given.items()):
        raise ParserTypeError(f"loop attrs= takes a dict of {', '.join(sorted(LOOP_ATTRS))} to a constant, "
                              f"got {given!r}", span)
    return dict(given)


def _loop_header(p: FunctionParser, call: ast.Call, kind: ForKind) -> tuple[list[Expr], list[Any] | None, dict]:
    span = p.span(call)
    args, kwargs = p.ev.call_args(call)
    name = call.func.attr if isinstance(call.func, ast.Attribute) else "range"
    init = kwargs.pop("init_values", None)
    attrs: dict[str, Any] = {}
    if kind is ForKind.Pipeline:
        stage = kwargs.pop("stage", None)
        if not isinstance(stage, int) or isinstance(stage, bool) or stage <= 0:
            raise ParserTypeError("pl.pipeline() needs stage=<positive int>", span)
        attrs["pipeline_stages"] = stage
    attrs.update(_loop_attrs(kwargs.pop("attrs", None), span))
    if kwargs:
        raise ParserTypeError(f"pl.{name}() got an unexpected keyword argument '{next(iter(kwargs))}'", span)
    if not 1 <= len(args) <= 3:
        raise ParserTypeError(f"pl.{name}() takes 1 to 3 positional arguments (stop | start, stop | start, stop, "
                              f"step) but {len(args)} were given", span)
    bounds = [_bound(p, a, n, kind is ForKind.Unroll) for a, n in zip(args, call.args, strict=True)]
    if len(bounds) == 1:
        bounds = [ConstInt(0, span=span), bounds[0]]
    if len(bounds) == 2:
        bounds.append(ConstInt(1, span=span))
    if as_int(bounds[2]) == 0:
        raise ParserTypeError(f"pl.{name}() step must not be zero", span)
    if init is not None and kind is ForKind.Unroll:
        raise ParserTypeError("pl.unroll() does not take init_values", span)
    if init is not None and not isinstance(init, list):
        raise ParserTypeError("init_values must be a tuple such as (acc,)", span)
    return bounds, init, attrs


def _iter_targets(p: FunctionParser, target: ast.expr, n: int, has_loop_var: bool) -> tuple[ast.Name | None, list[ast.Name]]:
    span = p.span(target)
    if n == 0:
        if not isinstance(target, ast.Name):
            raise ParserTypeError("the loop target must be a single name", span)
        return target, []
    want = "for i, (a, b) in pl.range(n, init_values=(a0, b0))" if has_loop_var else \
        "for (a, b) in pl.while_(init_values=(a0, b0))"
    elts = target.elts if isinstance(target, ast.Tuple) else None
    if has_loop_var:
        ok = elts is not None and len(elts) == 2 and isinstance(elts[0], ast.Name) and isinstance(elts[1], ast.Tuple)
        loop, group = (elts[0], elts[1].elts) if ok else (None, [])  # type: ignore[union-attr,index]
    else:
        ok, loop, group = elts is not None, None, elts or []
    if not ok or len(group) != n or not all(isinstance(g, ast.Name) for g in group):
        raise ParserTypeError(f"loop with {n} init_values needs {n} carried names: {want}", span)
    return loop, group  # type: ignore[return-value]


def _iter_args(p: FunctionParser, names: list[ast.Name], inits: list[Any],
               call: ast.Call) -> tuple[tuple[IterArg, ...], tuple[Expr, ...]]:
    """The carried variables of a loop and the values they start from (the loop's ``inits``)."""
    out, values = [], []
    for name, init in zip(names, inits, strict=True):
        e = p.ev.to_expr(init, p.span(call), call)
        ia = IterArg(name.id, e.type, span=p.span(name))
        p.scope.bind(name.id, ia, p.span(name))
        out.append(ia)
        values.append(e)
    return tuple(out), tuple(values)


def _return_vars(p: FunctionParser, frame: YieldFrame, iter_args: tuple[IterArg, ...], span: Span) -> list[Var]:
    if frame.values is None:
        raise ParserSyntaxError("a loop with init_values must end with pl.yield_(...)", span)
    if len(frame.values) != len(iter_args):
        raise ParserTypeError(f"pl.yield_ gives {len(frame.values)} values for {len(iter_args)} init_values", span)
    names = frame.targets or [(ia.name, None) for ia in iter_args]
    rvs = [Var(n, t or v.type, span=span) for (n, t), v in zip(names, frame.values, strict=True)]
    if frame.targets:
        for rv in rvs:
            p.scope.bind(rv.name, rv, span)
    return rvs


def parse_for(p: FunctionParser, node: ast.For) -> list[Stmt]:
    """``for i in pl.range(...)`` (+ init_values) and ``for (a,) in pl.while_(init_values=...)``."""
    span = p.span(node)
    if node.orelse:
        raise UnsupportedFeatureError("for-else is not supported", span)
    c = p._construct(node.iter)
    if c is dsl.while_:
        return _parse_while(p, node)
    if c is dsl.spmd:
        from pypto.language.spmd_scope import parse_spmd_for

        return parse_spmd_for(p, node)
    if c not in _LOOPS:
        _reject_unsupported(p, node.iter)
        hint = "write pl.range(...) instead of range(...)" if ast.unparse(node.iter).startswith("range(") else None
        raise UnsupportedFeatureError(f"for loops must iterate over pl.range/pl.parallel/pl.unroll/pl.pipeline, "
                                      f"not '{ast.unparse(node.iter)}'", p.span(node.iter), hint)
    kind = _LOOPS[c]  # type: ignore[index]
    call = node.iter
    assert isinstance(call, ast.Call)
    bounds, init, attrs = _loop_header(p, call, kind)
    loop_name, carried = _iter_targets(p, node.target, len(init or []), True)
    assert loop_name is not None
    loop_var = Var(loop_name.id, ScalarType(DataType.INDEX), span=p.span(loop_name))
    iter_args, inits = _iter_args(p, carried, init or [], call)
    p.scope.bind(loop_name.id, loop_var, p.span(loop_name))
    frame = p.push("for")
    p.loop_depth += 1
    try:
        body = p.body(node.body, node.lineno)
    finally:
        p.loop_depth -= 1
        p.pop()
    rvs: list[Var] = []
    if iter_args:
        rvs = _return_vars(p, frame, iter_args, span)
    elif frame.values is not None:
        raise ParserSyntaxError("pl.yield_() in a loop without init_values", span)
    return [ForStmt(loop_var, bounds[0], bounds[1], bounds[2], _block(p, body, span), iter_args,
                    tuple(rvs), kind, attrs, inits=inits, span=span)]


def parse_plain_while(p: FunctionParser, node: ast.While) -> list[Stmt]:
    """``while cond:`` without ``pl.while_``: the names the body rebinds are carried, as in a ``for``
    loop without init_values (ConvertToSSA makes the iter_args of those read by the condition or later)."""
    span = p.span(node)
    if node.orelse:
        raise UnsupportedFeatureError("while-else is not supported", span)
    if p.func_type_incore:
        return _counting_while(p, node)
    cond = p.ev.expr(node.test)
    frame = p.push("while")
    p.loop_depth += 1
    try:
        body = p.body(node.body, node.lineno)
    finally:
        p.loop_depth -= 1
        p.pop()
    if frame.values is not None:
        raise ParserSyntaxError("pl.yield_() in a while loop without init_values", span,
                                hint="write `for (x,) in pl.while_(init_values=(x0,)):` to yield explicitly")
    return [WhileStmt(cond, _block(p, body, span), (), (), span=span)]


def _counting_while(p: FunctionParser, node: ast.While) -> list[Stmt]:
    """A kernel's ``i = a; while i < b: ...; i = i + c`` as ``for i in pl.range(a, b, c)`` (ptoas 0.1.1
    has no ``scf.while``); ``i`` is the loop variable, so reading it after the loop is a located error."""
    form = _counting_form(node)
    if form is None:
        raise UnsupportedFeatureError(
            "a while loop in a kernel (ptoas 0.1.1 cannot lower scf.while) that is not a counting loop", p.span(node),
            hint="write it as `for i in pl.range(a, b, c)`; a loop `while i < b:` (or `<=`) whose last statement "
                 "is `i = i + c` (c a positive int), with no other assignment to i and no break/continue, is "
                 "rewritten so")
    name, stop, step = form
    span = p.span(node)
    start = p.ev.expr(ast.Name(name, ast.Load(), lineno=node.lineno, col_offset=node.col_offset))
    bound = p.ev.expr(stop)
    loop_var = Var(name, ScalarType(DataType.INDEX), span=span)
    p.scope.bind(name, loop_var, span)
    frame = p.push("for")
    p.loop_depth += 1
    try:
        body = p.body(node.body[:-1], node.lineno)
    finally:
        p.loop_depth -= 1
        p.pop()
    if frame.values is not None:
        raise ParserSyntaxError("pl.yield_() in a while loop without init_values", span)
    p.scope.names.pop(name, None)  # Python would read the first value that fails the test; the IR has none
    p.scope.unmerged[name] = (f"it counts the while loop at {span.line}:{span.col}, which a kernel runs as "
                              f"'for {name} in pl.range(...)' (ptoas 0.1.1 has no scf.while), so it has no value "
                              "after the loop; compute the value after the loop from the bounds")
    return [ForStmt(loop_var, start, bound, ConstInt(step, DataType.INDEX), _block(p, body, span), (), (),
                    ForKind.Sequential, {}, span=span)]


def _counting_form(node: ast.While) -> tuple[str, ast.expr, int] | None:
    """(name, stop, step) of ``while name < stop: ...; name = name + step`` (``<=``: stop + 1), else None."""
    test, last = node.test, node.body[-1] if node.body else None
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Lt | ast.LtE)
            and isinstance(test.left, ast.Name)):
        return None
    name, stop = test.left.id, test.comparators[0]
    step = _increment(last, name)
    stored = {n.id for s in node.body[:-1] for n in ast.walk(s) if isinstance(n, ast.Name)
              and isinstance(n.ctx, ast.Store)}
    read_by_stop = {n.id for n in ast.walk(stop) if isinstance(n, ast.Name)}
    jumps = any(isinstance(n, ast.Break | ast.Continue) for s in node.body for n in ast.walk(s))
    if step is None or name in stored or stored & read_by_stop or name in read_by_stop or jumps:
        return None
    if isinstance(test.ops[0], ast.LtE):
        stop = ast.copy_location(ast.BinOp(stop, ast.Add(), ast.Constant(1)), stop)
    return name, stop, step


def _increment(stmt: ast.stmt | None, name: str) -> int | None:
    """``c`` of ``name = name + c`` / ``name += c`` (c a positive int literal), else None."""
    if isinstance(stmt, ast.AugAssign) and isinstance(stmt.op, ast.Add):
        target, value = stmt.target, stmt.value
    elif isinstance(stmt, ast.Assign | ast.AnnAssign) and isinstance(stmt.value, ast.BinOp) \
            and isinstance(stmt.value.op, ast.Add) and isinstance(stmt.value.left, ast.Name) \
            and stmt.value.left.id == name:
        target = stmt.targets[0] if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 else \
            getattr(stmt, "target", None)
        value = stmt.value.right
    else:
        return None
    ok = isinstance(target, ast.Name) and target.id == name and isinstance(value, ast.Constant) \
        and isinstance(value.value, int) and not isinstance(value.value, bool) and value.value > 0
    return value.value if ok else None


def _parse_while(p: FunctionParser, node: ast.For) -> list[Stmt]:
    span = p.span(node)
    call = node.iter
    assert isinstance(call, ast.Call)
    args, kwargs = p.ev.call_args(call)
    init = kwargs.pop("init_values", None)
    if not init or args or kwargs:
        raise ParserTypeError("while_() requires init_values to be specified", span)
    _, carried = _iter_targets(p, node.target, len(init), False)
    iter_args, inits = _iter_args(p, carried, init, call)
    nodes = list(node.body)
    if not nodes or p._construct(nodes[0]) is not dsl.cond:
        raise ParserSyntaxError("pl.cond(<condition>) must be the first statement of a pl.while_ loop", span)
    cond = p.ev.expr(nodes[0].value.args[0])  # type: ignore[attr-defined]
    frame = p.push("while")
    p.loop_depth += 1
    try:
        body = p.body(nodes[1:], nodes[0].lineno)
    finally:
        p.loop_depth -= 1
        p.pop()
    rvs = _return_vars(p, frame, iter_args, span)
    return [WhileStmt(cond, _block(p, body, span), iter_args, tuple(rvs), inits=inits, span=span)]


def parse_if(p: FunctionParser, node: ast.If) -> list[Stmt]:
    """``if``/``else``; yields in both branches define the if's return vars."""
    span = p.span(node)
    cond = p.ev.expr(node.test)
    if isinstance(cond.type, ShapedType):
        raise ParserTypeError("an if condition must be a scalar, not a tensor or tile", p.span(node.test))
    snap = p.scope.snapshot()
    f1 = p.push("if")
    try:
        then = p.body(node.body, node.lineno)
    finally:
        p.pop()
    then_names = dict(p.scope.names)
    p.scope.restore(snap)
    els, f2 = None, None
    else_names: dict[str, Var] = {}
    if node.orelse:
        f2 = p.push("if")
        try:
            els = p.body(node.orelse, node.orelse[0].lineno - 1)
        finally:
            p.pop()
        else_names = dict(p.scope.names)
        p.scope.restore(snap)
    rvs = _if_return_vars(p, f1, f2, span)
    merged = _branch_defs(snap[0], then_names, else_names, rvs, f1, f2)
    top = _top_level_defs(then or []) | _top_level_defs(els or [])  # a loop's locals stay inside the loop
    merged = [n for n in merged if then_names[n] in top and else_names[n] in top]
    if merged:  # as if both branches ended with `name, ... = pl.yield_(name, ...)`
        then, els = _add_yield(then, [then_names[n] for n in merged]), _add_yield(els, [else_names[n] for n in merged])
        for n in merged:
            rv = Var(n, then_names[n].var_type, span=span)
            p.scope.bind(n, rv, span)
            rvs.append(rv)
    for n in _rebound_in_both(snap[0], then_names, else_names, {rv.name for rv in rvs}):
        p.scope.names[n] = then_names[n]
    for n in (then_names.keys() | else_names.keys()) - p.scope.names.keys():
        p.scope.unmerged[n] = _why_unmerged(then_names.get(n), else_names.get(n), top, span)
    else_body = _block(p, els, span) if els else None
    return [IfStmt(cond, _block(p, then, span) if then else SeqStmts((), span=span), else_body, tuple(rvs),
                   span=span)]


def _branch_defs(before: dict[str, Var], then: dict[str, Var], other: dict[str, Var], rvs: list[Var],
                 f1: YieldFrame, f2: YieldFrame | None) -> list[str]:
    """Names first assigned in both branches (with the same kind of type): Python defines them after the
    if, so they become results of the if. Not combined with yields whose values have no targets."""
    if not rvs and (f1.values is not None or (f2 is not None and f2.values is not None)):
        return []
    taken = {rv.name for rv in rvs}
    return [n for n, var in then.items() if n not in before and n not in taken and n in other
            and type(other[n].var_type) is type(var.var_type)]


def _rebound_in_both(before: dict[str, Var], then: dict[str, Var], other: dict[str, Var],
                     taken: set[str]) -> list[str]:
    """Names bound before the if and rebound in both branches. Python sees a branch's value after the
    if, never the one from before, so the name must not keep denoting it (ConvertToSSA merges such a
    name by name into a result of the if; the then-branch Var stands for it until then)."""
    return [n for n, var in before.items() if n not in taken and n in then and n in other
            and then[n] is not var and other[n] is not var]


def _why_unmerged(then: Var | None, other: Var | None, top: set[Var], span: Span) -> str:
    """Why a name bound in a branch has no value after the if at ``span`` (Python may still see one)."""
    if then is None or other is None:
        return f"the if at {span} binds it in only one branch"
    a, b = type(then.var_type).__name__, type(other.var_type).__name__
    if a != b:
        return f"the if at {span} binds it to a {a.removesuffix('Type')} in one branch and a " \
               f"{b.removesuffix('Type')} in the other"
    if then not in top or other not in top:
        return f"the if at {span} binds it inside a loop in a branch (a loop's own names stay in the loop)"
    return f"the if at {span} does not merge it (its branches end in a pl.yield_ without targets)"


def _top_level_defs(stmts: list[Stmt]) -> set[Var]:
    """Vars a branch binds outside any loop in it (assignments, if results, with-scope bodies)."""
    out: set[Var] = set()
    for s in stmts:
        for x in flatten(s):
            if isinstance(x, AssignStmt):
                out.add(x.var)
            elif isinstance(x, ScopeStmt):
                out |= _top_level_defs([x.body])
            elif isinstance(x, IfStmt | ForStmt | WhileStmt):
                out.update(x.return_vars)
    return out


def _add_yield(stmts: list[Stmt] | None, values: list[Var]) -> list[Stmt]:
    stmts = list(stmts or [])
    if stmts and isinstance(stmts[-1], YieldStmt):
        return [*stmts[:-1], dataclasses.replace(stmts[-1], values=(*stmts[-1].values, *values))]
    return [*stmts, YieldStmt(tuple(values), span=values[0].span)]


def _if_return_vars(p: FunctionParser, f1: YieldFrame, f2: YieldFrame | None, span: Span) -> list[Var]:
    if f1.values is None and (f2 is None or f2.values is None):
        return []
    if f2 is None or f1.values is None or f2.values is None:
        raise ParserSyntaxError("if/else with pl.yield_ must yield in both branches", span)
    if len(f1.values) != len(f2.values):
        raise ParserTypeError(f"branches yield {len(f1.values)} and {len(f2.values)} values", span)
    if f1.targets and f2.targets and [n for n, _ in f1.targets] != [n for n, _ in f2.targets]:
        raise ParserTypeError("both branches must yield into the same names", span)
    targets = f1.targets or f2.targets
    if not targets:
        return []
    rvs = [Var(n, t or v.type, span=span) for (n, t), v in zip(targets, f1.values, strict=True)]
    for rv in rvs:
        p.scope.bind(rv.name, rv, span)
    return rvs


def parse_with(p: FunctionParser, node: ast.With) -> list[Stmt]:
    """``with pl.at(...)``, ``pl.cluster()``, ``pl.scope()``, ``pl.manual_scope()``."""
    span = p.span(node)
    if len(node.items) != 1:
        raise UnsupportedFeatureError("a with-statement takes exactly one scope", span)
    item = node.items[0]
    c = p._construct(item.context_expr)
    if c not in (dsl.at, dsl.cluster, dsl.scope, dsl.manual_scope, dsl.spmd):
        _reject_unsupported(p, item.context_expr)
        raise UnsupportedFeatureError(f"'with {ast.unparse(item.context_expr)}' is not supported "
                                      "(use pl.at, pl.cluster, pl.spmd, pl.scope or pl.manual_scope)", span)
    if c is dsl.spmd:
        from pypto.language.spmd_scope import parse_spmd_with

        return parse_spmd_with(p, item, p.body(node.body, node.lineno), span)
    call = item.context_expr
    assert isinstance(call, ast.Call)
    args, kwargs = p.ev.call_args(call)
    if item.optional_vars is not None and c is not dsl.at:
        raise UnsupportedFeatureError("'as' is only supported with pl.at", p.span(item.optional_vars))
    if c is dsl.cluster:
        from pypto.language.cluster_scope import check_cluster_body

        check_cluster_body(p, node.body)
    body = p.body(node.body, node.lineno)
    block = _block(p, body, span)
    if c is dsl.at:
        return [_at(p, args, kwargs, block, item, span)]
    if args:
        raise ParserTypeError(f"pl.{c.name}() takes keyword arguments only", span)  # type: ignore[union-attr]
    if c is dsl.cluster:
        hint = name_hint_arg(kwargs, "pl.cluster", span)
        _no_more(kwargs, "cluster", span)
        return [ClusterScopeStmt(block, hint, span=span)]
    manual = c is dsl.manual_scope
    if c is dsl.scope:
        mode = kwargs.pop("mode", ScopeMode.AUTO)
        if not isinstance(mode, ScopeMode):
            raise ParserTypeError("pl.scope(mode=...) takes pl.ScopeMode.AUTO or pl.ScopeMode.MANUAL", span)
        manual = mode is ScopeMode.MANUAL
    _no_more(kwargs, c.name, span)  # type: ignore[union-attr]
    return [RuntimeScopeStmt(block, manual, span=span)]


def name_hint_arg(kwargs: dict[str, Any], call: str, span: Span) -> str:
    """``name_hint=`` popped from ``kwargs`` ("" if absent): it names the outlined kernel and its files, so it
    must be a valid symbol (:func:`pypto.artifact.names.check_symbol`)."""
    from pypto.artifact.names import check_symbol

    hint = kwargs.pop("name_hint", "") or ""
    if hint == "":
        return hint
    return check_symbol(hint, f"{call}(name_hint=...)", span, error=ParserSyntaxError)


def _no_more(kwargs: dict[str, Any], name: str, span: Span) -> None:
    if kwargs:
        raise ParserTypeError(f"pl.{name}() got an unexpected keyword argument '{next(iter(kwargs))}'", span)


def _at(p: FunctionParser, args: list[Any], kwargs: dict[str, Any], block: Stmt, item: ast.withitem,
        span: Span) -> Stmt:
    level = kwargs.pop("level", args[0] if args else None)
    role = kwargs.pop("role", args[1] if len(args) > 1 else None)
    name_hint = name_hint_arg(kwargs, "pl.at", span)
    deps = kwargs.pop("deps", None) or []
    dumps = kwargs.pop("dumps", None) or []
    attrs = {k: kwargs.pop(k) for k in _AT_ATTRS if k in kwargs}
    _no_more(kwargs, "at", span)
    if not isinstance(level, Level):
        raise ParserTypeError("pl.at() needs level=pl.Level.X", span, hint="e.g. pl.at(level=pl.Level.CORE_GROUP)")
    if role is not None and not isinstance(role, Role):
        raise ParserTypeError("pl.at(role=...) takes pl.Role.Orchestrator or pl.Role.SubWorker", span)
    if level is Level.CORE_GROUP:
        if role is not None:
            raise ParserTypeError("pl.at(level=pl.Level.CORE_GROUP) does not take role=", span)
        task = None
        if item.optional_vars is not None:
            if not isinstance(item.optional_vars, ast.Name):
                raise ParserTypeError("'as' needs a single name", p.span(item.optional_vars))
            task = Var(item.optional_vars.id, ScalarType(DataType.TASK_ID), span=p.span(item.optional_vars))
            p.scope.bind(task.name, task, task.span)
        dep_exprs = tuple(p.ev.to_expr(d, span) for d in deps)
        dump_exprs = [p.ev.to_expr(d, span) for d in dumps]
        p.dump_tags_used = p.dump_tags_used or bool(p.dump_tags)
        dump_exprs += [t for t in p.dump_tags if not any(t is d for d in dump_exprs)]
        return InCoreScopeStmt(block, name_hint, dep_exprs, task, attrs, tuple(dump_exprs), span=span)
    if item.optional_vars is not None or deps or dumps or attrs:
        raise ParserTypeError(f"pl.at(level=pl.Level.{level.name}) takes only level=, role= and name_hint=", span)
    return HierarchyScopeStmt(block, level, role, name_hint, span=span)

