"""Values the PTO walker binds IR variables to: tiles, GM views, scalars and deferred pieces.

They sit below both the walker (:mod:`pypto.codegen.pto_mlir`) and its rule tables
(:mod:`pypto.codegen.pto_rules`, :mod:`pypto.codegen.pto_views`), so the walker does not import its
rules and the rules import the walker only for typing; :mod:`pypto.codegen.pto_module` wires them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from pypto.codegen.emitter import base_name
from pypto.codegen.pto_types import TOOLCHAIN, TileBuf, tensor_view_type
from pypto.ir.expr import Expr
from pypto.ir.types import TensorType


class ErrorSink(Protocol):
    """What :func:`pieces_error` needs of a walker: its located error factory."""

    def error(self, msg: str, hint: str | None = None) -> Any: ...


@dataclass(frozen=True, slots=True)
class Tile:
    """A tile buffer SSA value."""

    ssa: str
    buf: TileBuf

    @property
    def ty(self) -> str:
        return self.buf.text


@dataclass(frozen=True, slots=True)
class GmView:
    """A ``pto.make_tensor_view`` of a tensor argument (rank-1 tensors are viewed as [1, N])."""

    ssa: str
    tensor: TensorType
    rank: int
    ptr: str = ""  # the pointer argument it views
    nd: tuple = ()  # the dims of a rank > 2 tensor viewed flat as 2-D (see pto_ndview)

    @property
    def ty(self) -> str:
        return tensor_view_type(self.rank, self.tensor.dtype)


@dataclass(frozen=True, slots=True)
class Scalar:
    ssa: str
    ty: str


ALTERNATIVE = {
    "tile.concat": "store the concat result directly (each half is stored at its column offset), or store the "
                   "two tiles into one GM tensor at column offsets and load the joined tile in a following kernel",
    "tile.assemble": "store the assembled result directly (the target and the source are stored at their "
                     "offsets), or write the source into the GM tensor at the offset (pl.store / "
                     "out[a:b, :] = src)",
    "tile.fillpad_expand": "store the expanded result directly (its pad and its source are stored at their "
                           "offsets), or pl.store the source into a pl.full tensor of the destination shape",
}

Block = tuple["Tile", object, object]  # tile, row offset, column offset (int or index Expr)


@dataclass(frozen=True, slots=True)
class Pieces:
    """A tile assembled from blocks that are only written out when it is stored."""

    op: str
    blocks: tuple[Block, ...]


def pieces_error(cg: ErrorSink, e: Expr, p: Pieces) -> Exception:
    return cg.error(f"the result of {p.op} ('{getattr(e, 'name', e)}') is used as a tile operand; {TOOLCHAIN} "
                    f"has no tconcat/tinsert instruction, so {p.op} results can only be stored",
                    hint=ALTERNATIVE[p.op])


def carried_pieces_error(cg: ErrorSink, e: Expr, p: Pieces) -> Exception:
    """A loop or if carrying a concat/assemble result: its blocks live in different iterations' buffers."""
    return cg.error(f"the result of {p.op} ('{base_name(getattr(e, 'name', str(e)))}') is carried by a loop or an if; "
                    f"{TOOLCHAIN} has no tconcat/tinsert instruction, so pypto keeps {p.op} results as blocks "
                    "that are written out when stored, and blocks built in different iterations cannot be kept",
                    hint="store each block inside the loop at its offset (pl.store(block, [r, 0], out)) instead "
                         "of assembling a tile across iterations")
