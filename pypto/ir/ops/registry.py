"""The op registry: the single source of truth for op names, operands, keyword defaults and typing.

The DSL, the printer/parser, the verifier and every emitter look ops up here by name; an unknown
name raises. Codegen rule tables are keyed by the same names.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pypto.errors import InternalError, UserError
from pypto.ir.expr import Call, Expr
from pypto.ir.types import Type
from pypto.span import Span

InferFn = Callable[["list[Expr]", "dict[str, Any]", Span], Type]


@dataclass(frozen=True, slots=True)
class OpDef:
    """One op: ``args`` are positional operand names (``?`` suffix = optional), ``kwargs`` defaults.

    ``positional_kwargs`` are non-Expr parameters (enums, sizes) that the DSL writes positionally
    after the operands, e.g. ``pl.tile.alloc(pl.Mem.Vec, 65536)``; the IR keeps them in kwargs.
    ``writes`` names the operand an op updates in place and returns (``tile.store`` writes
    ``output_tensor``): the call is kept for that effect even when its result is never read.
    """

    name: str
    args: tuple[str, ...]
    infer: InferFn
    kwargs: dict[str, Any] = field(default_factory=dict)
    category: str = "misc"
    doc: str = ""
    positional_kwargs: tuple[str, ...] = ()
    writes: str | None = None

    @property
    def namespace(self) -> str:
        return self.name.split(".", 1)[0]

    @property
    def short(self) -> str:
        return self.name.split(".", 1)[1]

    @property
    def writes_index(self) -> int | None:
        """Position of the operand named by ``writes`` among ``args`` (None: the op writes none)."""
        return None if self.writes is None else [a.rstrip("?") for a in self.args].index(self.writes)

    @property
    def required(self) -> int:
        return sum(1 for a in self.args if not a.endswith("?"))


_REGISTRY: dict[str, OpDef] = {}


def register(op: OpDef) -> OpDef:
    """Add an op; a duplicate name is a pypto bug."""
    if op.name in _REGISTRY:
        raise InternalError(f"op '{op.name}' registered twice")
    _REGISTRY[op.name] = op
    return op


def get_op(name: str) -> OpDef:
    """The definition of ``name``; raises for unknown ops."""
    _ensure_loaded()
    try:
        return _REGISTRY[name]
    except KeyError:
        raise InternalError(f"unknown op '{name}'") from None


def has_op(name: str) -> bool:
    _ensure_loaded()
    return name in _REGISTRY


def all_ops() -> dict[str, OpDef]:
    _ensure_loaded()
    return dict(_REGISTRY)


def make_call(
    name: str,
    args: list[Expr] | tuple[Expr, ...],
    kwargs: dict[str, Any] | None = None,
    span: Span | None = None,
    attrs: dict[str, Any] | None = None,
) -> Call:
    """Build a typed Call to a registered op, checking arity and keyword names."""
    op = get_op(name)
    sp = span or Span.unknown()
    args = list(args)
    if not op.required <= len(args) <= len(op.args):
        want = f"{op.required}" if op.required == len(op.args) else f"{op.required} to {len(op.args)}"
        raise UserError(f"{name}() takes {want} positional arguments but {len(args)} were given", sp)
    kw = dict(kwargs or {})
    unknown = sorted(set(kw) - set(op.kwargs))
    if unknown:
        raise UserError(f"{name}() got an unexpected keyword argument '{unknown[0]}'", sp,
                        hint=f"accepted keywords: {', '.join(op.kwargs) or 'none'}")
    full_kw = {**op.kwargs, **kw}
    _check_kwarg_types(name, full_kw, sp)
    result = op.infer(args, full_kw, sp)
    return Call(name, tuple(args), kw, dict(attrs or {}), result, span=sp)


_DTYPE_KWARGS = ("dtype", "out_dtype", "target_type")


def _check_kwarg_types(name: str, kw: dict[str, Any], span: Span) -> None:
    """Keywords that name a dtype must hold one (a stray positional value can land in them)."""
    from pypto.ir.dtypes import DataType

    for key in _DTYPE_KWARGS:
        value = kw.get(key)
        if value is not None and not isinstance(value, DataType):
            raise UserError(f"{name}: '{key}' must be a dtype such as pl.FP32, got {value!r}", span,
                            hint="check the number and order of the arguments")


_loaded = False


def _ensure_loaded() -> None:
    global _loaded
    if not _loaded:
        _loaded = True
        from pypto.ir.ops import array_ops, comm_ops, elementwise_extra, system_ops, tensor_ops, tile_ops  # noqa: F401, I001  (registers on import)
