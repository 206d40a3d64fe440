"""The HOST level's frontend: a host orchestrator's body -> a standalone Python control-plane function.

A HOST-level orchestrator (``@pl.jit.host``, or ``@pl.function(level=pl.Level.HOST,
role=pl.Role.Orchestrator)`` in a ``@pl.program``) is control-plane code: loops over ranks, window
allocations, one dispatch per rank with tensor slices (``x[r]``), SubWorker callbacks. It is not
lowered to a chip; it becomes a plain Python function ``def <name>(__rt__, <params>)`` written to the
artifact (``orchestration/host_orch.py``) and run by the distributed runtime, whose ``__rt__`` object
does the work (``world_size``, ``alloc_window_buffer``, ``window``, ``dispatch``, ``callback``).

Names from the enclosing module are folded in as literals (``N_RANKS``, ``pl.FP32``) so the generated
file stands alone (``DistributedCompiledProgram.from_dir``). Any other construct is a located
:class:`~pypto.errors.UnsupportedFeatureError`.
"""

from __future__ import annotations

import ast
import builtins
from dataclasses import dataclass, field
from typing import Any

from pypto.errors import UnsupportedFeatureError
from pypto.ir.dtypes import DataType
from pypto.language.source import Source

RT = "__rt__"
_STMTS = (ast.For, ast.If, ast.Assign, ast.AnnAssign, ast.Expr, ast.Return, ast.Pass)
_EXPRS = (ast.Name, ast.Constant, ast.BinOp, ast.UnaryOp, ast.Compare, ast.BoolOp, ast.Subscript, ast.Slice,
          ast.List, ast.Tuple, ast.Call, ast.keyword, ast.IfExp)
_OPS = (ast.operator, ast.unaryop, ast.cmpop, ast.boolop, ast.expr_context)


@dataclass
class HostLowering:
    """The generated control-plane function and what it calls."""

    name: str
    params: list[str]
    text: str
    chip_calls: dict[str, Any] = field(default_factory=dict)  # callee name -> its object (JITFunction) or None
    callbacks: list[str] = field(default_factory=list)  # SubWorker names, first-call order


class HostFrontend:
    """Translate one host-level ``def`` (see the module docstring).

    ``methods`` maps the names a ``@pl.program`` host function may call as ``self.<name>`` to
    ``"chip"`` (a chip-level Orchestration) or ``"callback"`` (a HOST SubWorker).
    """

    def __init__(self, source: Source, env: dict[str, Any], methods: dict[str, str] | None = None) -> None:
        self.source = source
        self.env = env
        self.methods = methods or {}
        self.locals: set[str] = set()
        self.out: HostLowering | None = None

    def _err(self, msg: str, node: ast.AST, hint: str | None = None) -> UnsupportedFeatureError:
        return UnsupportedFeatureError(msg, self.source.span(node), hint)

    def lower(self, fdef: ast.FunctionDef) -> HostLowering:
        args = [a.arg for a in fdef.args.args]
        if args and args[0] == "self":
            args = args[1:]
        if fdef.args.vararg or fdef.args.kwarg or fdef.args.kwonlyargs:
            raise self._err("a host orchestrator takes plain positional parameters only", fdef)
        self.locals = set(args)
        for node in ast.walk(fdef):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                self.locals.add(node.id)
        self.out = HostLowering(fdef.name, args, "")
        body = [s for s in fdef.body if not _is_docstring(s)]
        stmts = [self.stmt(s) for s in body] or [ast.Pass()]
        func = ast.FunctionDef(name=fdef.name, args=ast.arguments(
            posonlyargs=[], args=[ast.arg(RT)] + [ast.arg(a) for a in args], kwonlyargs=[], kw_defaults=[],
            defaults=[]), body=stmts, decorator_list=[], returns=None, type_params=[])
        self.out.text = ast.unparse(ast.fix_missing_locations(ast.Module(body=[func], type_ignores=[]))) + "\n"
        return self.out

    # -- statements ------------------------------------------------------------------------------
    def stmt(self, node: ast.stmt) -> ast.stmt:
        if not isinstance(node, _STMTS):
            raise self._err(f"'{type(node).__name__}' statements are not supported in a host orchestrator", node,
                            "use for-loops over pl.range, if, assignments, calls and return")
        if isinstance(node, ast.For):
            return self._for(node)
        if isinstance(node, ast.If):
            return ast.If(test=self.expr(node.test), body=[self.stmt(s) for s in node.body],
                          orelse=[self.stmt(s) for s in node.orelse])
        if isinstance(node, ast.Assign):
            if len(node.targets) != 1 or not isinstance(node.targets[0], ast.Name | ast.Tuple):
                raise self._err("assign to one name (or a tuple of names) in a host orchestrator", node)
            return ast.Assign(targets=node.targets, value=self.expr(node.value))
        if isinstance(node, ast.AnnAssign):
            if node.value is None or not isinstance(node.target, ast.Name):
                raise self._err("an annotated assignment in a host orchestrator needs a name and a value", node)
            return ast.Assign(targets=[node.target], value=self.expr(node.value))
        if isinstance(node, ast.Expr):
            if _is_docstring(node) or isinstance(node.value, ast.Constant):
                return ast.Pass()
            return ast.Expr(self.expr(node.value))
        if isinstance(node, ast.Return):
            return ast.Return(None if node.value is None else self.expr(node.value))
        return ast.Pass()

    def _for(self, node: ast.For) -> ast.stmt:
        it = node.iter
        if not (isinstance(it, ast.Call) and self._resolve(it.func) in (_PL_RANGE, builtins.range)):
            raise self._err("a host loop must iterate over pl.range(...)", node.iter)
        if not isinstance(node.target, ast.Name) or node.orelse:
            raise self._err("a host loop binds one name and has no else branch", node)
        rng = ast.Call(func=ast.Name("range", ast.Load()), args=[self.expr(a) for a in it.args], keywords=[])
        return ast.For(target=node.target, iter=rng, body=[self.stmt(s) for s in node.body], orelse=[])

    # -- expressions -----------------------------------------------------------------------------
    def expr(self, node: ast.expr) -> ast.expr:
        for sub in ast.walk(node):
            if not isinstance(sub, _EXPRS + _OPS + (ast.Attribute,)):
                raise self._err(f"'{type(sub).__name__}' is not supported in a host orchestrator", sub)
        return _Rewriter(self).visit(node)

    def _resolve(self, node: ast.expr) -> Any:
        """The compile-time object a non-local name or attribute chain denotes (``_MISSING`` if none)."""
        if isinstance(node, ast.Name):
            if node.id in self.locals:
                return _MISSING
            if node.id in self.env:
                return self.env[node.id]
            return getattr(builtins, node.id, _MISSING)
        if isinstance(node, ast.Attribute):
            base = self._resolve(node.value)
            return _MISSING if base is _MISSING else getattr(base, node.attr, _MISSING)
        return _MISSING

    def call(self, node: ast.Call) -> ast.expr:
        """A call in host code: a pld construct, a chip-level program dispatch, or a SubWorker callback."""
        f = node.func
        if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "self":
            kind = self.methods.get(f.attr)
            if kind is None:
                raise self._err(f"'self.{f.attr}' is not a function of this program", f)
            return self._dispatch(f.attr, None, node, callback=kind == "callback")
        target = self._resolve(f)
        name = getattr(target, "name", None)
        if name in _HOST_CONSTRUCTS:
            return _rt_call(_HOST_CONSTRUCTS[name], [self.expr(a) for a in node.args],
                            [ast.keyword(k.arg, self.expr(k.value)) for k in node.keywords])
        if getattr(target, "__pypto_jit__", False):
            return self._dispatch(target.__name__, target, node, callback=False)
        if target is _PL_RANGE or target is builtins.range:
            return ast.Call(func=ast.Name("range", ast.Load()), args=[self.expr(a) for a in node.args], keywords=[])
        what = ast.unparse(f)
        if isinstance(name, str) and name.startswith("pld."):
            raise self._err(f"{name} is a kernel construct; it cannot run in a host orchestrator", node,
                            "call it inside a @pl.jit.incore kernel the host dispatches")
        raise self._err(f"call to '{what}' is not supported in a host orchestrator", node,
                        "a host orchestrator calls @pl.jit programs (device=r), pld.alloc_window_buffer, "
                        "pld.window and pld.world_size")

    def _dispatch(self, name: str, target: Any, node: ast.Call, *, callback: bool) -> ast.expr:
        assert self.out is not None
        device: ast.expr = ast.Constant(None)
        for kw in node.keywords:
            if kw.arg != "device" or callback:
                raise self._err(f"keyword '{kw.arg}=' is not supported on a host dispatch", kw,
                                "pass arguments positionally; only device=r selects the rank")
            device = self.expr(kw.value)
        args = ast.List([self.expr(a) for a in node.args], ast.Load())
        if callback:
            if name not in self.out.callbacks:
                self.out.callbacks.append(name)
            return _rt_call("callback", [ast.Constant(name), args], [])
        self.out.chip_calls.setdefault(name, target)
        return _rt_call("dispatch", [ast.Constant(name), args], [ast.keyword("device", device)])

    def literal(self, node: ast.expr) -> ast.expr:
        value = self._resolve(node)
        if value is _MISSING:
            raise self._err(f"name '{ast.unparse(node)}' is not defined", node)
        lit = _literal(value)
        if lit is None:
            raise self._err(f"'{ast.unparse(node)}' ({type(value).__name__}) cannot be used as a value in a host "
                            "orchestrator", node, "use ints, floats, dtypes (pl.FP32) or lists of them")
        return lit


class _Rewriter(ast.NodeTransformer):
    def __init__(self, fe: HostFrontend) -> None:
        self.fe = fe

    def visit_Call(self, node: ast.Call) -> ast.expr:
        return self.fe.call(node)

    def visit_Name(self, node: ast.Name) -> ast.expr:
        return node if node.id in self.fe.locals else self.fe.literal(node)

    def visit_Attribute(self, node: ast.Attribute) -> ast.expr:
        return self.fe.literal(node)


def _literal(value: Any) -> ast.expr | None:
    if isinstance(value, DataType):
        return ast.Constant(value.value)
    if isinstance(value, bool | int | float | str) or value is None:
        return ast.Constant(value)
    if isinstance(value, list | tuple):
        items = [_literal(v) for v in value]
        return None if any(i is None for i in items) else ast.List(items, ast.Load())
    return None


def _rt_call(method: str, args: list[ast.expr], keywords: list[ast.keyword]) -> ast.Call:
    return ast.Call(func=ast.Attribute(ast.Name(RT, ast.Load()), method, ast.Load()), args=args, keywords=keywords)


def _is_docstring(node: ast.stmt) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


_MISSING = object()
_HOST_CONSTRUCTS = {"pld.world_size": "world_size", "pld.alloc_window_buffer": "alloc_window_buffer",
                    "pld.window": "window"}


def _pl_range() -> Any:
    from pypto.language.dsl import range as pl_range

    return pl_range


_PL_RANGE = _pl_range()


def is_abstract_body(fdef: ast.FunctionDef) -> bool:
    """A ``...``-bodied function (an optional docstring, then only ``...``): a runtime-bound callback."""
    body = [s for s in fdef.body if not (_is_docstring(s))]
    return bool(body) and all(isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant)
                              and s.value.value is Ellipsis for s in body)
