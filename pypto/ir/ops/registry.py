"""The op registry: the single source of truth for op names, operands, keyword defaults and typing.

The DSL, the printer/parser, the verifier and every emitter look ops up here by name; an unknown
name raises. Codegen rule tables are keyed by the same names.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pypto.errors import InternalError, UserError
from pypto.ir.enums import MemorySpace
from pypto.ir.expr import Call, Expr
from pypto.ir.types import Type
from pypto.span import Span

InferFn = Callable[["list[Expr]", "dict[str, Any]", Span], Type]


# op families whose tensor ops convert to their tile twin over their operands' tiles (OpDef.computes_on_tiles)
COMPUTE_CATEGORIES = frozenset({"binary", "scalar", "unary", "cast", "expand", "reduce", "sort"})


@dataclass(frozen=True, slots=True)
class OpDef:
    """One op: ``args`` are positional operand names (``?`` suffix = optional), ``kwargs`` defaults.

    ``positional_kwargs`` are non-Expr parameters (enums, sizes) that the DSL writes positionally
    after the operands, e.g. ``pl.tile.alloc(pl.Mem.Vec, 65536)``; the IR keeps them in kwargs.

    Traits (the facts passes, the verifier and the memory planners read; no pass keeps its own table):

    * ``writes``: the operand the op updates in place; the result is that operand's new value
      (``tile.store`` writes ``output_tensor``, ``tensor.assemble`` writes ``target``).
    * ``view_of``: the operand whose buffer the result names (``tensor.slice``, ``tensor.reshape``).
    * ``reuses``: the operand whose buffer the result takes over, without being a write of it
      (``tile.matmul_acc`` accumulates into ``acc``).
    * ``core``: ``"cube"`` for ops only the cube unit runs; None = the core where its tiles live.
    * ``result_space``: the memory space of the result tile when the frontend left it open.
    * ``effect``: kept even when its result is never read (true for every op that ``writes``).
    * ``fresh``: the result is a newly allocated buffer (``tensor.create``).
    * ``in_place``: False when the result must not share a buffer with an operand that dies at the
      call (the instruction writes the result before it has read every operand).
    * ``keeps_operands``: the result reads its operands' buffers lazily (deferred or byte views),
      so they must stay live as long as the result.
    * ``signless``: on integer data the result's bits do not depend on whether the operands are read
      signed or unsigned (loads, stores, moves, views, broadcasts, wrapping add/sub/mul and their row/column
      sums and products, bitwise ops, left shifts, ``ci``, sorts of FP32 keys, gathers). An unsigned type
      ptoas 0.1.1 has no tiles of (UINT16) is carried in its signed twin through these ops only, and UINT32
      (whose ui32 tiles 0.1.1 lowers as int32_t) takes these ops and the codegen's exact UINT32 rewrites;
      any other op on either is a located refusal.
    * ``computes_on_tiles`` (a property): ConvertTensorToTileOps lowers this ``tensor`` op as
      ``tile.<same name>`` over its operands loaded into Vec tiles. It holds for every op of the elementwise,
      cast, broadcast, reduction and sort families (:data:`COMPUTE_CATEGORIES`) and for the few views and
      creates registered with ``tile_compute=True`` (``reshape``, ``fillpad``, ``fillpad_expand``,
      ``set_validshape``, ``expands``).
    * ``row_gather``: a GM row gather into a tensor (``tensor.gather_row``, ``tensor.paged_gather``) that
      ptoas 0.1.1 cannot run inside a kernel; HoistScopeGathers runs it as copy tasks before the kernel.
    """

    name: str
    args: tuple[str, ...]
    infer: InferFn
    kwargs: dict[str, Any] = field(default_factory=dict)
    category: str = "misc"
    doc: str = ""
    positional_kwargs: tuple[str, ...] = ()
    writes: str | None = None
    view_of: str | None = None
    reuses: str | None = None
    core: str | None = None
    result_space: MemorySpace | None = None
    effect: bool = False
    fresh: bool = False
    in_place: bool = True
    keeps_operands: bool = False
    signless: bool = False
    row_gather: bool = False
    tile_compute: bool = False

    @property
    def namespace(self) -> str:
        return self.name.split(".", 1)[0]

    @property
    def computes_on_tiles(self) -> bool:
        """See ``tile_compute``: the explicit trait, or a family that always converts this way."""
        return self.tile_compute or self.category in COMPUTE_CATEGORIES

    @property
    def short(self) -> str:
        return self.name.split(".", 1)[1]

    def arg_index(self, name: str | None) -> int | None:
        """Position of operand ``name`` among ``args`` (None for None)."""
        return None if name is None else [a.rstrip("?") for a in self.args].index(name)

    @property
    def writes_index(self) -> int | None:
        """Position of the operand named by ``writes`` among ``args`` (None: the op writes none)."""
        return self.arg_index(self.writes)

    @property
    def has_effect(self) -> bool:
        """The call is kept for its effect even when its result is never read."""
        return self.effect or self.writes is not None

    @property
    def buffer_index(self) -> int | None:
        """The operand whose buffer the result is: the written one, else the one it reuses."""
        return self.arg_index(self.writes or self.reuses)

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


def op_of(call: object) -> OpDef | None:
    """The definition of a call's op; None for anything but a Call of a registered op."""
    return lookup(call.op) if isinstance(call, Call) else None


def lookup(name: object) -> OpDef | None:
    """The definition of ``name``; None for unknown names and non-strings (a callee GlobalVar)."""
    if not isinstance(name, str):
        return None
    _ensure_loaded()
    return _REGISTRY.get(name)


def written_index(call: Call) -> int | None:
    """Position of the argument an op call writes in place (None: it writes none, or is a program call)."""
    op = lookup(call.op)
    index = op.writes_index if op is not None else None
    return index if index is not None and index < len(call.args) else None


def source_operand(call: Call) -> Expr | None:
    """The operand whose buffer an op call's result views or updates (``tensor.slice``, ``tensor.assemble``)."""
    op = lookup(call.op)
    index = op.arg_index(op.view_of or op.writes) if op is not None else None
    return call.args[index] if index is not None and index < len(call.args) else None


def ops_where(pred: Callable[[OpDef], object]) -> frozenset[str]:
    """Names of the registered ops whose definition satisfies ``pred``."""
    _ensure_loaded()
    return frozenset(name for name, op in _REGISTRY.items() if pred(op))


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
        from pypto.ir.ops import array_ops, comm_ops, elementwise_extra, pipe_ops, random_ops, row_gather_ops, scatter_ops, sort_ops, system_ops, tensor_ops, tile_ops  # noqa: F401, I001  (registers on import)
