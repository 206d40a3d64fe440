"""``comm.*`` ops: built-in communication tasks of a distributed chip program (orchestration level).

They come from splitting a kernel at its ``pld`` comm ops (:mod:`pypto.language.distributed.comm_split`)
and are emitted as the runtime's ``rt_comm_*`` submissions (``pto_comm_api.h``); ``comm.rank`` and
``comm.nranks`` read the rank process's comm context.
"""

from __future__ import annotations

from typing import Any

from pypto.errors import UserError
from pypto.ir.dtypes import DataType
from pypto.ir.expr import Expr
from pypto.ir.ops.registry import OpDef, register
from pypto.ir.types import ScalarType, TensorType, Type
from pypto.span import Span


def _index(args: list[Expr], kw: dict[str, Any], span: Span) -> Type:
    return ScalarType(DataType.INDEX)


def _tensor(i: int, what: str, int32: bool = False) -> Any:
    def infer(args: list[Expr], kw: dict[str, Any], span: Span) -> Type:
        t = args[i].type
        if not isinstance(t, TensorType):
            raise UserError(f"{what} must be a tensor, got {t}", span)
        if int32 and t.dtype is not DataType.INT32:
            raise UserError(f"{what} must be an INT32 signal window, got {t.dtype.value}", span,
                            hint="allocate it with pld.alloc_window_buffer([...], dtype=pl.INT32)")
        return t
    return infer


register(OpDef("comm.rank", (), _index, category="comm", doc="this rank (rt_comm_rank())"))
register(OpDef("comm.nranks", (), _index, category="comm", doc="the number of ranks (rt_comm_nranks())"))
register(OpDef("comm.notify", ("signal", "peer", "offsets", "value"), _tensor(0, "notify signal", True), {"op": 1},
               category="comm", doc="set/add value into the cell at offsets of rank peer's signal"))
register(OpDef("comm.wait", ("signal", "offsets", "expected"), _tensor(0, "wait signal", True), {"cmp": 1},
               category="comm", doc="wait until this rank's cell ==/>= expected"))
register(OpDef("comm.copy", ("dst", "dst_rank", "src", "src_rank"), _tensor(0, "copy destination"), {"atomic": 0},
               category="comm", doc="dst (on dst_rank, -1: local) <- src (on src_rank, -1: local)"))
register(OpDef("comm.barrier", ("signal",), _tensor(0, "barrier signal", True), category="comm",
               doc="all ranks arrive before any leaves"))
