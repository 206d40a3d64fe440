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
from pypto.ir.expr import Call, Expr, MakeTuple, Var, as_int
from pypto.ir.ops.registry import make_call
from pypto.ir.stmt import Stmt
from pypto.ir.types import TensorType, TileType
from pypto.passes._index import iadd
from pypto.passes._rewrite import assign_of, assigns_of, emit, ints
from pypto.span import Span


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
        call = make_call("tile.load", [self.tensor, ints(offs, span), ints(ext, span), ints(ext, span)],
                         dict(self.load.kwargs), span=span)
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


def operand_defs(body: Stmt) -> dict[Var, Call]:
    """The ``tile.load`` and ``tile.transpose_view`` assignments of ``body``: what :func:`matmul_operand` reads."""
    return {**assigns_of(body, "tile.load"), **assigns_of(body, "tile.transpose_view")}


def matmul_of_loads(s: Stmt, defs: dict[Var, Call], ops: tuple[str, ...] = ("tile.matmul", "tile.matmul_acc")
                    ) -> tuple[Var, Call, MatmulOperand, MatmulOperand] | None:
    """``(c, call, A, B)`` for ``c = op(A, B, ...)`` or ``c = matmul_acc(acc, A, B)`` (``op`` in ``ops``) of
    two :class:`MatmulOperand` with a tile result; None for anything else."""
    found = assign_of(s, ops)
    if found is None:
        return None
    c, call = found
    first = int(call.op == "tile.matmul_acc")
    a, b = (matmul_operand(x, defs) for x in call.args[first:first + 2])
    if a is None or b is None or not isinstance(c.var_type, TileType):
        return None
    return c, call, a, b


def operand_blocks(a: MatmulOperand, b: MatmulOperand, at: tuple[Expr, Expr, Expr], mnk: tuple[int, int, int],
                   names: tuple[str, str], span: Span) -> tuple[list[Stmt], Var, Var]:
    """The ``[m, k]`` window of ``a`` at ``(row, ko)`` and the ``[k, n]`` window of ``b`` at ``(ko, col)``
    (``at`` is ``(row, col, ko)``): their loads and the two windows."""
    (row, col, ko), (m, n, k) = at, mnk
    sa, va = a.window(row, ko, (m, k), names[0], span)
    sb, vb = b.window(ko, col, (k, n), names[1], span)
    return [*sa, *sb], va, vb


__all__ = ["MatmulOperand", "matmul_of_loads", "matmul_operand", "operand_blocks", "operand_defs"]
