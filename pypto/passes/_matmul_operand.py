"""The Mat loads AutoTileMatmulL0 can re-issue window by window, and the windows it loads.

An operand is a ``tile.load`` into Mat of one matrix of a tensor with static shapes: a 2-D tensor, or one
matrix of an N-D one (every leading window extent 1, as FlattenTileNdTo2D issues per matrix), optionally
seen through ``tile.transpose_view`` (a ``b_trans`` operand). A window of it is a load of the same tensor at
the shifted offsets (of the swapped window, viewed transposed again, for a transposed operand), so
ResolveBackendOpLayouts later reads it through the transposed GM view like the whole operand.
"""

from __future__ import annotations

from dataclasses import dataclass

from pypto.ir.enums import MemorySpace
from pypto.ir.expr import Call, ConstInt, Expr, MakeTuple, Var, as_int
from pypto.ir.ops.registry import make_call
from pypto.ir.stmt import Stmt
from pypto.ir.types import TensorType, TileType
from pypto.passes._index import iadd
from pypto.passes._rewrite import emit
from pypto.span import Span


def int_tuple(values: list[int | Expr], span: Span) -> MakeTuple:
    return MakeTuple(tuple(v if isinstance(v, Expr) else ConstInt(v, span=span) for v in values), span=span)


@dataclass(frozen=True, slots=True)
class MatmulOperand:
    """A Mat load feeding a matmul: the tensor, the window's leading offsets and origin, its extent."""

    var: Var
    """The matmul's argument (the view of the load for a transposed operand)."""
    tensor: Expr
    lead: tuple[Expr, ...]
    """The offsets of the leading dims of an N-D tensor (the window is 1 there)."""
    origin: tuple[Expr, Expr]
    load: Call
    trans: bool = False
    defs: tuple[Var, ...] = ()
    """Every Var the operand is made of (the load's, and its view's)."""

    @property
    def shape(self) -> tuple[int, int]:
        """The operand's ``[rows, cols]`` as the matmul reads it (transposed for a viewed operand)."""
        t = self.load.type
        assert isinstance(t, TileType)
        r, c = t.shape
        assert isinstance(r, int) and isinstance(c, int)
        return (c, r) if self.trans else (r, c)

    def window(self, row: Expr, col: Expr, shape: tuple[int, int], name: str, span: Span) -> tuple[list[Stmt], Var]:
        """The ``shape`` window at ``(row, col)`` of the operand (as the matmul reads it)."""
        if self.trans:
            row, col, shape = col, row, (shape[1], shape[0])
        offs = [*self.lead, iadd(self.origin[0], row, span), iadd(self.origin[1], col, span)]
        ext = [*(1 for _ in self.lead), *shape]
        call = make_call("tile.load", [self.tensor, int_tuple(offs, span), int_tuple(ext, span),
                                       int_tuple(ext, span)], dict(self.load.kwargs), span=span)
        stmts: list[Stmt] = []
        v = emit(stmts, name + ("_nat" if self.trans else ""), call, span)
        if self.trans:
            v = emit(stmts, name, make_call("tile.transpose_view", [v], span=span), span)
        return stmts, v


def matmul_operand(e: Expr, defs: dict[Var, Call]) -> MatmulOperand | None:
    """``e`` as a :class:`MatmulOperand`; ``defs`` maps Vars to their ``tile.load`` / ``tile.transpose_view``
    calls. None when ``e`` is anything else (a partly valid window, a dynamic shape, several matrices)."""
    if not isinstance(e, Var) or (call := defs.get(e)) is None:
        return None
    trans = call.op == "tile.transpose_view"
    src = call.args[0] if trans else e
    load = defs.get(src) if isinstance(src, Var) else None
    if load is None or load.op != "tile.load" or load.kwargs.get("target_memory") is not MemorySpace.Mat:
        return None
    t, tt = load.args[0].type, load.type
    if not (isinstance(t, TensorType) and t.rank >= 2 and isinstance(tt, TileType) and tt.static_shape()
            and tt.rank == 2):
        return None
    offs, ext = load.args[1], load.args[2]
    if not isinstance(offs, MakeTuple) or not isinstance(ext, MakeTuple) or len(offs.elements) != t.rank:
        return None
    if any(as_int(d) != 1 for d in ext.elements[:-2]):
        return None  # a window of several matrices
    valid = load.args[3] if len(load.args) > 3 else None
    if valid is not None and (not isinstance(valid, MakeTuple) or
                              tuple(as_int(d) for d in valid.elements[-2:]) != tt.static_shape()):
        return None  # a partly valid window: left alone
    *lead, row, col = offs.elements
    defs_ = (e, src) if trans and isinstance(src, Var) else (e,)
    return MatmulOperand(e, load.args[0], tuple(lead), (row, col), load, trans, defs_)


__all__ = ["MatmulOperand", "int_tuple", "matmul_operand"]
