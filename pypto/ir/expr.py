"""IR expressions. Nodes are immutable; a Var is identified by the object, its name is only a hint."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from pypto.ir.dtypes import DataType
from pypto.ir.types import ScalarType, TupleType, Type, UnknownType
from pypto.span import Span

_ids = itertools.count(1)


@dataclass(frozen=True, slots=True, eq=False)
class Expr:
    """Base of expressions; ``span`` never takes part in structural equality."""

    span: Span = field(default_factory=Span.unknown, kw_only=True, repr=False)

    @property
    def type(self) -> Type:
        return UnknownType()


@dataclass(frozen=True, slots=True, eq=False)
class Var(Expr):
    """A variable; equality and hashing are by identity, ``uid`` orders them deterministically."""

    name: str
    var_type: Type = field(default_factory=UnknownType)
    uid: int = field(default_factory=lambda: next(_ids), kw_only=True)

    @property
    def type(self) -> Type:
        return self.var_type

    def __repr__(self) -> str:
        return f"Var({self.name}#{self.uid})"


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class IterArg(Var):
    """A loop-carried variable of a ``for``/``while``.

    Its value on entry is not stored here but on the loop (``ForStmt.inits`` / ``WhileStmt.inits``,
    parallel to ``iter_args``), so substitution and cloning reach it as an ordinary operand of the loop.
    Upstream's ``IterArg(name, type, initValue, span)`` hands the initial value to the variable; here the
    builder (``ForLoopBuilder.iter_arg(name, init_value)``) and the DSL parser keep it until they build
    the loop statement.
    """


@dataclass(frozen=True, slots=True, eq=False)
class ConstInt(Expr):
    value: int
    dtype: DataType = DataType.INDEX

    @property
    def type(self) -> Type:
        return ScalarType(self.dtype)


@dataclass(frozen=True, slots=True, eq=False)
class ConstFloat(Expr):
    value: float
    dtype: DataType = DataType.FP32

    @property
    def type(self) -> Type:
        return ScalarType(self.dtype)


@dataclass(frozen=True, slots=True, eq=False)
class ConstBool(Expr):
    value: bool

    @property
    def type(self) -> Type:
        return ScalarType(DataType.BOOL)


@dataclass(frozen=True, slots=True, eq=False)
class GlobalVar(Expr):
    """A reference to a function of the enclosing program (printed ``self.<name>``)."""

    name: str


@dataclass(frozen=True, slots=True, eq=False)
class Call(Expr):
    """An op call (``op`` is a registry name such as ``"tile.add"``) or a function call (GlobalVar).

    ``kwargs`` are user keyword arguments (round-tripped by the printer); ``attrs`` are compiler
    metadata such as ``arg_directions``. Neither dict is ever mutated after construction.
    """

    op: str | GlobalVar
    args: tuple[Expr, ...]
    kwargs: dict[str, Any] = field(default_factory=dict)
    attrs: dict[str, Any] = field(default_factory=dict)
    result_type: Type = field(default_factory=UnknownType)

    @property
    def type(self) -> Type:
        return self.result_type

    @property
    def op_name(self) -> str:
        """The op name, or ``call:<function>`` for program calls."""
        return self.op if isinstance(self.op, str) else f"call:{self.op.name}"


class BinOp(Enum):
    """Scalar binary operators; the value is the Python spelling used by the printer."""

    Add = "+"
    Sub = "-"
    Mul = "*"
    FloorDiv = "//"
    FloorMod = "%"
    FloatDiv = "/"
    Pow = "**"
    Eq = "=="
    Ne = "!="
    Lt = "<"
    Le = "<="
    Gt = ">"
    Ge = ">="
    And = "and"
    Or = "or"
    BitAnd = "&"
    BitOr = "|"
    BitXor = "^"
    BitShiftLeft = "<<"
    BitShiftRight = ">>"
    Min = "min"
    Max = "max"


COMPARISONS = frozenset({BinOp.Eq, BinOp.Ne, BinOp.Lt, BinOp.Le, BinOp.Gt, BinOp.Ge})


@dataclass(frozen=True, slots=True, eq=False)
class BinaryExpr(Expr):
    op: BinOp
    lhs: Expr
    rhs: Expr
    dtype: DataType

    @property
    def type(self) -> Type:
        return ScalarType(self.dtype)

    @property
    def left(self) -> Expr:
        """``lhs`` (upstream's name)."""
        return self.lhs

    @property
    def right(self) -> Expr:
        """``rhs`` (upstream's name)."""
        return self.rhs


class UnOp(Enum):
    Neg = "-"
    Not = "not"
    BitNot = "~"
    Abs = "abs"
    Cast = "cast"


@dataclass(frozen=True, slots=True, eq=False)
class UnaryExpr(Expr):
    op: UnOp
    operand: Expr
    dtype: DataType

    @property
    def type(self) -> Type:
        return ScalarType(self.dtype)


@dataclass(frozen=True, slots=True, eq=False)
class MakeTuple(Expr):
    """A list of expressions, e.g. offsets ``[0, i]`` (printed as a Python list)."""

    elements: tuple[Expr, ...]

    @property
    def type(self) -> Type:
        return TupleType(tuple(e.type for e in self.elements))


@dataclass(frozen=True, slots=True, eq=False)
class TupleGetItem(Expr):
    tuple_value: Expr
    index: int

    @property
    def type(self) -> Type:
        t = self.tuple_value.type
        return t.types[self.index] if isinstance(t, TupleType) else UnknownType()


def const(value: int | float | bool, dtype: DataType | None = None, span: Span | None = None) -> Expr:
    """Wrap a Python literal as a constant node."""
    sp = span or Span.unknown()
    if isinstance(value, bool):
        return ConstBool(value, span=sp)
    if isinstance(value, int):
        return ConstInt(value, dtype or DataType.INDEX, span=sp)
    return ConstFloat(float(value), dtype or DataType.FP32, span=sp)


# The value of a ``pl.TASK_ID`` constant that names no task: ``tid = None`` in an orchestration (the seed of
# a loop that chains tasks through their ids); waiting on it waits for nothing.
NO_TASK = -1


def as_int(e: Any) -> int | None:
    """The int value of an int or ConstInt, else None."""
    cls = e.__class__
    if cls is int:  # the common cases first, without the checks below
        return e
    if cls is ConstInt:
        return e.value
    if isinstance(e, bool):
        return None
    if isinstance(e, int):
        return e
    if isinstance(e, ConstInt):
        return e.value
    return None
