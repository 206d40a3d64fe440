"""Upstream's explicit cross-core pipe ops (``tpush``/``tpop``/``tfree``, pipe set-up, slot buffers).

ptoas 0.1.1 has no cross-core pipe instructions, so none of these reaches codegen: at the start of
InlineFunctions (``pypto.passes._pipes``) each ``tpush`` becomes a store to a GM slot tensor, each
matching ``tpop`` a load of it, the set-up ops and ``tfree`` are dropped, and the producer kernel is
submitted before the consumer, ordered by the runtime through the slot tensor. ``system.syncall`` is
cut into task boundaries by ExpandMixedKernel (``pypto.passes._barrier_split``). A ``tpop`` has no operand
to infer its tile from: the assignment's annotation (``x: pl.Tile[[16, 16], pl.FP32, pl.Mem.Mat] =
pl.tpop_from_aiv(...)``) gives its type.
"""

from __future__ import annotations

from typing import Any

from pypto.errors import UserError
from pypto.ir.dtypes import DataType
from pypto.ir.expr import Expr
from pypto.ir.ops.registry import OpDef, register
from pypto.ir.types import ScalarType, TileType, Type, UnknownType
from pypto.span import Span

AUTO = -1  # upstream's pl.AUTO: let the compiler place a reserved buffer

PUSH = {"tile.tpush_to_aic": "v2c", "tile.tpush_to_aiv": "c2v"}
POP = {"tile.tpop_from_aiv": "v2c", "tile.tpop_from_aic": "c2v"}
FREE = ("system.tfree_to_aic", "system.tfree_to_aiv")
SETUP = ("system.aic_initialize_pipe", "system.aiv_initialize_pipe", "system.reserve_buffer",
         "system.import_peer_buffer")


def _push(args: list[Expr], kw: dict[str, Any], span: Span) -> Type:
    if not isinstance(args[0].type, TileType):
        raise UserError(f"a cross-core push takes a tile, got {args[0].type}", span)
    return UnknownType()


def _pop(args: list[Expr], kw: dict[str, Any], span: Span) -> Type:
    shape, dtype = kw.get("shape"), kw.get("dtype")
    if shape is not None and dtype is not None:
        return TileType(tuple(shape), dtype)
    return UnknownType()  # the assignment's annotation types it


def _none(args: list[Expr], kw: dict[str, Any], span: Span) -> Type:
    return UnknownType()


def _buffer(args: list[Expr], kw: dict[str, Any], span: Span) -> Type:
    return ScalarType(DataType.INT32)


_PIPE_KW = {"split": 0, "id": None}
for _name, _doc in (("tile.tpush_to_aic", "push a tile from AIV to AIC"),
                    ("tile.tpush_to_aiv", "push a tile from AIC to AIV")):
    register(OpDef(_name, ("tile",), _push, {**_PIPE_KW, "lane_stride": None}, category="pipe", doc=_doc,
                   effect=True))
for _name, _doc in (("tile.tpop_from_aiv", "pop a tile pushed by AIV"), ("tile.tpop_from_aic", "pop a tile pushed by AIC")):
    register(OpDef(_name, (), _pop, {**_PIPE_KW, "lane_stride": None, "shape": None, "dtype": None},
                   category="pipe", doc=_doc, effect=True))
for _name in FREE:
    register(OpDef(_name, ("tile",), _none, dict(_PIPE_KW), category="pipe", doc="release a popped slot",
                   effect=True))
for _name in SETUP[:2]:
    register(OpDef(_name, ("c2v_consumer_buf?", "v2c_consumer_buf?"), _none,
                   {"dir_mask": 0, "slot_size": 0, "slot_num": None, "local_slot_num": None, "id": None},
                   category="pipe", doc="set up a cross-core pipe", effect=True))
register(OpDef("system.reserve_buffer", (), _buffer, {"name": "", "size": 0, "base": AUTO}, category="pipe",
               doc="reserve a local pipe slot buffer", effect=True))
register(OpDef("system.import_peer_buffer", (), _buffer, {"name": "", "peer_func": ""}, category="pipe",
               doc="the peer kernel's reserved slot buffer", effect=True))

# pl.system.syncall: a barrier across the blocks of an SPMD launch (and the AIC/AIV halves). ptoas 0.1.1
# has no SYNCALL; ExpandMixedKernel cuts the kernel into one SPMD task before and one after it.
register(OpDef("system.syncall", ("gm_workspace?",), _none, {"core_type": "mix", "mode": "hard", "used_cores": None},
               category="pipe", doc="barrier across every block of the launch", effect=True))
