"""Program-level parsing shared by the decorators and the text parser: ``@pl.function(...)``
decorator options, ``@pl.program`` classes (signatures first, then bodies, so ``self.f(...)``
calls see every callee), and standalone functions.
"""

from __future__ import annotations

import ast
import os
from typing import Any

from pypto.errors import ParserTypeError, UnsupportedFeatureError
from pypto.ir.enums import FunctionType, Level, Role
from pypto.ir.function import Function, Program
from pypto.ir.ops.registry import make_call
from pypto.ir.stmt import EvalStmt, SeqStmts
from pypto.language.bindings import Scope
from pypto.language.expr_parser import ExprParser, ProgramCtx
from pypto.language.function_parser import FuncOptions, FunctionParser
from pypto.language.source import Source

_OPTION_TYPES: dict[str, tuple[str, Any]] = {
    "type": ("func_type", FunctionType), "level": ("level", Level), "role": ("role", Role),
    "auto_scope": ("auto_scope", bool), "strict_ssa": ("strict_ssa", bool), "attrs": ("attrs", dict),
    "external_source": ("external_source", str),
}


def options_from_kwargs(kwargs: dict[str, Any], span: Any = None, base: FuncOptions | None = None) -> FuncOptions:
    """FuncOptions from ``@pl.function`` keyword values (checked)."""
    out: dict[str, Any] = {}
    for key, value in kwargs.items():
        spec = _OPTION_TYPES.get(key)
        if spec is None:
            raise ParserTypeError(f"@pl.function() got an unexpected keyword argument '{key}'", span,
                                  hint="accepted: " + ", ".join(_OPTION_TYPES))
        field_name, want = spec
        if value is None and key in ("level", "role", "attrs", "external_source"):
            continue
        if key == "external_source" and isinstance(value, os.PathLike):
            value = os.fspath(value)  # a pathlib.Path to the kernel source, as upstream's tests pass it
        if not isinstance(value, want):
            raise ParserTypeError(f"@pl.function({key}=...) expects {want.__name__}, got {value!r}", span)
        out[field_name] = value
    base = base or FuncOptions()
    from dataclasses import replace

    return replace(base, **out)


def decorator_options(fdef: ast.FunctionDef, source: Source, env: dict[str, Any]) -> FuncOptions | None:
    """The options of the ``@pl.function`` decorator of ``fdef``, or None when it has none."""
    from pypto.language import decorators

    ev = ExprParser(source, env, Scope())
    for dec in fdef.decorator_list:
        node = dec.func if isinstance(dec, ast.Call) else dec
        if ev.eval(node) is not decorators.function:
            continue
        if not isinstance(dec, ast.Call):
            return FuncOptions()
        args, kwargs = ev.call_args(dec)
        if args:
            raise ParserTypeError("@pl.function takes keyword arguments only", source.span(dec))
        return options_from_kwargs(kwargs, source.span(dec))
    return None


def parse_class(cdef: ast.ClassDef, source: Source, env: dict[str, Any], strict_ssa: bool = False,
                text_mode: bool = False) -> Program:
    """A ``@pl.program`` class -> Program (functions in callee-before-caller order)."""
    ctx = ProgramCtx()
    work: list[tuple[ast.FunctionDef, FuncOptions, FunctionParser, tuple]] = []
    for node in cdef.body:
        if isinstance(node, ast.Pass) or (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)):
            continue
        if not isinstance(node, ast.FunctionDef):
            raise UnsupportedFeatureError(f"only @pl.function methods may appear in a @pl.program class, "
                                          f"not {type(node).__name__}", source.span(node))
        opts = decorator_options(node, source, env)
        if opts is None:
            raise ParserTypeError(f"method '{node.name}' of @pl.program '{cdef.name}' needs a @pl.function decorator",
                                  source.span(node))
        if strict_ssa and not opts.strict_ssa:
            from dataclasses import replace

            opts = replace(opts, strict_ssa=True)
        parser = FunctionParser(source, env, ctx, text_mode)
        sig = parser.signature(node, opts)
        if node.name in ctx.returns:
            raise ParserTypeError(f"function '{node.name}' defined twice", source.span(node))
        ctx.returns[node.name] = sig[2]
        ctx.arity[node.name] = len(sig[0])
        work.append((node, opts, parser, sig))
    kinds = _host_callees(work)
    funcs = [_parse_host(node, opts, sig, source, env, kinds) if _is_host_code(node, opts, kinds, env)
             else _parse_or_defer(parser, node, opts, sig, source) for node, opts, parser, sig in work]
    funcs += [f for name, f in ctx.externals.items() if all(g.name != name for g in funcs)]
    from pypto.ir.callgraph import callee_first

    return Program(cdef.name, tuple(callee_first(funcs)), span=source.span(cdef))


def _parse_or_defer(parser: FunctionParser, fdef: ast.FunctionDef, opts: FuncOptions, sig: tuple,
                    source: Source) -> Function:
    """The function, or, when its body uses an upstream construct ptoas 0.1.1 cannot express (a stand-in
    of ``pypto.language.unsupported``), the function with its signature and one ``system.unsupported``
    statement at the construct: the program still defines (a module of several programs imports and the
    others run), and compiling this one raises the construct's located UnsupportedFeatureError."""
    try:
        return parser.parse(fdef, opts, sig)
    except UnsupportedFeatureError as exc:
        construct = getattr(exc, "construct", None)
        if construct is None:
            raise
        span = exc.span or source.span(fdef)
        marker = make_call("system.unsupported", [], {"construct": construct, "message": exc.message,
                                                       "hint": exc.hint or ""}, span)
    params, dirs, rets = sig
    return Function(fdef.name, tuple(params), tuple(dirs), rets, SeqStmts((EvalStmt(marker, span=span),),
                    span=source.span(fdef)), opts.func_type, opts.level, opts.role, dict(opts.attrs),
                    span=source.span(fdef))


def _host_callees(work: list) -> dict[str, str]:
    """What a HOST orchestrator may call as ``self.<name>``: chip-level orchestrations and HOST SubWorkers."""
    kinds: dict[str, str] = {}
    for node, opts, _parser, _sig in work:
        if opts.level is Level.HOST and opts.role is Role.SubWorker:
            kinds[node.name] = "callback"
        elif opts.func_type in (FunctionType.Orchestration, FunctionType.Opaque) and opts.level is not Level.HOST:
            kinds[node.name] = "chip"
    return kinds


def _is_host_code(fdef: ast.FunctionDef, opts: FuncOptions, kinds: dict[str, str], env: dict[str, Any]) -> bool:
    """A HOST SubWorker, or a HOST function that dispatches (calls a chip program or callback of the class,
    or uses ``pypto.language.distributed``): control-plane code. Any other HOST-level function is plain
    IR and parses like every function (its printed form round-trips)."""
    if opts.level is not Level.HOST:
        return False
    if opts.role is Role.SubWorker:
        return True
    import pypto.language.distributed as pld

    for node in ast.walk(fdef):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            if (node.value.id == "self" and node.attr in kinds) or env.get(node.value.id) is pld:
                return True
    return False


def _parse_host(fdef: ast.FunctionDef, opts: FuncOptions, sig: tuple, source: Source, env: dict[str, Any],
                kinds: dict[str, str]) -> Function:
    """A HOST-level function: an orchestrator's body becomes control-plane Python (``host_source``); a
    SubWorker with a ``...`` body is a runtime-bound callback point (``requires_runtime_binding``)."""
    from pypto.language.distributed.host_frontend import HostFrontend, is_abstract_body

    params, dirs, rets = sig
    attrs = dict(opts.attrs)
    if opts.role is Role.SubWorker:
        if not is_abstract_body(fdef):
            raise UnsupportedFeatureError(
                f"HOST SubWorker '{fdef.name}' has a body; this pypto runs SubWorkers only as runtime-bound "
                "callbacks", source.span(fdef), "write its body as '...' and bind it with prepare(callbacks={...})")
        attrs["requires_runtime_binding"] = True
    else:
        lowered = HostFrontend(source, env, kinds).lower(fdef)
        attrs["host_source"] = lowered.text
        attrs["host_calls"] = tuple(lowered.chip_calls)
        attrs["host_callbacks"] = tuple(lowered.callbacks)
    return Function(fdef.name, tuple(params), tuple(dirs), rets, SeqStmts((), span=source.span(fdef)),
                    opts.func_type, opts.level, opts.role, attrs, span=source.span(fdef))


def parse_function(fdef: ast.FunctionDef, source: Source, env: dict[str, Any], opts: FuncOptions,
                   text_mode: bool = False) -> Function:
    """A standalone ``@pl.function`` -> Function."""
    return FunctionParser(source, env, None, text_mode).parse(fdef, opts)
