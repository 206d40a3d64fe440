"""FlattenTileNdTo2D: a batched matmul becomes one ``tile.matmul`` per matrix.

Tiles are 2-D here (an N-D tile is flattened as it is made), so the pass has one N-D construct left
to lower: ``tile.batch_matmul``. ptoas 0.1.1 has no batched matmul, so each operand's N-D Mat load is
re-issued as one load per matrix (a transposed operand as ``tile.transpose_view`` of it, which
ResolveBackendOpLayouts turns into a load through the transposed GM view), the matrices are multiplied
one by one, and each store of the batch becomes one store per matrix at its batch offset. An operand
computed in the kernel (a vector op's 2-D stack of matrices) is cut into its matrices by ``tile.slice``
(a transposed one then goes through ``tile.transpose_view`` as well). An operand holding one matrix is
reused by every product (broadcast). Every other N-D tile is still refused.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from itertools import product
from typing import ClassVar

from pypto.errors import UnsupportedFeatureError
from pypto.ir.enums import MemorySpace
from pypto.ir.expr import Call, ConstInt, Expr, MakeTuple, Var, as_int
from pypto.ir.function import Function, Program
from pypto.ir.ops.registry import make_call
from pypto.ir.properties import IRProperty
from pypto.ir.stmt import AssignStmt, Stmt
from pypto.ir.types import TileType
from pypto.passes._index import iadd
from pypto.passes._rewrite import assign_of, assigns_of, drop_unread, emit, ints, rewrite_blocks, shaped
from pypto.passes._util import base_name, map_blocks, var_use_counts
from pypto.passes.base import Pass
from pypto.passes.guards import no_nd_tiles
from pypto.span import Span

_WHY = "ptoas 0.1.1 has no batched matmul, so pypto issues one tile.matmul per matrix"


def _error(what: str, span: Span, hint: str) -> UnsupportedFeatureError:
    return UnsupportedFeatureError(f"tile.batch_matmul: {what}; {_WHY}", span, hint=hint)


@dataclass
class _Batch:
    """The per-matrix statements of one batched matmul and the Vars of its products."""

    shared: list[Stmt]  # the views of a broadcast operand
    chunks: list[list[Stmt]]  # per matrix: its loads and its matmul
    products: list[Var]
    batch: tuple[int, ...]  # the batch dims the products enumerate, row-major
    at_store: bool = False  # one store: each chunk goes right before its store (one matrix live at a time)


def _batch_dims(load: Call) -> tuple[int, ...] | None:
    """The load's constant batch dims (all but the last two of its window), None if one is not constant."""
    shapes = load.args[2]
    assert isinstance(shapes, MakeTuple)
    dims = [as_int(d) for d in shapes.elements[:-2]]
    return tuple(d for d in dims if d is not None) if None not in dims else None


def _stacked_rows(v: Expr, count: int) -> int | None:
    """The rows of one matrix of a computed 2-D tile stacking ``count`` of them; None if it is none."""
    t = v.type if isinstance(v, Var) else None
    if not isinstance(t, TileType) or t.rank != 2 or not t.static_shape():
        return None
    rows = t.shape[0]
    return rows // count if isinstance(rows, int) and rows % count == 0 else None


def _matrix_load(load: Call, index: tuple[int, ...], span: Span) -> Call:
    """The load of matrix ``index`` of an N-D window: leading dims offset by ``index``, extent 1."""
    offs, shapes = load.args[1], load.args[2]
    assert isinstance(offs, MakeTuple) and isinstance(shapes, MakeTuple)
    lead = len(index)
    new_offs = MakeTuple(tuple(iadd(o, i, span) for o, i in zip(offs.elements[:lead], index, strict=True))
                         + offs.elements[lead:], span=span)
    one = tuple(ConstInt(1, span=span) for _ in index)
    args: list[Expr | None] = [load.args[0], new_offs]
    for a in load.args[2:]:
        args.append(MakeTuple(one + a.elements[lead:], span=span) if isinstance(a, MakeTuple) else a)
    return make_call("tile.load", args, dict(load.kwargs), span=span)


class _Lowering:
    """Plans every batched matmul of one kernel before any statement is rewritten."""

    def __init__(self, func: Function) -> None:
        self.loads = assigns_of(func.body, "tile.load")
        self.uses = var_use_counts(func.body)
        self.plans: dict[Var, _Batch] = {}
        self.fed: set[Var] = set()  # loads the batched matmuls read whole

    def operand(self, v: Expr, count: int, trans: bool, span: Span) -> tuple[list[list[Stmt]], list[Expr],
                                                                           tuple[int, ...]]:
        """Per matrix, the statements that make it and the operand (one, broadcast, when ``count`` is 1)."""
        if count == 1:
            if not trans:
                return [[]], [v], ()
            stmts, view = self._view(v, span)
            return [stmts], [view], ()
        load = self.loads.get(v) if isinstance(v, Var) else None
        if load is None and (rows := _stacked_rows(v, count)) is not None:
            return self._slices(v, count, rows, trans, span)
        if load is None or load.kwargs.get("target_memory") is not MemorySpace.Mat \
                or not isinstance(load.args[2], MakeTuple) or (dims := _batch_dims(load)) is None:
            raise _error("each batched operand must be a pl.load of an N-D tensor window into Mat with static "
                         "batch dims, or a tile computed in the kernel", span,
                         hint="load the operand with pl.load(x, offsets, [B, M, K], target_memory=pl.Mem.Mat), "
                              "or loop over the batch with pl.matmul")
        assert isinstance(v, Var)
        self.fed.add(v)
        chunks, mats = self._matrices(v, [("_".join(map(str, index)), _matrix_load(load, index, span))
                                          for index in product(*(range(d) for d in dims))], trans, span)
        return chunks, mats, dims

    def _slices(self, v: Var, count: int, rows: int, trans: bool, span: Span) -> tuple[list[list[Stmt]], list[Expr],
                                                                                   tuple[int, ...]]:
        """A batched operand computed in the kernel (its N-D tile is the 2-D stack of its ``count``
        matrices): matrix ``i`` is the window ``[i * rows, 0]`` of it (a copy, ``pto.textract``)."""
        cols = shaped(v).shape[1]
        wins = [make_call("tile.slice", [v, ints([rows, cols], span), ints([i * rows, 0], span)], span=span)
                for i in range(count)]
        chunks, mats = self._matrices(v, [(str(i), win) for i, win in enumerate(wins)], trans, span)
        return chunks, mats, (count,)

    def _matrices(self, v: Var, values: list[tuple[str, Call]], trans: bool, span: Span
                  ) -> tuple[list[list[Stmt]], list[Expr]]:
        """Per matrix ``<v>_<suffix> = value``, then its transposed view when ``trans``; and the operands."""
        chunks: list[list[Stmt]] = []
        mats: list[Expr] = []
        for suffix, value in values:
            chunks.append([])
            var = emit(chunks[-1], f"{base_name(v.name)}_{suffix}", value, span)
            if trans:
                more, var = self._view(var, span)
                chunks[-1] += more
            mats.append(var)
        return chunks, mats

    @staticmethod
    def _view(v: Expr, span: Span) -> tuple[list[Stmt], Var]:
        out: list[Stmt] = []
        view = make_call("tile.transpose_view", [v], span=span)
        return out, emit(out, f"{base_name(getattr(v, 'name', 'x'))}_t", view, span)

    def plan(self, var: Var, mm: Call) -> None:
        kw = mm.kwargs
        sa, lhs, da = self.operand(mm.args[0], kw.get("lhs_batch", 1), bool(kw.get("a_trans")), mm.span)
        sb, rhs, db = self.operand(mm.args[1], kw.get("rhs_batch", 1), bool(kw.get("b_trans")), mm.span)
        count = max(len(lhs), len(rhs))
        shared = [*(sa[0] if len(lhs) == 1 else []), *(sb[0] if len(rhs) == 1 else [])]
        chunks, prods = [], []
        extra = {"out_dtype": kw["out_dtype"]} if kw.get("out_dtype") is not None else {}
        for i in range(count):
            call = make_call("tile.matmul", [lhs[i % len(lhs)], rhs[i % len(rhs)]], extra, span=mm.span)
            p = Var(f"{base_name(var.name)}_{i}", call.result_type, span=var.span)
            own = [*(sa[i] if len(lhs) > 1 else []), *(sb[i] if len(rhs) > 1 else [])]
            chunks.append([*own, AssignStmt(p, call, span=mm.span)])
            prods.append(p)
        # equal counts: the batch dims of a load (a computed operand knows only its count)
        dims = da if len(lhs) > len(rhs) or (len(lhs) == len(rhs) and len(da) >= len(db)) else db
        self.plans[var] = _Batch(shared, chunks, prods, dims)

    def at_matmul(self, s: Stmt) -> list[Stmt] | None:
        plan = self.plans.get(s.var) if isinstance(s, AssignStmt) else None
        if plan is None:
            return None
        return plan.shared + ([] if plan.at_store else [x for chunk in plan.chunks for x in chunk])

    def check_uses(self, body: Stmt) -> None:
        """Each batched product may only be stored (one store per matrix replaces each store)."""
        stored = Counter(c.args[0] for c in assigns_of(body, "tile.store").values())
        for var, plan in self.plans.items():
            plan.at_store = stored[var] == 1 and _same_block(body, var)
            if self.uses[var] - 1 != stored[var]:
                raise _error(f"its result '{var.name}' is used other than by pl.store", var.span,
                             hint="store the batch with pl.store(c, offsets, out) and load it back, or loop over "
                                  "the batch with pl.matmul")

    def store(self, s: Stmt, call: Call) -> list[Stmt] | None:
        plan = self.plans.get(call.args[0]) if isinstance(call.args[0], Var) else None
        if plan is None or not isinstance(s, AssignStmt):
            return None
        offs, target = call.args[1], call.args[2]
        rank = getattr(target.type, "rank", 0)
        if not isinstance(offs, MakeTuple) or rank < 2 + len(plan.batch):
            raise _error(f"the batch is stored into a tensor of rank {rank}; it needs rank "
                         f"{2 + len(plan.batch)} or more (one batch dim per operand batch dim)", s.span,
                         hint="store into a tensor with the batch dims, e.g. [B, M, N]")
        out: list[Stmt] = []
        lead = rank - 2 - len(plan.batch)
        for k, (p, index) in enumerate(zip(plan.products, product(*(range(d) for d in plan.batch)), strict=True)):
            el = list(offs.elements)
            for j, i in enumerate(index):
                el[lead + j] = iadd(el[lead + j], i, s.span)
            if plan.at_store:
                out += plan.chunks[k]
            st = make_call("tile.store", [p, MakeTuple(tuple(el), span=offs.span), target], dict(call.kwargs),
                           span=call.span)
            var = s.var if k == len(plan.products) - 1 else Var(f"{base_name(s.var.name)}_{k}", st.result_type,
                                                                 span=s.span)
            out.append(AssignStmt(var, st, span=s.span))
            target = var
        return out


@dataclass(frozen=True)
class FlattenTileNdTo2D(Pass):
    """One ``tile.matmul`` per matrix of each ``tile.batch_matmul``; other N-D tiles are refused."""

    name = "FlattenTileNdTo2D"
    produces: ClassVar[frozenset[IRProperty]] = frozenset({IRProperty.TileOps2D})

    def run(self, program: Program) -> Program:
        program = super().run(program)
        found = no_nd_tiles(program)
        if found is not None:
            raise UnsupportedFeatureError(f"{found[0]} are not supported by this pypto (pass {self.name})", found[1])
        return program

    def run_function(self, func: Function, program: Program) -> Function:
        mms = assigns_of(func.body, "tile.batch_matmul") if func.is_incore else {}
        if not mms:
            return func
        low = _Lowering(func)
        for var, mm in mms.items():
            low.plan(var, mm)
        low.check_uses(func.body)
        body = rewrite_blocks(func.body, {
            "tile.batch_matmul": lambda s, c: low.at_matmul(s),
            "tile.store": low.store})
        return func.with_(body=_drop_dead(body, low.fed))


def _same_block(body: Stmt, var: Var) -> bool:
    """Whether ``var``'s definition and its store are statements of one block (not the store in a loop)."""
    found = False

    def block(stmts: list[Stmt]) -> list[Stmt]:
        nonlocal found
        defines = any(isinstance(x, AssignStmt) and x.var is var for x in stmts)
        stores = any((m := assign_of(x, "tile.store")) is not None and m[1].args[0] is var for x in stmts)
        found = found or (defines and stores)
        return stmts

    map_blocks(body, block)
    return found


def _drop_dead(body: Stmt, loads: set[Var]) -> Stmt:
    """The whole-batch loads, and transposed views of them, nothing reads any more."""
    views = {v for v, c in assigns_of(body, "tile.transpose_view").items() if c.args[0] in loads}
    return drop_unread(drop_unread(body, views), loads)


__all__ = ["FlattenTileNdTo2D"]
