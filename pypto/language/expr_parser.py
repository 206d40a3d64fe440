"""Expressions of a DSL body: names, constants (closure constants folded), Python operators, op
calls through the registry (with unified dispatch), program calls ``self.f(...)``, subscripts.

``eval`` returns either an IR ``Expr`` or a plain Python value (a number, a dtype, an enum, a stub,
a list); ``expr`` converts the result to an ``Expr``.
"""

from __future__ import annotations

import ast
import contextlib
import operator
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from pypto.errors import (
    ParserError,
    ParserTypeError,
    UndefinedVariableError,
    UnsupportedFeatureError,
    UserError,
)
from pypto.ir.dtypes import DataType
from pypto.ir.expr import (
    COMPARISONS,
    BinaryExpr,
    BinOp,
    Call,
    ConstFloat,
    ConstInt,
    Expr,
    GlobalVar,
    MakeTuple,
    TupleGetItem,
    UnaryExpr,
    UnOp,
    Var,
)
from pypto.ir.types import ArrayType, ScalarType, ShapedType, TupleType, Type, UnknownType
from pypto.language import dsl, types
from pypto.language.bindings import Scope
from pypto.language.calls import call_op, call_unified
from pypto.language.source import Source
from pypto.span import Span

_BINOPS = {ast.Add: BinOp.Add, ast.Sub: BinOp.Sub, ast.Mult: BinOp.Mul, ast.Div: BinOp.FloatDiv,
           ast.FloorDiv: BinOp.FloorDiv, ast.Mod: BinOp.FloorMod, ast.Pow: BinOp.Pow,
           ast.BitAnd: BinOp.BitAnd, ast.BitOr: BinOp.BitOr, ast.BitXor: BinOp.BitXor,
           ast.LShift: BinOp.BitShiftLeft, ast.RShift: BinOp.BitShiftRight}
_CMPOPS = {ast.Eq: BinOp.Eq, ast.NotEq: BinOp.Ne, ast.Lt: BinOp.Lt, ast.LtE: BinOp.Le, ast.Gt: BinOp.Gt,
           ast.GtE: BinOp.Ge}
_PYOPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
          ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow,
          ast.BitAnd: operator.and_, ast.BitOr: operator.or_, ast.BitXor: operator.xor,
          ast.LShift: operator.lshift, ast.RShift: operator.rshift}
_MISSING = object()
_TENSOR_OPS = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div"}
_UNSUPPORTED = {"Lambda": "lambda expressions", "IfExp": "conditional expressions (x if c else y)",
                "DictComp": "dict comprehensions",
                "SetComp": "set comprehensions", "GeneratorExp": "generator expressions",
                "Await": "await", "Yield": "yield (use pl.yield_)", "YieldFrom": "yield from",
                "NamedExpr": "assignment expressions (:=)", "Starred": "starred arguments",
                "JoinedStr": "f-strings", "Set": "set literals"}


@dataclass
class ProgramCtx:
    """Signatures of the functions of the program being parsed (for ``self.f(...)`` calls)."""

    returns: dict[str, tuple[Type, ...]] = field(default_factory=dict)
    arity: dict[str, int] = field(default_factory=dict)
    externals: dict[str, Any] = field(default_factory=dict)
    jit_scalars: frozenset[str] = frozenset()  # a jit function's specialized scalar parameters
    memref_names: dict[int, str] = field(default_factory=dict)  # id of an unnamed pl.MemRef(...) -> its variable


def describe(node: ast.AST) -> str:
    """A user-facing name of a Python construct."""
    return _UNSUPPORTED.get(type(node).__name__, f"'{type(node).__name__}' expressions")


class ExprParser:
    """Translates expression AST nodes of one function body."""

    def __init__(self, source: Source, env: dict[str, Any], scope: Scope, program: ProgramCtx | None = None,
                 text_mode: bool = False) -> None:
        self.source = source
        self.env = env
        self.scope = scope
        self.program = program
        self.text_mode = text_mode
        self.defs: dict[Var, Expr] = {}  # the value each assigned name was bound to (pl.batch_matmul reads it)
        self.constants: dict[str, Any] = {}  # loop names of a list comprehension being unrolled
        # unnamed ``buf = pl.MemRef(slots=N)`` declarations seen so far: id of the declaration -> its name
        self.memref_names: dict[int, str] = program.memref_names if program is not None else {}

    def span(self, node: ast.AST) -> Span:
        return self.source.span(node)

    # -- entry points -------------------------------------------------------------------------
    def eval(self, node: ast.AST, dyn_ok: bool = False) -> Any:
        """The value of ``node``: an IR Expr or a Python value."""
        method = getattr(self, f"visit_{type(node).__name__}", None)
        if method is None:
            raise UnsupportedFeatureError(f"{describe(node)} are not supported in DSL functions",
                                          self.span(node))
        if dyn_ok and isinstance(node, ast.Name):
            return self.visit_Name(node, dyn_ok=True)
        return method(node)

    def expr(self, node: ast.AST) -> Expr:
        """The value of ``node`` as an IR Expr."""
        return self.to_expr(self.eval(node), self.span(node), node)

    def to_expr(self, value: Any, span: Span, node: ast.AST | None = None) -> Expr:
        """Python numbers -> constants, lists -> MakeTuple, dynamic dims -> their Var."""
        if isinstance(value, Expr):
            return value
        if isinstance(value, bool):
            from pypto.ir.expr import ConstBool

            return ConstBool(value, span=span)
        if isinstance(value, int):
            return ConstInt(value, DataType.INDEX, span=span)
        if isinstance(value, float):
            return ConstFloat(value, DataType.FP32, span=span)
        if isinstance(value, types.DynVar):
            return value.var
        if isinstance(value, (list, tuple)):
            return MakeTuple(tuple(self.to_expr(v, span) for v in value), span=span)
        if isinstance(value, Unsupported):
            raise value.error(span)
        what = ast.unparse(node) if node is not None else repr(value)
        raise ParserTypeError(f"'{what}' is not a value that can be used here", span)

    # -- leaves -------------------------------------------------------------------------------
    def visit_Constant(self, node: ast.Constant) -> Any:  # noqa: N802
        return node.value

    def visit_Name(self, node: ast.Name, dyn_ok: bool = False) -> Any:  # noqa: N802
        if node.id in self.constants:
            return self.constants[node.id]
        var = self.scope.lookup(node.id)
        if var is not None:
            return var
        if node.id in self.env:
            return self.env[node.id]
        import builtins

        if node.id in ("tuple", "int", "float", "bool", "None", "True", "False"):
            return getattr(builtins, node.id)
        if dyn_ok and self.text_mode:
            dv = self.env[node.id] = types.DynVar(node.id)
            return dv
        if node.id in self.scope.unmerged:
            raise UndefinedVariableError(f"name '{node.id}' is not defined here: {self.scope.unmerged[node.id]}",
                                         self.span(node), hint=f"bind '{node.id}' before the if, or in both "
                                         "branches outside any loop with values of one kind")
        raise UndefinedVariableError(f"name '{node.id}' is not defined", self.span(node),
                                     hint="define it before use, or pass it as a parameter")

    def visit_Attribute(self, node: ast.Attribute) -> Any:  # noqa: N802
        if isinstance(node.value, ast.Name) and node.value.id == "self" and self.scope.lookup("self") is None:
            raise ParserTypeError(f"'self.{node.attr}' can only be called: self.{node.attr}(...)", self.span(node))
        base = self.eval(node.value)
        if isinstance(base, Expr):
            return self._expr_attr(base, node)
        try:
            return getattr(base, node.attr)
        except AttributeError:
            raise UndefinedVariableError(f"'{ast.unparse(node.value)}' has no attribute '{node.attr}'",
                                         self.span(node)) from None

    def _expr_attr(self, base: Expr, node: ast.Attribute) -> Any:
        t = base.type
        if isinstance(t, ShapedType) and node.attr == "shape":
            return list(t.shape)
        if isinstance(t, (ShapedType, ScalarType)) and node.attr == "dtype":
            return t.dtype
        raise UnsupportedFeatureError(f"attribute '.{node.attr}' of a value is not supported", self.span(node))

    def visit_List(self, node: ast.List) -> list[Any]:  # noqa: N802
        return [self.eval(e) for e in node.elts]

    def visit_ListComp(self, node: ast.ListComp) -> list[Any]:  # noqa: N802
        from pypto.language.comprehension import unroll_list_comp

        return unroll_list_comp(self, node)

    @contextlib.contextmanager
    def bound_constant(self, name: str, value: Any) -> Iterator[None]:
        """Parse with ``name`` bound to the Python value ``value`` (shadowing any variable)."""
        saved = self.constants.get(name, _MISSING)
        self.constants[name] = value
        try:
            yield
        finally:
            if saved is _MISSING:
                del self.constants[name]
            else:
                self.constants[name] = saved

    def visit_Tuple(self, node: ast.Tuple) -> list[Any]:  # noqa: N802
        return [self.eval(e) for e in node.elts]

    def visit_Dict(self, node: ast.Dict) -> dict[Any, Any]:  # noqa: N802
        out: dict[Any, Any] = {}
        for k, v in zip(node.keys, node.values, strict=True):
            if k is None:
                raise UnsupportedFeatureError("'**' in dict literals is not supported", self.span(node))
            out[self.eval(k)] = self.eval(v)
        return out

    # -- operators ----------------------------------------------------------------------------
    def visit_UnaryOp(self, node: ast.UnaryOp) -> Any:  # noqa: N802
        v = self.eval(node.operand)
        span = self.span(node)
        if isinstance(v, (int, float)) and not isinstance(v, bool) and isinstance(node.op, (ast.USub, ast.UAdd)):
            return -v if isinstance(node.op, ast.USub) else v
        if isinstance(node.op, ast.UAdd):
            return v
        e = self.to_expr(v, span, node.operand)
        if isinstance(e.type, ShapedType) and isinstance(node.op, ast.USub):
            return call_unified("neg", [e], {}, span)
        op = {ast.USub: UnOp.Neg, ast.Not: UnOp.Not, ast.Invert: UnOp.BitNot}[type(node.op)]
        dtype = DataType.BOOL if op is UnOp.Not else _scalar_dtype(e, span)
        return UnaryExpr(op, e, dtype, span=span)

    def visit_BinOp(self, node: ast.BinOp) -> Any:  # noqa: N802
        lhs, rhs = self.eval(node.left), self.eval(node.right)
        span = self.span(node)
        op_type = type(node.op)
        if op_type not in _BINOPS:
            raise UnsupportedFeatureError(f"operator '{ast.unparse(node)}' is not supported", span)
        if _is_num(lhs) and _is_num(rhs):
            try:
                return _PYOPS[op_type](lhs, rhs)
            except ZeroDivisionError:
                raise ParserTypeError("division by zero in a constant expression", span) from None
        a = self.to_expr(lhs, self.span(node.left), node.left)
        b = self.to_expr(rhs, self.span(node.right), node.right)
        if isinstance(a.type, ShapedType) or isinstance(b.type, ShapedType):
            return self._shaped_binop(op_type, a, b, span)
        return scalar_binop(_BINOPS[op_type], a, b, span)

    def _shaped_binop(self, op_type: type, a: Expr, b: Expr, span: Span) -> Expr:
        name = _TENSOR_OPS.get(op_type)
        if name is None:
            raise UnsupportedFeatureError("only + - * / are supported on tensors and tiles", span)
        if not isinstance(a.type, ShapedType):
            if name not in ("add", "mul"):
                raise ParserTypeError(f"scalar {name} tensor is not supported; write the tensor first", span)
            a, b = b, a
        return call_unified(name, [a, b], {}, span)

    def visit_Compare(self, node: ast.Compare) -> Any:  # noqa: N802
        if len(node.ops) != 1:
            raise UnsupportedFeatureError("chained comparisons are not supported", self.span(node))
        op = _CMPOPS.get(type(node.ops[0]))
        if op is None:
            raise UnsupportedFeatureError(f"comparison '{ast.unparse(node)}' is not supported", self.span(node))
        lhs, rhs = self.eval(node.left), self.eval(node.comparators[0])
        if _is_num(lhs) and _is_num(rhs):
            return _PYOPS_CMP[op](lhs, rhs)
        a = self.to_expr(lhs, self.span(node.left), node.left)
        b = self.to_expr(rhs, self.span(node.comparators[0]), node.comparators[0])
        return scalar_binop(op, a, b, self.span(node))

    def visit_BoolOp(self, node: ast.BoolOp) -> Any:  # noqa: N802
        op = BinOp.And if isinstance(node.op, ast.And) else BinOp.Or
        out = self.expr(node.values[0])
        for v in node.values[1:]:
            out = BinaryExpr(op, out, self.expr(v), DataType.BOOL, span=self.span(node))
        return out

    # -- subscripts ---------------------------------------------------------------------------
    def visit_Subscript(self, node: ast.Subscript) -> Any:  # noqa: N802
        base = self.eval(node.value)
        span = self.span(node)
        if isinstance(base, (types.TypeCtor,)) or base is tuple:
            raise ParserTypeError(f"type '{ast.unparse(node)}' used as a value", span)
        if isinstance(base, (list, tuple)):
            idx = self.eval(node.slice)
            if isinstance(idx, int):
                return base[idx]
        if isinstance(base, Expr) and isinstance(base.type, TupleType):
            return self._tuple_item(base, node, span)
        if isinstance(base, types._CallSpec) and base.ctor == "MemRef":
            return base[self.eval(node.slice)]  # pl.MemRef(name, slots=N)[k] (slots=1: refused with the type)
        if isinstance(base, Expr) and isinstance(base.type, ArrayType):
            return self.array_call("array.get_element", [base, node.slice], node, span)
        if not isinstance(base, Expr) or not isinstance(base.type, ShapedType):
            raise ParserTypeError(f"'{ast.unparse(node.value)}' cannot be subscripted", span)
        from pypto.language.subscript import read_subscript

        return read_subscript(self, base, node.slice, span)

    def array_call(self, op: str, operands: list[Any], node: ast.AST, span: Span) -> Expr:
        """``arr[i]`` / ``arr[i] = v``: an ``array.*`` op; the index is one integer expression."""
        if isinstance(operands[1], ast.Slice | ast.Tuple):
            raise ParserTypeError(f"'{ast.unparse(node)}': a pl.Array takes one integer index", span)
        exprs = [operands[0], *(self.expr(o) if isinstance(o, ast.AST) else o for o in operands[1:])]
        return call_op(op, exprs, {}, span)

    def _tuple_item(self, base: Expr, node: ast.Subscript, span: Span) -> Expr:
        """``t[i]`` on a tuple-typed value (a multi-result call) -> TupleGetItem."""
        idx = None if isinstance(node.slice, ast.Slice | ast.Tuple) else self.eval(node.slice)
        n = len(base.type.types)  # type: ignore[attr-defined]
        if isinstance(idx, bool) or not isinstance(idx, int) or not 0 <= idx < n:
            raise ParserTypeError(f"'{ast.unparse(node)}': a tuple of {n} values takes a constant index "
                                  f"0..{n - 1}", span)
        return TupleGetItem(base, idx, span=span)

    # -- calls --------------------------------------------------------------------------------
    def visit_Call(self, node: ast.Call) -> Any:  # noqa: N802
        span = self.span(node)
        f = node.func
        if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "self":
            return self.program_call(f.attr, node, span)
        target = self.eval(f)
        handler = _CALL_HANDLERS.get(type(target))
        if handler is not None:
            return handler(self, target, node, span)
        if callable(target) and target in _OPTION_CTORS.values():
            return _option(self, target, node, span)
        if target in (types.MemRef, types.TileView, types.TensorView):
            args, kwargs = self.call_args(node)
            return types._CallSpec(target.__name__, tuple(args), kwargs)
        if target is types.dynamic:
            args, _ = self.call_args(node)
            return types.DynVar(args[0])
        from pypto.ir.function import Function

        if isinstance(target, Function):
            return self._external_call(target, node, span)
        raise UnsupportedFeatureError(f"calling '{ast.unparse(f)}' is not supported in DSL functions", span,
                                      hint="use pl.* ops, self.<function>(...) or a @pl.function")

    def call_args(self, node: ast.Call) -> tuple[list[Any], dict[str, Any]]:
        """Evaluated positional and keyword arguments."""
        for a in node.args:
            if isinstance(a, ast.Starred):
                raise UnsupportedFeatureError("'*args' in calls is not supported", self.span(a))
        kwargs: dict[str, Any] = {}
        for kw in node.keywords:
            if kw.arg is None:
                raise UnsupportedFeatureError("'**kwargs' in calls is not supported", self.span(kw))
            kwargs[kw.arg] = self.eval(kw.value)
        return [self.eval(a) for a in node.args], kwargs

    def _op(self, stub: Any, node: ast.Call, span: Span) -> Expr:
        args, kwargs = self.call_args(node)
        if stub.op == "tile.batch_matmul":
            from pypto.language.batch_operands import batch_kwargs

            args, kwargs = batch_kwargs(self.defs, args, kwargs)
        return call_op(stub.op, args, kwargs, span, convenience=stub.convenience, to_expr=self._to_expr_at(node))

    def _unified(self, stub: Any, node: ast.Call, span: Span) -> Expr:
        args, kwargs = self.call_args(node)
        conv = self._to_expr_at(node)
        return call_unified(stub.name, [conv(a, i) for i, a in enumerate(args[:1])] + args[1:], kwargs, span,
                            to_expr=conv)

    def _to_expr_at(self, node: ast.Call):
        def conv(value: Any, index: int = -1) -> Any:
            sub = node.args[index] if 0 <= index < len(node.args) else node
            return self.to_expr(value, self.span(sub), sub)
        return conv

    def _construct(self, c: dsl.DslConstruct, node: ast.Call, span: Span) -> Any:
        if c is dsl.const:
            args, kwargs = self.call_args(node)
            return make_const(args, kwargs, span)
        if c in (dsl.submit, dsl.spmd_submit):
            from pypto.language.submit_call import parse_submit

            return parse_submit(self, c is dsl.spmd_submit, node, span)
        if c is dsl.task_dummy:
            from pypto.language.submit_call import parse_task_dummy

            return parse_task_dummy(self, node, span)
        if c is dsl.unsupported:
            raise marker_error(self.call_args(node)[1], span)
        where = {"yield_": "as a statement `x = pl.yield_(...)` inside a loop or if",
                 "range": "as a for-loop iterator", "parallel": "as a for-loop iterator",
                 "unroll": "as a for-loop iterator", "pipeline": "as a for-loop iterator",
                 "at": "in a with-statement", "scope": "in a with-statement", "cluster": "in a with-statement",
                 "manual_scope": "in a with-statement", "func_attr": "as the first statement of a function",
                 "cond": "as the first statement of a pl.while_ loop", "while_": "as a for-loop iterator",
                 "spmd": "as a for-loop iterator or in a with-statement"}
        raise ParserError(f"pl.{c.name}() can only be used {where.get(c.name, 'as a statement')}", span)

    def program_call(self, name: str, node: ast.Call, span: Span) -> Expr:
        """``self.f(args..., attrs={...})`` -> Call(GlobalVar)."""
        if self.program is None or name not in self.program.returns:
            raise UndefinedVariableError(f"program has no function '{name}'", span,
                                         hint="self.<name>(...) calls a function of the same @pl.program")
        args, kwargs = self.call_args(node)
        attrs = kwargs.pop("attrs", {}) or {}
        if kwargs:
            raise ParserTypeError(f"self.{name}() got an unexpected keyword argument '{next(iter(kwargs))}'", span)
        conv = self._to_expr_at(node)
        exprs = tuple(conv(a, i) for i, a in enumerate(args))
        if len(exprs) != self.program.arity[name]:
            raise ParserTypeError(f"self.{name}() takes {self.program.arity[name]} arguments but "
                                  f"{len(exprs)} were given", span)
        return Call(GlobalVar(name, span=span), exprs, {}, _norm_attrs(attrs),
                    _result_type(self.program.returns[name]), span=span)

    def _external_call(self, func: Any, node: ast.Call, span: Span) -> Expr:
        if self.program is None:
            raise UnsupportedFeatureError("calling another @pl.function needs a @pl.program", span)
        prev = self.program.externals.get(func.name)
        if prev is not None and prev is not func:
            raise ParserTypeError(f"two different functions named '{func.name}'", span)
        self.program.externals[func.name] = func
        self.program.returns[func.name] = func.return_types
        self.program.arity[func.name] = len(func.params)
        return self.program_call(func.name, node, span)


def _norm_attrs(attrs: dict[str, Any]) -> dict[str, Any]:
    return {k: tuple(v) if isinstance(v, list) else v for k, v in attrs.items()}


def _result_type(rets: tuple[Type, ...]) -> Type:
    if len(rets) == 1:
        return rets[0]
    return TupleType(rets) if rets else UnknownType()


def _is_num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


_PYOPS_CMP = {BinOp.Eq: operator.eq, BinOp.Ne: operator.ne, BinOp.Lt: operator.lt, BinOp.Le: operator.le,
              BinOp.Gt: operator.gt, BinOp.Ge: operator.ge}


def _scalar_dtype(e: Expr, span: Span) -> DataType:
    t = e.type
    if isinstance(t, ScalarType):
        return t.dtype
    raise ParserTypeError(f"expected a scalar, got {type(t).__name__.replace('Type', '')}", span)


def scalar_binop(op: BinOp, a: Expr, b: Expr, span: Span) -> Expr:
    """A scalar BinaryExpr; a literal operand takes the other operand's dtype."""
    da, db = _scalar_dtype(a, a.span if a.span.is_known() else span), _scalar_dtype(b, span)
    if op in COMPARISONS:
        return BinaryExpr(op, a, b, DataType.BOOL, span=span)
    if da.is_float != db.is_float:
        dtype = da if da.is_float else db
    elif isinstance(a, (ConstInt, ConstFloat)) and not isinstance(b, (ConstInt, ConstFloat)):
        dtype = db
    else:
        dtype = da
    return BinaryExpr(op, a, b, dtype, span=span)


def make_const(args: list[Any], kwargs: dict[str, Any], span: Span) -> Expr:
    """``pl.const(value, dtype)``."""
    if len(args) == 2 and "dtype" not in kwargs:
        value, dtype = args
    elif len(args) == 1 and "dtype" in kwargs:
        value, dtype = args[0], kwargs["dtype"]
    else:
        raise ParserTypeError("pl.const takes (value, dtype)", span, hint="e.g. pl.const(0, pl.INT64)")
    if not isinstance(dtype, DataType) or not _is_num(value):
        raise ParserTypeError("pl.const takes a number and a dtype such as pl.INT64", span)
    if dtype.is_float:
        return ConstFloat(float(value), dtype, span=span)
    if isinstance(value, float):
        raise ParserTypeError(f"pl.const({value}, pl.{dtype.value}): float value for an integer dtype", span)
    return ConstInt(int(value), dtype, span=span)


def _wrap_user_error(fn):
    def run(*a: Any, **kw: Any) -> Any:
        try:
            return fn(*a, **kw)
        except ParserError:
            raise
        except UserError as exc:
            raise ParserTypeError(exc.message, exc.span, exc.hint) from None
    return run


def _unsupported(ev: ExprParser, stub: Any, node: ast.Call, span: Span) -> Any:
    raise stub.error(span)


def _option(ev: ExprParser, ctor: Any, node: ast.Call, span: Span) -> Any:
    args, kwargs = ev.call_args(node)
    try:
        return ctor(*args, **kwargs)
    except (TypeError, UserError) as exc:
        raise ParserTypeError(f"{ast.unparse(node.func)}(): {getattr(exc, 'message', exc)}", span) from None


from pypto.language import optimizations as _opt  # noqa: E402
from pypto.language.ops import OpStub, UnifiedStub  # noqa: E402
from pypto.language.unsupported import Unsupported, marker_error  # noqa: E402

_CALL_HANDLERS = {OpStub: _wrap_user_error(ExprParser._op), UnifiedStub: _wrap_user_error(ExprParser._unified),
                  dsl.DslConstruct: ExprParser._construct, Unsupported: _unsupported}
_OPTION_CTORS = {_opt.split: _opt.split, _opt.cross_core_slot: _opt.cross_core_slot}


def register_call_handler(kind: type, handler: Any) -> None:
    """Let another layer (the jit) handle calls to objects of ``kind``: ``handler(parser, obj, node, span)``."""
    _CALL_HANDLERS[kind] = handler
