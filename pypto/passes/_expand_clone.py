"""``pl.expand_clone(x, y)`` in a kernel, for ConvertTensorToTileOps: ``x`` broadcast along its one size-1
axis into ``y``, with the broadcasts ptoas 0.1.1 has.

* the same shape: ``y`` gets a copy (a load and a store);
* 2-D ``[1, N]`` / ``[M, 1]``: ``tile.col_expand`` / ``tile.row_expand`` into an ``[M, N]`` tile, stored;
* 3-D ``[1, N, K]``: one load, stored at every ``[b, 0, 0]``;
* 3-D ``[B, 1, K]``: per ``b``, the ``[1, K]`` row is column-expanded to ``[N, K]`` and stored;
* 3-D ``[B, N, 1]``: the ``[B * N, 1]`` column is row-expanded to ``[B * N, K]`` and stored.

Other ranks, and an input or target the kernel computed itself, are a located error.
"""

from __future__ import annotations

from collections.abc import Collection

from pypto.errors import UnsupportedFeatureError
from pypto.ir.dtypes import DataType
from pypto.ir.enums import MemorySpace
from pypto.ir.expr import Call, Expr, Var
from pypto.ir.ops.registry import make_call
from pypto.ir.ops.tensor_ops import expand_axis
from pypto.ir.stmt import AssignStmt, EvalStmt, Stmt
from pypto.ir.types import TensorType
from pypto.passes._rewrite import emit, ints
from pypto.passes._util import base_name


class _Emit:
    """Statements of one expansion, each result a fresh Var named after the target."""

    def __init__(self, name: str, span: object) -> None:
        self.stmts: list[Stmt] = []
        self.name, self.span = name, span

    def __call__(self, op: str, args: list, **kw: object) -> Var:
        return emit(self.stmts, f"{self.name}__expand", make_call(op, args, kw, span=self.span), self.span)

    def load(self, x: Expr, at: list, shape: list) -> Var:
        return self("tile.load", [x, ints(at), ints(shape), ints(shape)], target_memory=MemorySpace.Vec)

    def expand(self, op: str, src: Var, shape: list, dtype: DataType) -> Var:
        room = self("tile.create", [ints(shape)], dtype=dtype, target_memory=MemorySpace.Vec)
        return self(op, [room, src])


def _refuse(value: Call, what: str) -> UnsupportedFeatureError:
    return UnsupportedFeatureError(f"tensor.expand_clone {what} cannot be lowered for ptoas 0.1.1 yet", value.span,
                                   hint="expand a 2-D or 3-D GM tensor into a GM tensor (pl.Out parameter), or "
                                        "broadcast tiles with pl.row_expand / pl.col_expand")


def expand_clone(tiles: Collection[Var], s: Stmt, value: Call) -> list[Stmt]:
    x, y = value.args
    src, dst = x.type, y.type
    assert isinstance(src, TensorType) and isinstance(dst, TensorType)
    if any(isinstance(a, Var) and a in tiles for a in (x, y)):
        raise _refuse(value, "of a tensor the kernel computed")
    if dst.rank not in (2, 3):
        raise _refuse(value, f"of a rank-{dst.rank} tensor")
    axis = expand_axis(src, dst, value.span)
    em = _Emit(base_name(y.name) if isinstance(y, Var) else "expand", value.span)
    shape, zeros = list(dst.shape), [0] * dst.rank
    if axis is None:
        stores = [(em.load(x, zeros, shape), zeros)]
    elif dst.rank == 2:
        op = "tile.col_expand" if axis == 0 else "tile.row_expand"
        stores = [(em.expand(op, em.load(x, zeros, list(src.shape)), shape, dst.dtype), zeros)]
    elif axis == 0:
        t = em.load(x, zeros, list(src.shape))
        stores = [(t, [b, 0, 0]) for b in range(shape[0])]
    elif axis == 1:
        stores = []
        for b in range(shape[0]):
            row = em("tile.reshape", [em.load(x, [b, 0, 0], [1, 1, shape[2]]), ints([1, shape[2]])])
            e = em.expand("tile.col_expand", row, shape[1:], dst.dtype)
            stores.append((em("tile.reshape", [e, ints([1, *shape[1:]])]), [b, 0, 0]))
    else:
        col = em("tile.reshape", [em.load(x, zeros, list(src.shape)), ints([shape[0] * shape[1], 1])])
        e = em.expand("tile.row_expand", col, [shape[0] * shape[1], shape[2]], dst.dtype)
        stores = [(em("tile.reshape", [e, ints(shape)]), zeros)]
    target: Expr = y
    for t, at in stores[:-1]:  # each store's result is the target of the next; the last is the statement's
        target = em("tile.store", [t, ints(at), target])
    t, at = stores[-1]
    call = make_call("tile.store", [t, ints(at), target], span=value.span)
    last = AssignStmt(s.var, call, span=s.span) if isinstance(s, AssignStmt) else EvalStmt(call, span=s.span)
    return [*em.stmts, last]
