"""``torch_codegen``: an IR Program or Function as runnable PyTorch source, to execute the IR's meaning on the host.

Every IR function becomes a Python function of the same name; tensors are torch tensors passed by reference
(``Out`` parameters are written in place, as on the device), tiles are torch tensors owned by the kernel.
Ops map through one rule table keyed by registry name (:data:`RULES`); an op without a rule is an error
that names it. The output needs only ``torch`` (helpers are pasted at the top, see ``_prelude.py``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

from pypto.debug._prelude import PRELUDE
from pypto.errors import UserError
from pypto.ir.dtypes import DataType
from pypto.ir.expr import (
    BinaryExpr,
    BinOp,
    Call,
    ConstBool,
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
from pypto.ir.function import Function, Program
from pypto.ir.stmt import (
    BreakStmt,
    ContinueStmt,
    EvalStmt,
    ForStmt,
    IfStmt,
    InCoreScopeStmt,
    ReturnStmt,
    ScopeStmt,
    SeqStmts,
    SpmdScopeStmt,
    Stmt,
    WhileStmt,
    YieldStmt,
)
from pypto.ir.types import ShapedType

TORCH_DTYPES = {
    DataType.FP32: "torch.float32", DataType.FP16: "torch.float16", DataType.BF16: "torch.bfloat16",
    DataType.FP8E4M3FN: "torch.float8_e4m3fn", DataType.FP8E5M2: "torch.float8_e5m2",
    DataType.INT8: "torch.int8", DataType.INT16: "torch.int16", DataType.INT32: "torch.int32",
    DataType.INT64: "torch.int64", DataType.UINT8: "torch.uint8", DataType.UINT16: "torch.uint16",
    DataType.UINT32: "torch.uint32", DataType.UINT64: "torch.uint64", DataType.BOOL: "torch.bool",
    DataType.INDEX: "torch.int64",
}
_PY_BINOPS = {BinOp.Add: "+", BinOp.Sub: "-", BinOp.Mul: "*", BinOp.FloorDiv: "//", BinOp.FloorMod: "%",
              BinOp.FloatDiv: "/", BinOp.Pow: "**", BinOp.Eq: "==", BinOp.Ne: "!=", BinOp.Lt: "<", BinOp.Le: "<=",
              BinOp.Gt: ">", BinOp.Ge: ">=", BinOp.And: "and", BinOp.Or: "or", BinOp.BitAnd: "&",
              BinOp.BitOr: "|", BinOp.BitXor: "^", BinOp.BitShiftLeft: "<<", BinOp.BitShiftRight: ">>"}


def torch_dtype(dt: DataType) -> str:
    """The torch spelling of an IR dtype; dtypes torch cannot hold (INT4, FP4, HF*) are an error."""
    try:
        return TORCH_DTYPES[dt]
    except KeyError:
        raise UserError(f"torch_codegen: dtype {dt.value} has no torch equivalent") from None


def _ident(name: str) -> str:
    s = re.sub(r"\W", "_", name) or "v"
    return f"v_{s}" if s[0].isdigit() or s in _RESERVED else s


_RESERVED = frozenset({"torch", "math", "self", "None", "True", "False", "and", "or", "not", "in", "is", "if",
                       "else", "for", "while", "def", "return", "lambda", "class", "pass", "break", "continue",
                       "import", "from", "as", "with", "global", "nonlocal", "yield", "del", "try", "except",
                       "finally", "raise", "assert", "async", "await", "elif", "range", "min", "max", "abs", "int",
                       "float", "bool"})

Rule = Callable[["_Emitter", Call], str]


class _Emitter:
    """One function's Python text; Vars get unique identifiers by object identity."""

    def __init__(self, check_shapes: bool) -> None:
        self.check_shapes = check_shapes
        self.lines: list[str] = []
        self.names: dict[int, str] = {}
        self.taken: set[str] = set()

    # -- names ----------------------------------------------------------------------------------
    def name(self, var: Var) -> str:
        known = self.names.get(id(var))
        if known is not None:
            return known
        base = _ident(var.name)
        name, k = base, 0
        while name in self.taken:
            k += 1
            name = f"{base}_{k}"
        self.taken.add(name)
        self.names[id(var)] = name
        return name

    # -- expressions ------------------------------------------------------------------------------
    def expr(self, e: Any) -> str:
        for kind, render in _EXPRS:
            if isinstance(e, kind):
                return render(self, e)
        if e is None:
            return "None"
        raise UserError(f"torch_codegen: cannot express {type(e).__name__} {e!r}")

    def _binary(self, e: BinaryExpr) -> str:
        a, b = self.expr(e.lhs), self.expr(e.rhs)
        if e.op is BinOp.Min:
            return f"min({a}, {b})"
        if e.op is BinOp.Max:
            return f"max({a}, {b})"
        return f"({a} {_PY_BINOPS[e.op]} {b})"

    def _unary(self, e: UnaryExpr) -> str:
        x = self.expr(e.operand)
        if e.op is UnOp.Cast:
            conv = "bool" if e.dtype is DataType.BOOL else "float" if e.dtype.is_float else "int"
            return f"{conv}({x})"
        return {UnOp.Neg: f"(-{x})", UnOp.Not: f"(not {x})", UnOp.BitNot: f"(~{x})", UnOp.Abs: f"abs({x})"}[e.op]

    def call(self, c: Call) -> str:
        if isinstance(c.op, GlobalVar):
            text = f"{_ident(c.op.name)}({', '.join(self.expr(a) for a in c.args)})"
            types = getattr(c.result_type, "types", ())
            block_num = c.attrs.get("block_num")
            if block_num is not None:  # an SPMD launch: the kernel runs once per block
                text = f"_spmd({self.expr(block_num)}, lambda: {text})"
            if types and getattr(types[-1], "dtype", None) is DataType.TASK_ID:  # (results..., task id)
                return f"({text}, None)" if len(types) == 2 else f"(*{text}, None)"
            return text
        rule = RULES.get(c.op)
        if rule is None:
            raise UserError(f"torch_codegen: op '{c.op}' has no torch handler", c.span,
                            hint="add a rule to pypto.debug.torch_codegen.RULES")
        return rule(self, c)

    def arg(self, c: Call, i: int) -> str:
        return self.expr(c.args[i]) if i < len(c.args) else "None"

    def kw(self, c: Call, key: str, default: Any = None) -> Any:
        return c.kwargs.get(key, default)

    # -- statements -------------------------------------------------------------------------------
    def emit(self, indent: int, text: str) -> None:
        self.lines.append("    " * indent + text)

    def body(self, s: Stmt | None, indent: int, targets: tuple[Var, ...] = ()) -> None:
        start = len(self.lines)
        self.stmt(s, indent, targets)
        if len(self.lines) == start:
            self.emit(indent, "pass")

    def stmt(self, s: Stmt | None, indent: int, targets: tuple[Var, ...] = ()) -> None:
        if s is None:
            return
        handler = _STMTS.get(type(s))
        if handler is None:
            if isinstance(s, ScopeStmt):
                return _scope(self, s, indent, targets)
            raise UserError(f"torch_codegen: statement {type(s).__name__} is not supported", s.span)
        handler(self, s, indent, targets)

    def check(self, indent: int, name: str, var: Var) -> None:
        t = var.var_type
        if not self.check_shapes or not isinstance(t, ShapedType) or t.dtype not in TORCH_DTYPES:
            return
        if all(isinstance(d, int) for d in t.shape):
            self.emit(indent, f"_check({name!r}, {name}, {list(t.shape)}, {torch_dtype(t.dtype)})")


_EXPRS: tuple[tuple[type | tuple[type, ...], Callable[[_Emitter, Any], str]], ...] = (
    (Var, lambda em, e: em.name(e)),
    (ConstBool, lambda em, e: "True" if e.value else "False"),
    (ConstInt, lambda em, e: str(e.value)),
    (ConstFloat, lambda em, e: _float(e.value)),
    (MakeTuple, lambda em, e: "[" + ", ".join(em.expr(x) for x in e.elements) + "]"),
    (TupleGetItem, lambda em, e: f"{em.expr(e.tuple_value)}[{e.index}]"),
    (BinaryExpr, lambda em, e: em._binary(e)),
    (UnaryExpr, lambda em, e: em._unary(e)),
    (GlobalVar, lambda em, e: _ident(e.name)),
    (Call, lambda em, e: em.call(e)),
    (bool, lambda em, e: str(e)),
    (float, lambda em, e: _float(e)),
    (int, lambda em, e: str(e)),
    ((tuple, list), lambda em, e: "[" + ", ".join(em.expr(x) for x in e) + "]"),
)


def _float(v: float) -> str:
    if math.isnan(v):
        return "math.nan"
    if math.isinf(v):
        return "math.inf" if v > 0 else "-math.inf"
    return repr(float(v))


def _assign(em: _Emitter, s: Any, indent: int, targets: tuple) -> None:
    value = em.expr(s.value)
    name = em.name(s.var)
    em.emit(indent, f"{name} = {value}")
    em.check(indent, name, s.var)


def _eval(em: _Emitter, s: EvalStmt, indent: int, targets: tuple) -> None:
    em.emit(indent, em.expr(s.expr))


def _return(em: _Emitter, s: ReturnStmt, indent: int, targets: tuple) -> None:
    em.emit(indent, ("return " + ", ".join(em.expr(v) for v in s.values)) if s.values else "return")


def _yield(em: _Emitter, s: YieldStmt, indent: int, targets: tuple[Var, ...]) -> None:
    if not targets:
        return
    if len(targets) != len(s.values):
        raise UserError(f"torch_codegen: yield of {len(s.values)} values into {len(targets)} variables", s.span)
    lhs = ", ".join(em.name(t) for t in targets)
    em.emit(indent, f"{lhs} = {', '.join(em.expr(v) for v in s.values)}")


def _seq(em: _Emitter, s: SeqStmts, indent: int, targets: tuple) -> None:
    for x in s.stmts:
        em.stmt(x, indent, targets)


def _if(em: _Emitter, s: IfStmt, indent: int, targets: tuple) -> None:
    em.emit(indent, f"if {em.expr(s.cond)}:")
    em.body(s.then_body, indent + 1, s.return_vars)
    if s.else_body is not None:
        em.emit(indent, "else:")
        em.body(s.else_body, indent + 1, s.return_vars)


def _carry_in(em: _Emitter, s: ForStmt | WhileStmt, indent: int) -> None:
    for ia, init in zip(s.iter_args, s.inits, strict=True):
        em.emit(indent, f"{em.name(ia)} = {em.expr(init)}")


def _carry_out(em: _Emitter, s: ForStmt | WhileStmt, indent: int) -> None:
    for rv, ia in zip(s.return_vars, s.iter_args, strict=False):
        em.emit(indent, f"{em.name(rv)} = {em.name(ia)}")


def _for(em: _Emitter, s: ForStmt, indent: int, targets: tuple) -> None:
    _carry_in(em, s, indent)
    em.emit(indent, f"for {em.name(s.loop_var)} in range({em.expr(s.start)}, {em.expr(s.stop)}, {em.expr(s.step)}):")
    em.body(s.body, indent + 1, tuple(s.iter_args))
    _carry_out(em, s, indent)


def _while(em: _Emitter, s: WhileStmt, indent: int, targets: tuple) -> None:
    _carry_in(em, s, indent)
    em.emit(indent, f"while {em.expr(s.cond)}:")
    em.body(s.body, indent + 1, tuple(s.iter_args))
    _carry_out(em, s, indent)


def _scope(em: _Emitter, s: ScopeStmt, indent: int, targets: tuple) -> None:
    if isinstance(s, InCoreScopeStmt | SpmdScopeStmt) and s.task_var is not None:
        em.emit(indent, f"{em.name(s.task_var)} = None  # task id: dependencies do not change the values")
    if isinstance(s, SpmdScopeStmt):  # one task of core_num blocks: run the body for every block in turn
        em.emit(indent, f"for _ in _blocks({em.expr(s.core_num)}):")
        em.body(s.body, indent + 1, targets)
        return
    em.stmt(s.body, indent, targets)


def _simple(text: str):
    return lambda em, s, indent, targets: em.emit(indent, text)


def _stmt_table() -> dict[type, Callable[..., None]]:
    from pypto.ir.stmt import AssignStmt

    return {AssignStmt: _assign, EvalStmt: _eval, ReturnStmt: _return, YieldStmt: _yield, SeqStmts: _seq,
            IfStmt: _if, ForStmt: _for, WhileStmt: _while, BreakStmt: _simple("break"),
            ContinueStmt: _simple("continue")}


_STMTS = _stmt_table()


def _function(f: Function, check_shapes: bool) -> list[str]:
    em = _Emitter(check_shapes)
    params = [em.name(p) for p in f.params]
    em.emit(0, f"def {_ident(f.name)}({', '.join(params)}):")
    em.emit(1, f'"""{f.func_type.value} function {f.name!r} (generated from pypto IR)."""')
    bound = {id(p) for p in f.params}
    for p in f.params:  # dynamic dims (pl.dynamic) take their value from the tensors passed in
        for i, d in enumerate(getattr(p.var_type, "shape", ())):
            if isinstance(d, Var) and id(d) not in bound:
                bound.add(id(d))
                em.emit(1, f"{em.name(d)} = int({em.name(p)}.shape[{i}])")
    for p in f.params:
        em.check(1, em.name(p), p)
    external = f.attrs.get("external_source") if f.attrs else None
    if isinstance(external, str):  # a hand-written C++ kernel: nothing to render, calling it must not pass silently
        em.emit(1, f"raise NotImplementedError({_external_message(f.name, external)!r})")
        return em.lines
    em.body(f.body, 1)
    return em.lines


def _external_message(name: str, path: str) -> str:
    return (f"external kernel '{name}' is the C++ file {path}: the PyTorch rendering has no body for it; "
            "run the program on a simulator, or replace the call with a pl.* version of the kernel to check it here")


def torch_codegen(node: Program | Function, *, check_shapes: bool = False) -> str:
    """Executable PyTorch source for an IR Program (every function) or one Function.

    With ``check_shapes`` every tensor/tile assignment asserts the IR's static shape and dtype.
    """
    from pypto.debug.torch_rules import RULES as _rules  # noqa: F401  (fills RULES)

    if isinstance(node, Program):
        functions = list(node.functions)
        title = f"program {node.name!r}"
    elif isinstance(node, Function):
        functions = [node]
        title = f"function {node.name!r}"
    else:
        raise TypeError(f"torch_codegen expects a pypto Program or Function, got {type(node).__name__}")
    out = [f'"""PyTorch rendering of pypto {title} (pypto.debug.torch_codegen)."""', PRELUDE]
    for f in functions:
        out.append("\n".join(_function(f, check_shapes)))
        out.append("")
    return "\n\n".join(out).rstrip() + "\n"


def entry_function(program: Program) -> Function:
    """The function a caller runs: the orchestration no other function calls, else the last function."""
    called: set[str] = set()
    for f in program.functions:
        _calls(f.body, called)
    roots = [f for f in program.orchestrations() if f.name not in called]
    if roots:
        return roots[0]
    uncalled = [f for f in program.functions if f.name not in called]
    return (uncalled or list(program.functions))[-1]


def _calls(node: Any, out: set[str]) -> None:
    if isinstance(node, Call):
        if isinstance(node.op, GlobalVar):
            out.add(node.op.name)
        for a in node.args:
            _calls(a, out)
        return
    if isinstance(node, Expr | Var) or node is None:
        return
    for slot in getattr(type(node), "__slots__", ()):
        value = getattr(node, slot, None)
        if isinstance(value, tuple):
            for v in value:
                _calls(v, out)
        elif isinstance(value, Stmt | Call):
            _calls(value, out)
        elif isinstance(value, Expr):
            _calls(value, out)


RULES: dict[str, Rule] = {}
