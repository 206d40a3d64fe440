"""Statements of a DSL function body: one ``visit_<Node>`` per supported construct; anything else
raises UnsupportedFeatureError with a span (never a silent skip).
"""

from __future__ import annotations

import ast
import dataclasses
from dataclasses import dataclass, field
from typing import Any

from pypto.errors import (
    ParserError,
    ParserSyntaxError,
    ParserTypeError,
    SSAViolationError,
    UnsupportedFeatureError,
    UserError,
)
from pypto.ir.dtypes import DataType
from pypto.ir.enums import INCORE_TYPES, FunctionType, Level, ParamDirection, Role
from pypto.ir.expr import NO_TASK, Call, ConstInt, Expr, GlobalVar, TupleGetItem, Var
from pypto.ir.function import Function
from pypto.ir.ops.infer import dim_eq, fmt_shape, tile_shape
from pypto.ir.stmt import AssignStmt, BreakStmt, ContinueStmt, EvalStmt, ReturnStmt, SeqStmts, Stmt, YieldStmt
from pypto.ir.types import (
    ArrayType,
    ScalarType,
    ShapedType,
    TensorType,
    TileType,
    TupleType,
    Type,
    UnknownType,
)
from pypto.language import dsl
from pypto.language.annotations import AnnotationResolver
from pypto.language.bindings import Scope
from pypto.language.dump_tags import forward_to_inline_calls
from pypto.language.expr_parser import ExprParser, ProgramCtx
from pypto.language.source import Source
from pypto.language.subscript import assemble, write_offsets
from pypto.language.types import DynVar
from pypto.span import Span

_UNSUPPORTED_STMT = {
    "Try": "try statements", "TryStar": "try statements", "Raise": "raise statements",
    "Import": "import statements inside DSL functions", "ImportFrom": "import statements inside DSL functions",
    "FunctionDef": "nested function definitions", "AsyncFunctionDef": "nested function definitions",
    "ClassDef": "class definitions inside DSL functions", "Delete": "del statements",
    "Global": "global statements", "Nonlocal": "nonlocal statements", "Assert": "assert (use pl.static_assert)",
    "Match": "match statements", "AsyncFor": "async for", "AsyncWith": "async with",
}


@dataclass(frozen=True)
class FuncOptions:
    """What ``@pl.function(...)`` said about a function."""

    func_type: FunctionType = FunctionType.Opaque
    level: Level | None = None
    role: Role | None = None
    auto_scope: bool = True
    strict_ssa: bool = False
    attrs: dict[str, Any] = field(default_factory=dict)
    external_source: str | None = None
    allow_bare_tensor: bool = False


@dataclass
class YieldFrame:
    """Collects the ``pl.yield_`` of one loop/if body."""

    kind: str
    values: list[Expr] | None = None
    targets: list[tuple[str, Type | None]] | None = None


class FunctionParser:
    """Parses one ``def`` into an ``ir.Function``."""

    def __init__(self, source: Source, env: dict[str, Any], program: ProgramCtx | None = None,
                 text_mode: bool = False) -> None:
        self.source = source
        self.scope = Scope()
        self.ev = ExprParser(source, env, self.scope, program, text_mode)
        self.resolver = AnnotationResolver(self.ev)
        self.frames: list[YieldFrame] = []
        self.loop_depth = 0
        self.comment_lines = source.comments()
        self.out_params: dict[str, Var] = {}
        self.dump_tags: list[Var] = []  # pl.dump_tag marks, consumed by the pl.at scopes that follow
        self.dump_tags_used = False
        self.func_type_incore = False

    def span(self, node: ast.AST) -> Span:
        return self.source.span(node)

    # -- function -----------------------------------------------------------------------------
    def signature(self, fdef: ast.FunctionDef, opts: FuncOptions) -> tuple[list[Var], list[ParamDirection], tuple[Type, ...]]:
        """Params (bound in scope) and return types."""
        self.scope.strict_ssa = opts.strict_ssa
        self.resolver.allow_bare_tensor = opts.allow_bare_tensor
        a = fdef.args
        for bad, what in ((a.vararg, "*args"), (a.kwarg, "**kwargs")):
            if bad is not None:
                raise UnsupportedFeatureError(f"{what} parameters are not supported", self.span(bad))
        if a.kwonlyargs or a.posonlyargs or a.defaults:
            raise UnsupportedFeatureError("keyword-only, positional-only and default parameters are not supported",
                                          self.span(fdef))
        args = list(a.args)
        if args and args[0].arg == "self" and args[0].annotation is None:
            args = args[1:]
        params, dirs = [], []
        for arg in args:
            if arg.annotation is None:
                raise ParserTypeError(f"Parameter '{arg.arg}' missing type annotation", self.span(arg),
                                      hint=f"write {arg.arg}: pl.Tensor[[M, N], pl.FP32]")
            t, d = self.resolver.param(arg.annotation)
            var = Var(arg.arg, t, span=self.span(arg))
            program = self.ev.program
            if program is None or arg.arg not in program.jit_scalars:  # a specialized jit scalar: the body
                self.scope.bind(arg.arg, var, self.span(arg))  # reads its value (env), as upstream's does
            if d is not ParamDirection.In:
                self.out_params[arg.arg] = var
            params.append(var)
            dirs.append(d)
        rets: tuple[Type, ...] = ()
        if fdef.returns is not None:
            rt = self.resolver.type(fdef.returns)
            rets = rt.types if isinstance(rt, TupleType) else (rt,)
        return params, dirs, rets

    def parse(self, fdef: ast.FunctionDef, opts: FuncOptions, sig: tuple | None = None) -> Function:
        """The Function for ``fdef`` with decorator options ``opts`` (``sig`` from :meth:`signature`)."""
        params, dirs, rets = sig if sig is not None else self.signature(fdef, opts)
        nodes = list(fdef.body)
        doc: tuple[str, ...] = ()
        if nodes and isinstance(nodes[0], ast.Expr) and isinstance(nodes[0].value, ast.Constant) \
                and isinstance(nodes[0].value.value, str):
            doc = tuple(nodes[0].value.value.split("\n"))
            nodes = nodes[1:]
        attrs = dict(opts.attrs)
        if nodes and self._construct(nodes[0]) is dsl.func_attr:
            attrs.update(self._func_attr(nodes[0]))
            nodes = nodes[1:]
        if not opts.auto_scope:
            attrs["auto_scope"] = False
        if opts.external_source is not None:
            from pypto.language.external_kernel import external_function

            return external_function(fdef, opts, (params, dirs, rets), attrs, self.source)
        self.func_type_incore = opts.func_type in INCORE_TYPES
        stmts = self.body(nodes, fdef.lineno, doc, top=True)
        if self.dump_tags and not self.dump_tags_used:
            forwarded = forward_to_inline_calls(stmts, self.dump_tags, getattr(self.ev.program, "externals", {}))
            if forwarded is None:
                raise ParserSyntaxError(
                    f"pl.dump_tag({self.dump_tags[0].name}) is not followed by any pl.at(level=pl.Level.CORE_GROUP) "
                    "scope or inline-function call that could dump it", self.span(fdef),
                    hint="tag tensors before the pl.at scopes that pass them to kernels (or use pl.at(..., "
                         "dumps=[t]))")
            stmts = forwarded
        body = stmts[0] if len(stmts) == 1 else SeqStmts(tuple(stmts), span=self.span(fdef))
        if not rets and opts.func_type is FunctionType.Inline:
            rets = _returned_types(stmts)
        try:
            return Function(fdef.name, tuple(params), tuple(dirs), rets, body, opts.func_type, opts.level,
                            opts.role, attrs, span=self.span(fdef))
        except UserError as exc:
            raise ParserTypeError(exc.message, self.span(fdef), exc.hint) from None

    def _func_attr(self, node: ast.stmt) -> dict[str, Any]:
        call = node.value  # type: ignore[attr-defined]
        args, kwargs = self.ev.call_args(call)
        if len(args) != 1 or not isinstance(args[0], dict) or kwargs:
            raise ParserTypeError("pl.func_attr takes one dict literal", self.span(node))
        return dict(args[0])

    # -- bodies -------------------------------------------------------------------------------
    def body(self, nodes: list[ast.stmt], header_line: int, doc: tuple[str, ...] = (), top: bool = False) -> list[Stmt]:
        """Translate a statement list, attaching leading ``#`` comments (and a docstring)."""
        out: list[Stmt] = []
        prev = header_line
        pending = list(doc)
        for i, node in enumerate(nodes):
            comments = tuple(pending + [self.comment_lines[n] for n in range(prev + 1, node.lineno)
                                        if n in self.comment_lines])
            pending = []
            stmts = self.stmt(node)
            if stmts and isinstance(stmts[-1], YieldStmt) and i != len(nodes) - 1:
                raise ParserSyntaxError("pl.yield_() must be the last statement of its block", self.span(node))
            if stmts and comments:
                stmts[0] = dataclasses.replace(stmts[0], comments=comments)
            elif comments:
                pending = list(comments)
            out.extend(stmts)
            prev = node.end_lineno or node.lineno
        return out

    def stmt(self, node: ast.stmt) -> list[Stmt]:
        method = getattr(self, f"visit_{type(node).__name__}", None)
        if method is None:
            what = _UNSUPPORTED_STMT.get(type(node).__name__, f"'{type(node).__name__}' statements")
            raise UnsupportedFeatureError(f"{what} are not supported in DSL functions", self.span(node))
        return method(node)

    def _construct(self, node: ast.AST) -> dsl.DslConstruct | None:
        call = node.value if isinstance(node, ast.Expr) else node
        if not isinstance(call, ast.Call):
            return None
        f = call.func
        if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "self":
            return None
        try:
            v = self.ev.eval(f)
        except ParserError:
            return None
        return v if isinstance(v, dsl.DslConstruct) else None

    # -- simple statements --------------------------------------------------------------------
    def visit_Pass(self, node: ast.Pass) -> list[Stmt]:  # noqa: N802
        return []

    def visit_Break(self, node: ast.Break) -> list[Stmt]:  # noqa: N802
        self._in_loop(node, "break")
        return [BreakStmt(span=self.span(node))]

    def visit_Continue(self, node: ast.Continue) -> list[Stmt]:  # noqa: N802
        self._in_loop(node, "continue")
        return [ContinueStmt(span=self.span(node))]

    def _in_loop(self, node: ast.stmt, what: str) -> None:
        if self.loop_depth == 0:
            raise ParserSyntaxError(f"'{what}' outside a loop", self.span(node))

    def visit_Return(self, node: ast.Return) -> list[Stmt]:  # noqa: N802
        if node.value is None:
            values: tuple[Expr, ...] = ()
        elif isinstance(node.value, ast.Tuple):
            values = tuple(self.ev.expr(e) for e in node.value.elts)
        else:
            values = (self.ev.expr(node.value),)
        return [ReturnStmt(values, span=self.span(node))]

    def visit_Expr(self, node: ast.Expr) -> list[Stmt]:  # noqa: N802
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return []
        if _is_bind_dynamic(node.value):
            return self._bind_dynamic(node.value)  # type: ignore[arg-type]
        c = self._construct(node)
        if c is dsl.yield_:
            return self._yield(node.value, None)  # type: ignore[arg-type]
        if c is dsl.static_print:
            return []
        if c is dsl.dump_tag:
            return self._dump_tag(node.value)  # type: ignore[arg-type]
        if c is dsl.static_assert:
            return self._static_assert(node.value)  # type: ignore[arg-type]
        if c is dsl.func_attr:
            raise ParserSyntaxError("pl.func_attr(...) must be the first statement of the function", self.span(node))
        return [EvalStmt(self.ev.expr(node.value), span=self.span(node))]

    def _bind_dynamic(self, call: ast.Call) -> list[Stmt]:
        """``t.bind_dynamic(axis, N)``: a no-op once parsed (``@pl.jit`` already typed axis ``axis`` of ``t``
        with the ``pl.dynamic`` ``N``); checked so a wrong call is a located error, not a silent one."""
        base = self.ev.eval(call.func.value)  # type: ignore[attr-defined]
        args, kwargs = self.ev.call_args(call)
        t = base.type if isinstance(base, Expr) else None
        if not isinstance(t, TensorType) or kwargs or len(args) != 2 or not isinstance(args[0], int) \
                or not isinstance(args[1], DynVar):
            raise ParserTypeError("bind_dynamic is called on a tensor as t.bind_dynamic(axis, pl.dynamic(...)) "
                                  "with an integer axis", self.span(call))
        if not -len(t.shape) <= args[0] < len(t.shape):
            raise ParserTypeError(f"bind_dynamic: axis {args[0]} is out of range for a rank-{len(t.shape)} tensor",
                                  self.span(call))
        return []

    def _dump_tag(self, call: ast.Call) -> list[Stmt]:
        """``pl.dump_tag(t, ...)``: every later ``pl.at(level=CORE_GROUP)`` scope dumps ``t`` if it passes it."""
        args, kwargs = self.ev.call_args(call)
        if kwargs or not args:
            raise ParserTypeError("pl.dump_tag takes the tensors to mark, positionally", self.span(call))
        if self.func_type_incore:
            raise ParserSyntaxError("pl.dump_tag is not supported in a kernel (InCore / AIC / AIV) function",
                                    self.span(call), hint="tag the tensor in the orchestration that passes it")
        for a in args:
            e = self.ev.to_expr(a, self.span(call))
            if not isinstance(e, Var) or not isinstance(e.var_type, TensorType):
                raise ParserTypeError("pl.dump_tag marks tensors: pass a tensor variable", self.span(call))
            self.dump_tags.append(e)
        return []

    def _static_assert(self, call: ast.Call) -> list[Stmt]:
        args, kwargs = self.ev.call_args(call)
        if not args or not isinstance(args[0], bool):
            raise ParserTypeError("pl.static_assert needs a condition known at parse time", self.span(call))
        if not args[0]:
            msg = kwargs.get("msg", args[1] if len(args) > 1 else "")
            raise ParserError(f"static assertion failed: {msg}", self.span(call))
        return []

    # -- assignments --------------------------------------------------------------------------
    def visit_Assign(self, node: ast.Assign) -> list[Stmt]:  # noqa: N802
        if len(node.targets) != 1:
            raise UnsupportedFeatureError("chained assignment (a = b = ...) is not supported", self.span(node))
        target = node.targets[0]
        if self._construct(node.value) is dsl.yield_:
            return self._yield(node.value, target)  # type: ignore[arg-type]
        if isinstance(target, ast.Subscript):
            return self._subscript_assign(target, node.value, node)
        if isinstance(target, ast.Name):
            return self._assign(target, node.value, None, node)
        if isinstance(target, (ast.Tuple, ast.List)):
            return self._unpack_assign(target, node.value, node)
        raise UnsupportedFeatureError(f"assignment to '{ast.unparse(target)}' is not supported", self.span(target),
                                      hint="assign to a name, a tuple of names (a, b = f(...)) or dst[...]")

    def visit_AnnAssign(self, node: ast.AnnAssign) -> list[Stmt]:  # noqa: N802
        if node.value is None:
            raise UnsupportedFeatureError("annotation without a value is not supported", self.span(node))
        if not isinstance(node.target, ast.Name):
            raise UnsupportedFeatureError("annotated assignment needs a plain name target", self.span(node.target))
        if self._construct(node.value) is dsl.yield_:
            return self._yield(node.value, node.target, node.annotation)  # type: ignore[arg-type]
        return self._assign(node.target, node.value, node.annotation, node)

    def visit_AugAssign(self, node: ast.AugAssign) -> list[Stmt]:  # noqa: N802
        if not isinstance(node.target, ast.Name):
            raise UnsupportedFeatureError("augmented assignment needs a plain name target", self.span(node))
        load = ast.copy_location(ast.Name(node.target.id, ast.Load()), node.target)
        value = ast.copy_location(ast.BinOp(load, node.op, node.value), node)
        ast.fix_missing_locations(value)
        return self._assign(node.target, value, None, node)

    def _assign(self, target: ast.Name, value_node: ast.expr, ann: ast.expr | None, node: ast.stmt) -> list[Stmt]:
        if isinstance(value_node, ast.Constant) and value_node.value is None and not self.func_type_incore:
            value: Expr = ConstInt(NO_TASK, DataType.TASK_ID, span=self.span(value_node))  # `tid = None`: no task yet
        else:
            value = self.ev.expr(value_node)
        vtype = value.type
        if ann is not None:
            ann_t = self.resolver.type(ann)
            value = _with_task_id(value, ann_t)
            vtype = merge_annotation(ann_t, value.type, target.id, self.span(ann))
        return self._bind_name(target, value, vtype, node)

    def _bind_name(self, target: ast.Name, value: Expr, vtype: Type, node: ast.stmt) -> list[Stmt]:
        span = self.span(node)
        self._check_out_rebind(target.id, vtype, span)
        var = Var(target.id, vtype, span=self.span(target))
        self.scope.bind(target.id, var, self.span(target))
        self.ev.defs[var] = value
        return [AssignStmt(var, value, span=span)]

    def _unpack_assign(self, target: ast.Tuple | ast.List, value_node: ast.expr, node: ast.stmt) -> list[Stmt]:
        """``a, b = f(...)``: the value is computed once (a ``_tuple_tmp`` binding), then each name gets
        its ``TupleGetItem``; ``m, n = x.shape`` binds the elements of a parse-time sequence."""
        _check_unpack_target(self, target)
        value = self.ev.eval(value_node)
        if isinstance(value, (tuple, list)) and all(isinstance(e, ast.Name) for e in target.elts):
            if len(value) != len(target.elts):
                raise ParserTypeError(f"cannot unpack {len(value)} values into {len(target.elts)} names",
                                      self.span(node))
            stmts: list[Stmt] = []
            for name, v in zip(target.elts, value, strict=True):
                e = self.ev.to_expr(v, self.span(value_node))
                stmts += self._bind_name(name, e, e.type, node)  # type: ignore[arg-type]
            return stmts
        return self.bind_unpack(target, self.ev.to_expr(value, self.span(value_node), value_node), node)

    def bind_unpack(self, target: ast.expr, value: Expr, node: ast.stmt) -> list[Stmt]:
        """Bind a name, or a (nested) tuple of names, to ``value`` (one TupleGetItem per element)."""
        if isinstance(target, ast.Name):
            return self._bind_name(target, value, value.type, node)
        assert isinstance(target, (ast.Tuple, ast.List))
        t = value.type
        if not isinstance(t, TupleType) or len(t.types) != len(target.elts):
            got = f"{len(t.types)} values" if isinstance(t, TupleType) else f"a {type(t).__name__.replace('Type', '')}"
            n = len(target.elts)
            raise ParserTypeError(f"cannot unpack {got} into {n} name{'s' if n != 1 else ''}", self.span(target),
                                  hint="the right-hand side must return exactly one value per name")
        span = self.span(node)
        tmp = Var("_tuple_tmp", t, span=span)
        stmts: list[Stmt] = [AssignStmt(tmp, value, span=span)]
        for i, elt in enumerate(target.elts):
            stmts += self.bind_unpack(elt, TupleGetItem(tmp, i, span=self.span(elt)), node)
        return stmts

    def _check_out_rebind(self, name: str, new: Type, span: Span) -> None:
        param = self.out_params.get(name)
        if param is None or self.scope.lookup(name) is not param:
            return
        old = param.var_type
        if isinstance(old, ShapedType) and isinstance(new, ShapedType):
            same = old.rank == new.rank and all(dim_eq(a, b) for a, b in zip(old.shape, new.shape, strict=True))
            if same and old.dtype is new.dtype and type(old) is type(new):
                return
        raise ParserTypeError(f"Cannot reassign '{name}' with a different type", span,
                              hint=f"write into the output with '{name}[:] = <expr>'")

    def _subscript_assign(self, target: ast.Subscript, value_node: ast.expr, node: ast.stmt) -> list[Stmt]:
        span = self.span(node)
        if not isinstance(target.value, ast.Name):
            raise UnsupportedFeatureError("subscript assignment needs a plain name: dst[...] = value", span)
        name = target.value.id
        if self.scope.strict_ssa:
            raise SSAViolationError(f"'{name}[...] = ...' rebinds '{name}' (not allowed with strict_ssa=True)", span,
                                    hint=f"write {name}_new = pl.assemble({name}, value, [offsets])")
        base = self.ev.expr(target.value)
        if isinstance(base.type, ArrayType):  # arr[i] = v: a functional update that rebinds arr
            call = self.ev.array_call("array.update_element", [base, target.slice, value_node], target, span)
            var = Var(name, call.type, span=self.span(target.value))
            self.scope.bind(name, var, span)
            return [AssignStmt(var, call, span=span)]
        value = self.ev.expr(value_node)
        offs = write_offsets(self.ev, base, target.slice, span)
        try:
            call = assemble(base, value, offs, span)
        except ParserError:
            raise
        except UserError as exc:
            raise ParserTypeError(exc.message, span, exc.hint) from None
        var = Var(name, call.type, span=self.span(target.value))
        self.scope.bind(name, var, span)
        return [AssignStmt(var, call, span=span)]

    # -- yields -------------------------------------------------------------------------------
    def _yield(self, call: ast.Call, target: ast.expr | None, ann: ast.expr | None = None) -> list[Stmt]:
        span = self.span(call)
        if not self.frames:
            raise ParserSyntaxError("pl.yield_() outside a loop or if", span,
                                    hint="pl.yield_ binds the results of the enclosing pl.range loop or if/else")
        if call.keywords:
            raise ParserTypeError("pl.yield_() takes positional values only", span)
        values = [self.ev.expr(a) for a in call.args]
        frame = self.frames[-1]
        if frame.values is not None:
            raise ParserSyntaxError("a block can yield only once", span)
        frame.values = values
        if target is not None:
            names = target.elts if isinstance(target, ast.Tuple) else [target]
            if not all(isinstance(n, ast.Name) for n in names) or len(names) != len(values):
                raise ParserTypeError(f"pl.yield_ of {len(values)} values needs {len(values)} target names", span)
            ann_t = self.resolver.type(ann) if ann is not None else None
            frame.targets = [(n.id, ann_t) for n in names]  # type: ignore[attr-defined]
        return [YieldStmt(tuple(values), span=span)]

    def push(self, kind: str) -> YieldFrame:
        frame = YieldFrame(kind)
        self.frames.append(frame)
        return frame

    def pop(self) -> YieldFrame:
        return self.frames.pop()

    # -- compound statements (control.py) -----------------------------------------------------
    def visit_For(self, node: ast.For) -> list[Stmt]:  # noqa: N802
        from pypto.language.control import parse_for

        return parse_for(self, node)

    def visit_While(self, node: ast.While) -> list[Stmt]:  # noqa: N802
        from pypto.language.control import parse_plain_while

        return parse_plain_while(self, node)

    def visit_If(self, node: ast.If) -> list[Stmt]:  # noqa: N802
        from pypto.language.control import parse_if

        return parse_if(self, node)

    def visit_With(self, node: ast.With) -> list[Stmt]:  # noqa: N802
        from pypto.language.control import parse_with

        return parse_with(self, node)


def _check_unpack_target(p: FunctionParser, target: ast.expr) -> None:
    """Every leaf of an unpacking target must be a plain name."""
    for elt in target.elts:  # type: ignore[attr-defined]
        if isinstance(elt, (ast.Tuple, ast.List)):
            _check_unpack_target(p, elt)
        elif not isinstance(elt, ast.Name):
            raise ParserSyntaxError(f"tuple unpacking target must be a variable name, got '{ast.unparse(elt)}'",
                                    p.span(elt), hint="unpack into names first (a, b = f(...)), then write "
                                                      "dst[...] = a")


def _with_task_id(value: Expr, ann: Type) -> Expr:
    """A kernel call annotated ``tuple[<its results>..., pl.Scalar[pl.TASK_ID]]`` also yields its task id.

    (``with pl.at(...) as tid`` outlines to such a call.)
    """
    if not (isinstance(value, Call) and isinstance(value.op, GlobalVar) and isinstance(ann, TupleType)):
        return value
    rets = value.result_type.types if isinstance(value.result_type, TupleType) else (value.result_type,)
    last = ann.types[-1] if ann.types else None
    if isinstance(last, ScalarType) and last.dtype is DataType.TASK_ID and tuple(ann.types[:-1]) == tuple(rets):
        return dataclasses.replace(value, result_type=ann)
    return value


def merge_annotation(ann: Type, inferred: Type, name: str, span: Span) -> Type:
    """The Var type of ``name: ann = value``: shape/dtype must agree; memref/space/view from ``ann``."""
    if isinstance(inferred, UnknownType) or isinstance(ann, TupleType):
        return ann
    if isinstance(ann, ScalarType):
        if not isinstance(inferred, ScalarType):
            raise ParserTypeError(f"'{name}' is annotated as a Scalar but the value is a "
                                  f"{type(inferred).__name__.replace('Type', '')}", span)
        return ann
    if type(ann) is not type(inferred):
        raise ParserTypeError(f"'{name}' is annotated as {type(ann).__name__.replace('Type', '')} but the value "
                              f"is a {type(inferred).__name__.replace('Type', '')}", span)
    if not isinstance(ann, ShapedType) or not isinstance(inferred, ShapedType):
        return ann
    ann_shape = tile_shape(ann.shape) if isinstance(ann, TileType) else ann.shape  # tiles are 2-D: N-D flattened
    if len(ann_shape) != inferred.rank or not all(dim_eq(a, b) for a, b in zip(ann_shape, inferred.shape,
                                                                               strict=True)):
        raise ParserTypeError(f"shape mismatch for '{name}': annotation {fmt_shape(ann.shape)} vs value "
                              f"{fmt_shape(inferred.shape)}", span)
    if ann.dtype is not inferred.dtype:
        raise ParserTypeError(f"dtype mismatch for '{name}': annotation {ann.dtype.value} vs value "
                              f"{inferred.dtype.value}", span, hint="insert pl.cast(x, ...) to convert")
    if isinstance(ann, TileType) and isinstance(inferred, TileType):
        return TileType(ann.shape if ann.rank == inferred.rank else inferred.shape, ann.dtype, ann.memref or inferred.memref, ann.view or inferred.view,
                        ann.memory_space or inferred.memory_space)
    assert isinstance(ann, TensorType) and isinstance(inferred, TensorType)
    return TensorType(ann.shape, ann.dtype, ann.memref or inferred.memref, ann.view or inferred.view)


def _is_bind_dynamic(value: ast.expr) -> bool:
    return (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)
            and value.func.attr == "bind_dynamic")


def _returned_types(stmts: list[Stmt]) -> tuple[Type, ...]:
    """The types of an unannotated inline helper's final ``return`` (what its call sites see); none when
    one is unknown or has a dynamic shape (its dims could name the helper's own variables)."""
    last = stmts[-1] if stmts else None
    if not isinstance(last, ReturnStmt):
        return ()
    types = tuple(v.type for v in last.values)
    if any(isinstance(t, UnknownType) or (isinstance(t, ShapedType) and t.static_shape() is None) for t in types):
        return ()
    return types
