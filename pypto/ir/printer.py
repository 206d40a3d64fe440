"""IR -> ``pl`` DSL source (the pass-dump format); ``pypto.language.parse`` reads it back.

Names: a Var prints as its hint; when two live Vars share a hint the later one gets ``_1``, ``_2``...
A function is printed twice: the first run records where each Var is used, the second picks names
so that a reused name never hides a Var that is still used later in the text. When the first run saw
every Var under a hint of its own (and none named like the DSL prefix), the second would rename nothing,
so the first run's text is the result.
"""

from __future__ import annotations

import functools
import keyword
import threading
from collections import OrderedDict
from enum import Enum
from typing import Any

from pypto.ir.callgraph import callee_first
from pypto.ir.dtypes import DataType
from pypto.ir.enums import ArgDirection, MemorySpace
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
from pypto.ir.memo import IdentityMemo
from pypto.ir.printer_stmts import STMT_PRINTERS, render_function
from pypto.ir.stmt import Stmt, flatten
from pypto.ir.types import (
    ArrayType,
    MemRef,
    PtrType,
    ScalarType,
    TensorType,
    TensorView,
    TileType,
    TileView,
    TupleType,
    Type,
    default_tile_view,
)

_LAYOUT_FIELDS = ("blayout", "slayout", "fractal")

_PREC = {BinOp.Or: 1, BinOp.And: 2, BinOp.Eq: 4, BinOp.Ne: 4, BinOp.Lt: 4, BinOp.Le: 4, BinOp.Gt: 4,
         BinOp.Ge: 4, BinOp.BitOr: 5, BinOp.BitXor: 6, BinOp.BitAnd: 7, BinOp.BitShiftLeft: 8,
         BinOp.BitShiftRight: 8, BinOp.Add: 9, BinOp.Sub: 9, BinOp.Mul: 10, BinOp.FloatDiv: 10,
         BinOp.FloorDiv: 10, BinOp.FloorMod: 10, BinOp.Pow: 12}
_ATOM = 13
# ops whose non-Expr parameters print positionally, e.g. pl.tile.alloc(pl.Mem.Vec, 65536)
_POSITIONAL_KW = {"tile.alloc": ("memory_space", "size")}
# ops whose operands print as keywords, e.g. pl.system.task_dummy(deps=[t0, t1])
_KEYWORD_OPERANDS = {"system.task_dummy": ("deps",)}
_INF = 1 << 60


class _Namer:
    """Var -> printed name; ``plan`` mode only records the position of every use."""

    def __init__(self, plan: dict[int, int] | None, free: dict[int, Var] | None = None,
                 reserved: frozenset[str] = frozenset()) -> None:
        self.planning = plan is None
        self.last_use: dict[int, int] = {} if plan is None else plan
        self.names: dict[int, str] = {}
        self.holders: dict[str, Var] = {}
        self.defined: set[int] = set()
        self.used: dict[int, Var] = {}
        self.pos = 0
        # planning: printed name -> the one Var seen under it; ``clash`` once two Vars share a name
        self.seen: dict[str, int] = {}
        self.clash = False
        for name in reserved:
            self.holders[name] = Var(name)
            self.last_use[id(self.holders[name])] = _INF
        for var in (free or {}).values():
            name = _sanitize(var.name)
            self.names[id(var)] = name
            self.holders[name] = var
            self.last_use[id(var)] = _INF

    def use(self, var: Var) -> str:
        self.pos += 1
        name = self.names.get(id(var)) or _sanitize(var.name)
        if self.planning:
            self.last_use[id(var)] = self.pos
            self.used[id(var)] = var
            self._see(name, var)
        return name

    def define(self, var: Var) -> str:
        self.pos += 1
        self.defined.add(id(var))
        known = self.names.get(id(var))
        if known is not None:
            return known
        base = _sanitize(var.name)
        if self.planning:
            self._see(base, var)
        name, k = base, 0
        while not self._free(name, var):
            k += 1
            name = f"{base}_{k}"
        self.names[id(var)] = name
        self.holders[name] = var
        return name

    def _see(self, name: str, var: Var) -> None:
        if self.seen.setdefault(name, id(var)) != id(var):
            self.clash = True

    def _free(self, name: str, var: Var) -> bool:
        if self.planning:
            return True
        holder = self.holders.get(name)
        return holder is None or holder is var or self.last_use.get(id(holder), -1) < self.pos


@functools.lru_cache(maxsize=8192)
def _sanitize(hint: str) -> str:
    name = "".join(c if c.isalnum() or c == "_" else "_" for c in hint) or "v"
    if name[0].isdigit():
        name = "v" + name
    if keyword.iskeyword(name) or name in ("self", "pl", "tuple"):
        name += "_"
    return name


def _quote(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


class Printer:
    """Writes IR nodes as ``pl`` source text."""

    def __init__(self, prefix: str = "pl", concise: bool = False, explicit_layout: bool = False) -> None:
        self.p = prefix
        self.concise = concise
        self.explicit_layout = explicit_layout
        self.namer = _Namer({})
        self.lines: list[str] = []

    # -- values -------------------------------------------------------------------------------
    def value(self, v: Any) -> str:
        """A kwarg/attr value: enums, dtypes, literals, containers, Exprs."""
        if isinstance(v, Expr):
            return self.expr(v)
        if isinstance(v, DataType):
            return f"{self.p}.{v.value}"
        if isinstance(v, MemorySpace):
            return f"{self.p}.Mem.{v.name}"
        if isinstance(v, ArgDirection):
            return f"{self.p}.adir.{v.value}"
        if isinstance(v, Enum):
            return f"{self.p}.{type(v).__name__}.{v.name}"
        if isinstance(v, str):
            return _quote(v)
        if isinstance(v, (list, tuple)):
            return "[" + ", ".join(self.value(x) for x in v) + "]"
        if isinstance(v, dict):
            return "{" + ", ".join(f"{self.value(k)}: {self.value(x)}" for k, x in v.items()) + "}"
        if isinstance(v, Var):
            return self.namer.use(v)
        dsl_text = getattr(v, "dsl_text", None)  # DSL values such as pl.split(...) print themselves
        if callable(dsl_text):
            return dsl_text(self.p)
        return repr(v)

    # -- types --------------------------------------------------------------------------------
    def type(self, t: Type) -> str:
        p = self.p
        if isinstance(t, TileType):
            return self._tile_type(t)
        if isinstance(t, TensorType):
            slots = [self._dims(t.shape), f"{p}.{t.dtype.value}"]
            if t.memref is not None:
                slots.append(self._memref(t.memref))
            if t.view is not None:
                slots.append(self._view("TensorView", t.view, TensorView(layout=None)))  # type: ignore[arg-type]
            return f"{p}.Tensor[{', '.join(slots)}]"
        if isinstance(t, ScalarType):
            return f"{p}.Scalar[{p}.{t.dtype.value}]"
        if isinstance(t, PtrType):
            return f"{p}.Ptr"
        if isinstance(t, ArrayType):
            return f"{p}.Array[{t.extent}, {p}.{t.dtype.value}]"
        if isinstance(t, TupleType):
            return "tuple[" + ", ".join(self.type(x) for x in t.types) + "]"
        return "None"

    def _tile_type(self, t: TileType) -> str:
        p = self.p
        slots = [self._dims(t.shape), f"{p}.{t.dtype.value}"]
        if t.memref is not None:
            slots.append(self._memref(t.memref))
        if t.memory_space is not None:
            slots.append(f"{p}.Mem.{t.memory_space.name}")
        if self.explicit_layout:  # every tile states its resolved layout (upstream's EXPLICIT dumps)
            view = t.view or default_tile_view(t.shape, t.memory_space)
            slots.append(self._view("TileView", view, TileView(), force=_LAYOUT_FIELDS))
        elif t.view is not None:
            slots.append(self._view("TileView", t.view, TileView()))
        return f"{p}.Tile[{', '.join(slots)}]"

    def _dims(self, dims: tuple) -> str:
        return "[" + ", ".join(str(d) if isinstance(d, int) else self.expr(d) for d in dims) + "]"

    def _memref(self, m: MemRef) -> str:
        base = _quote(m.base) if isinstance(m.base, str) else self.namer.use(m.base)
        off = f"{self.p}.const({m.offset}, {self.p}.INT64)" if isinstance(m.offset, int) else self.expr(m.offset)
        if m.slots > 1:
            slot = "" if m.slot is None else f"[{m.slot if isinstance(m.slot, int) else self.expr(m.slot)}]"
            return f"{self.p}.MemRef({base}, {off}, {m.size}, slots={m.slots}){slot}"
        return f"{self.p}.MemRef({base}, {off}, {m.size})"

    def _view(self, name: str, view: Any, default: Any, force: tuple[str, ...] = ()) -> str:
        parts = []
        for f in type(view).__dataclass_fields__:
            v = getattr(view, f)
            if v == getattr(default, f) and f not in force and not (name == "TensorView" and f == "layout"):
                continue
            if isinstance(v, tuple):
                v = list(v)
            parts.append(f"{f}={self._dims(v) if isinstance(v, list) else self.value(v)}")
        return f"{self.p}.{name}({', '.join(parts)})"

    # -- expressions --------------------------------------------------------------------------
    def expr(self, e: Expr) -> str:
        return self._expr(e)[0]

    def _expr(self, e: Expr) -> tuple[str, int]:
        method = _EXPR.get(type(e))
        if method is None:
            for cls, m in _EXPR.items():
                if isinstance(e, cls):
                    method = m
                    break
        if method is None:
            raise TypeError(f"python_print: cannot print {type(e).__name__}")
        return method(self, e)

    def _var(self, e: Var) -> tuple[str, int]:
        return self.namer.use(e), _ATOM

    def _const_int(self, e: ConstInt) -> tuple[str, int]:
        if e.dtype is DataType.INDEX:
            return str(e.value), _ATOM if e.value >= 0 else 11
        return f"{self.p}.const({e.value}, {self.p}.{e.dtype.value})", _ATOM

    def _const_float(self, e: ConstFloat) -> tuple[str, int]:
        text = repr(e.value) if e.value == e.value and abs(e.value) != float("inf") else f'float("{e.value}")'
        if e.dtype is DataType.FP32:
            return text, _ATOM if not text.startswith("-") else 11
        return f"{self.p}.const({text}, {self.p}.{e.dtype.value})", _ATOM

    def _const_bool(self, e: ConstBool) -> tuple[str, int]:
        return repr(e.value), _ATOM

    def _binary(self, e: BinaryExpr) -> tuple[str, int]:
        if e.op in (BinOp.Min, BinOp.Max):
            return f"{self.p}.{e.op.value}({self.expr(e.lhs)}, {self.expr(e.rhs)})", _ATOM
        prec = _PREC[e.op]
        lhs, lp = self._expr(e.lhs)
        rhs, rp = self._expr(e.rhs)
        if lp < prec or (e.op is BinOp.Pow and lp <= prec):
            lhs = f"({lhs})"
        if rp <= prec and not (e.op is BinOp.Pow and rp > prec):
            rhs = f"({rhs})"
        return f"{lhs} {e.op.value} {rhs}", prec

    def _unary(self, e: UnaryExpr) -> tuple[str, int]:
        inner, ip = self._expr(e.operand)
        if e.op is UnOp.Not:
            return f"not {inner if ip > 3 else f'({inner})'}", 3
        if e.op in (UnOp.Neg, UnOp.BitNot):
            return f"{e.op.value}{inner if ip >= 11 else f'({inner})'}", 11
        if e.op is UnOp.Cast:
            return f"{self.p}.cast({inner}, {self.value(e.dtype)})", _ATOM
        return f"{self.p}.{e.op.name.lower()}({inner})", _ATOM

    def _call(self, e: Call) -> tuple[str, int]:
        args = [self.expr(a) for a in e.args]
        if e.op in _KEYWORD_OPERANDS:
            args = [f"{k}={a}" for k, a in zip(_KEYWORD_OPERANDS[e.op], args, strict=True)]  # type: ignore[index]
        if isinstance(e.op, GlobalVar):
            if e.attrs:
                args.append(f"attrs={self.value(e.attrs)}")
            return f"self.{e.op.name}({', '.join(args)})", _ATOM
        kwargs = dict(e.kwargs)
        for key in _POSITIONAL_KW.get(e.op, ()):
            if key in kwargs:
                args.append(self.value(kwargs.pop(key)))
        args += [f"{k}={self.value(v)}" for k, v in kwargs.items()]
        return f"{self.p}.{e.op}({', '.join(args)})", _ATOM

    def _tuple(self, e: MakeTuple) -> tuple[str, int]:
        return "[" + ", ".join(self.expr(x) for x in e.elements) + "]", _ATOM

    def _getitem(self, e: TupleGetItem) -> tuple[str, int]:
        inner, ip = self._expr(e.tuple_value)
        return f"{inner if ip == _ATOM else f'({inner})'}[{e.index}]", _ATOM

    def _global(self, e: GlobalVar) -> tuple[str, int]:
        return f"self.{e.name}", _ATOM

    # -- statements ---------------------------------------------------------------------------
    def emit(self, indent: int, text: str) -> None:
        self.lines.append("    " * indent + text)

    def block(self, body: Stmt | None, indent: int, targets: tuple[Var, ...] = ()) -> None:
        """Print a body; a trailing YieldStmt binds ``targets``."""
        stmts = flatten(body)
        if not stmts:
            self.emit(indent, "pass")
        for i, s in enumerate(stmts):
            self.stmt(s, indent, targets if i == len(stmts) - 1 else ())

    def stmt(self, s: Stmt, indent: int, targets: tuple[Var, ...] = ()) -> None:
        for c in s.comments:
            self.emit(indent, f"# {c}")
        printer = STMT_PRINTERS.get(type(s))
        if printer is None:
            raise TypeError(f"python_print: cannot print {type(s).__name__}")
        printer(self, s, indent, targets)


_EXPR: dict[type, Any] = {
    Var: Printer._var, ConstInt: Printer._const_int, ConstFloat: Printer._const_float,
    ConstBool: Printer._const_bool, BinaryExpr: Printer._binary, UnaryExpr: Printer._unary, Call: Printer._call,
    MakeTuple: Printer._tuple, TupleGetItem: Printer._getitem, GlobalVar: Printer._global,
}


def python_print(node: Any, prefix: str = "pl", concise: bool = False, explicit_layout: bool = False) -> str:
    """Print a Program, Function, Stmt, Expr or Type as ``pl`` DSL source.

    ``explicit_layout`` writes every tile's resolved layout (``blayout``/``slayout``/``fractal``),
    also where the IR keeps the memory space's implicit one: the ``PassDumpLevel.EXPLICIT`` dumps.
    """
    if isinstance(node, Program):
        return print_program(node, prefix, concise, explicit_layout)
    if isinstance(node, Function):
        return _header(prefix, _dynamic_vars([node]), node.name, program=False) + \
            print_function(node, prefix, concise, in_class=False, explicit_layout=explicit_layout)
    pr = Printer(prefix, concise, explicit_layout)
    if isinstance(node, Stmt):
        pr.stmt(node, 0)
        return "\n".join(pr.lines)
    if isinstance(node, Expr):
        return pr.expr(node)
    if isinstance(node, Type):
        return pr.type(node)
    raise TypeError(f"python_print: unsupported node {type(node).__name__}")


def _header(prefix: str, dyn: list[Var], name: str, program: bool = True) -> str:
    imp = "import pypto.language as pl" if prefix == "pl" else f"from pypto import language as {prefix}"
    lines = [f"# pypto.program: {name or 'Program'}"] if program else []
    lines.append(imp)
    lines += [f'{v.name} = {prefix}.dynamic("{v.name}")' for v in dyn]
    return "\n".join(lines) + "\n\n"


def _dynamic_vars(funcs: list[Function]) -> list[Var]:
    """Free Vars in signature types (dynamic dims, also inside ``M * 2``), sorted by name."""
    found: dict[int, Var] = {}
    for f in funcs:
        for v in _SIGNATURE_VARS.get(None, f, _signature_vars):
            found.setdefault(id(v), v)
    return sorted(found.values(), key=lambda v: v.name)


# Free Vars of each function's signature types, per Function object (every pass dump asks for all of them).
_SIGNATURE_VARS = IdentityMemo(1024)


def _signature_vars(f: Function) -> tuple[Var, ...]:
    found: dict[int, Var] = {}
    for t in [p.var_type for p in f.params] + list(f.return_types):
        for d in _shape_dims(t):
            _collect_vars(d, found)
    return tuple(found.values())


def _shape_dims(t: Any) -> list[Any]:
    if isinstance(t, TupleType):
        return [d for x in t.types for d in _shape_dims(x)]
    return list(t.shape) if isinstance(t, (TensorType, TileType)) else []


def _collect_vars(d: Any, found: dict[int, Var]) -> None:
    if isinstance(d, Var):
        found.setdefault(id(d), d)
    elif isinstance(d, BinaryExpr):
        _collect_vars(d.lhs, found)
        _collect_vars(d.rhs, found)
    elif isinstance(d, UnaryExpr):
        _collect_vars(d.operand, found)


# Printed text of recent functions by identity (the IR is immutable, and a pass leaves the functions it
# does not change as the same objects, so pass dumps re-print only what changed).
_PRINTED: OrderedDict[tuple[int, str, bool, bool, int, bool], tuple[Function, str]] = OrderedDict()
_PRINTED_MAX = 256
_PRINTED_LOCK = threading.Lock()


def print_function(f: Function, prefix: str = "pl", concise: bool = False, in_class: bool = True,
                   indent: int = 0, explicit_layout: bool = False) -> str:
    """One function (decorator, signature, body) with collision-free Var names."""
    key = (id(f), prefix, concise, in_class, indent, explicit_layout)
    with _PRINTED_LOCK:
        hit = _PRINTED.get(key)
        if hit is not None and hit[0] is f:
            _PRINTED.move_to_end(key)
            return hit[1]
    text = _print_function(f, prefix, concise, in_class, indent, explicit_layout)
    with _PRINTED_LOCK:
        _PRINTED[key] = (f, text)
        if len(_PRINTED) > _PRINTED_MAX:
            _PRINTED.popitem(last=False)
    return text


def _print_function(f: Function, prefix: str, concise: bool, in_class: bool, indent: int,
                    explicit_layout: bool) -> str:
    plan = Printer(prefix, concise, explicit_layout)
    plan.namer = _Namer(None)
    render_function(f, plan, in_class, indent)
    if not plan.namer.clash and prefix not in plan.namer.seen:
        # every Var kept its own hint and none is the DSL prefix: the naming run renames nothing
        return "\n".join(plan.lines) + "\n"
    free = {k: v for k, v in plan.namer.used.items() if k not in plan.namer.defined}
    pr = Printer(prefix, concise, explicit_layout)
    pr.namer = _Namer(plan.namer.last_use, free, frozenset({prefix}))
    render_function(f, pr, in_class, indent)
    return "\n".join(pr.lines) + "\n"


def print_program(program: Program, prefix: str = "pl", concise: bool = False,
                  explicit_layout: bool = False) -> str:
    """The whole dump text: header, dynamic dims, ``@pl.program`` class with its functions."""
    funcs = callee_first(program.functions)
    out = [_header(prefix, _dynamic_vars(funcs), program.name)]
    out.append(f"@{prefix}.program\nclass {program.name or 'Program'}:\n")
    for f in funcs:
        out.append(print_function(f, prefix, concise, in_class=True, indent=1, explicit_layout=explicit_layout))
    return "".join(out)
