"""A loop of scalar reads of a kernel's own tile, scalar arithmetic and element writes becomes row tile ops.

ptoas 0.1.1 has no scalar read of a tile (its PlanMemory pass refuses ``pto.tgetval``) and lowers no float
scalar arithmetic in a kernel. A loop with constant bounds and step 1 over ``i`` (``pl.unroll`` or
``pl.range``), in a kernel or a ``pl.at`` region, whose body only

* reads elements ``s = pl.read(t, [..., i, ...])`` (one index is ``i``, or ``i`` plus a loop-invariant
  offset; the others are loop-invariant), at least one of them of a tensor the region computes itself,
  or ``pl.read(t, [r, p])`` at a position ``p`` read so (a gather: ``pl.gather(t[r:r+1, :], row of p)``),
* computes scalars from them with ``+ - * /``, ``min``/``max`` and loop-invariant operands, and
* writes elements ``pl.write(d, [..., i, ...], v)`` the same way, each tensor once and none that the loop
  reads,

computes every element independently, so it is the same computation on whole rows: each read becomes the
``[1, n]`` row of its ``n`` elements (a window of ``t``, reshaped when it is a column or 1-D), each scalar
op the tile op of those rows (``tensor.divs``; a constant on the left of ``-`` or ``/`` becomes a
``tensor.full`` row), and each write an ``assemble`` of the row (reshaped to the window) into ``d``; a write
covering a whole tensor of the region replaces it (a computed tile takes no ``assemble``). A body that
goes on with other work after such statements is split (:func:`rows_of`). A helper of
UnrollLoops: it runs before the loop would be unrolled into scalar reads. Any other loop is left as it is
(a scalar read of a computed tile is then the located error of :mod:`._read_tiles`).
"""

from __future__ import annotations

import dataclasses
from collections import Counter

from pypto.ir.dtypes import DataType
from pypto.ir.expr import BinaryExpr, BinOp, Call, ConstInt, Expr, UnaryExpr, UnOp, Var, as_int
from pypto.ir.function import Function
from pypto.ir.ops.common import BINOP_FORM, ROW_EXPAND_FORM, SCALAR_FORM
from pypto.ir.ops.registry import make_call, op_of
from pypto.ir.stmt import AssignStmt, EvalStmt, ForStmt, InCoreScopeStmt, Stmt, flatten, seq
from pypto.ir.types import ScalarType, TensorType
from pypto.ir.visitor import IRMutator
from pypto.passes._rewrite import elements, emit, expand_stmts, ints, map_kernel_bodies, match
from pypto.passes._util import iter_stmts, jumps, used_vars, var_use_counts

_COMMUTES = frozenset({BinOp.Add, BinOp.Mul, BinOp.Max, BinOp.Min})


class _NotRows(Exception):
    """The loop is not of the form this rewrite takes."""


@dataclasses.dataclass
class _Rows:
    """The rewrite of one loop: ``rows`` maps each scalar of the body to its ``[1, n]`` row."""

    loop: ForStmt
    start: int
    n: int
    local: frozenset[Var]
    rows: dict[Var, Var] = dataclasses.field(default_factory=dict)
    row_set: set[Var] = dataclasses.field(default_factory=set)
    out: list[Stmt] = dataclasses.field(default_factory=list)
    reads_local: bool = False

    def bind(self, name: str, call: Call) -> Var:
        var = emit(self.out, name, call, call.span)
        self.row_set.add(var)
        return var

    def invariant(self, e: Expr) -> bool:
        return all(v is not self.loop.loop_var and v not in self.rows for v in used_vars(e))

    def window(self, t: Expr, idx: Expr) -> tuple[list[int], list[Expr], TensorType]:
        """The sizes and offsets of the ``n`` elements ``t[idx]`` takes over the loop."""
        shape = t.type
        if not isinstance(shape, TensorType):
            raise _NotRows
        sizes: list[int] = []
        offsets: list[Expr] = []
        for e in elements(idx):
            first = self._first(e)
            if first is None and not self.invariant(e):
                raise _NotRows
            sizes.append(1 if first is None else self.n)
            offsets.append(e if first is None else first)
        if sizes.count(self.n) != 1 or self.n == 1 or len(sizes) != len(shape.shape):
            raise _NotRows
        return sizes, offsets, shape

    def _first(self, e: Expr) -> Expr | None:
        """The first index of ``e`` over the loop when ``e`` is ``i`` or ``i + k`` (``k`` invariant)."""
        i = self.loop.loop_var
        first = ConstInt(self.start, i.type.dtype)
        if e is i:
            return first
        if isinstance(e, BinaryExpr) and e.op is BinOp.Add:
            for a, b in ((e.lhs, e.rhs), (e.rhs, e.lhs)):
                if a is i and self.invariant(b):
                    return BinaryExpr(BinOp.Add, first, b, e.dtype)
        return None

    def read(self, call: Call, name: str) -> Var:
        t, idx = call.args[0], call.args[1]
        sizes, offsets, shape = self.window(t, idx)
        self.reads_local |= t in self.local
        row = t
        if not _whole(shape, sizes, offsets):
            row = self.bind(f"{name}_win", make_call("tensor.slice", [t, ints(sizes), ints(offsets)], span=call.span))
        if tuple(sizes) != (1, self.n):
            row = self.bind(f"{name}_row", make_call("tensor.reshape", [row, ints([1, self.n])], span=call.span))
        assert isinstance(row, Var)
        self.row_set.add(row)
        return row

    def _positions(self, read: Call) -> Var | None:
        """The row of positions when ``read`` is ``t[r, p]`` with ``p`` (or its cast) a scalar of the loop."""
        idx = elements(read.args[1])
        p = idx[-1].operand if isinstance(idx[-1], UnaryExpr) and idx[-1].op is UnOp.Cast else idx[-1]
        return self.rows.get(p) if isinstance(p, Var) else None

    def gathered(self, read: Call, name: str) -> Var:
        """``t[r, p]`` over the loop, ``p`` the elements of an INT32 row: ``gather(t[r:r+1, :], row)``."""
        t, idx, pos = read.args[0], elements(read.args[1]), self._positions(read)
        shape = t.type
        if not isinstance(shape, TensorType) or len(shape.shape) != 2 or len(idx) != 2 or pos is None or \
                pos.type.dtype is not DataType.INT32 or shape.dtype.bits != 32 or not self.invariant(idx[0]):
            raise _NotRows
        self.reads_local |= t in self.local
        src = t
        if as_int(shape.shape[0]) != 1:
            src = self.bind(f"{name}_src", make_call("tensor.slice", [t, ints([1, shape.shape[1]]),
                                                                      ints([idx[0], 0])], span=read.span))
        return self.bind(name, make_call("tensor.gather", [src, pos], span=read.span))

    def value(self, e: Expr, name: str) -> Expr:
        """``e`` as a ``[1, n]`` row (a Var), or ``e`` itself when it does not change over the loop."""
        if isinstance(e, Var) and e in self.rows:
            return self.rows[e]
        if match(e, "tensor.read") is not None:
            return self.gathered(e, name) if self._positions(e) is not None else self.read(e, name)
        if isinstance(e, BinaryExpr) and e.op in BINOP_FORM and not self.invariant(e):
            return self.binary(e, name)
        if self.invariant(e) and isinstance(e.type, ScalarType):
            return e
        raise _NotRows

    def binary(self, e: BinaryExpr, name: str) -> Var:
        lhs, rhs = self.value(e.lhs, f"{name}_l"), self.value(e.rhs, f"{name}_r")
        lv, rv = lhs in self.row_set, rhs in self.row_set
        if not lv and e.op in _COMMUTES:
            lhs, rhs, lv, rv = rhs, lhs, rv, lv
        elif not lv:  # k - row, k / row: the constant as a row of its own
            lhs = self.bind(f"{name}_k", make_call("tensor.full", [ints([1, self.n]), lhs], {"dtype": e.dtype},
                                                   span=e.span))
        for side in (lhs, rhs):
            t = side.type
            if (isinstance(t, TensorType) and t.dtype != e.dtype) or \
                    (isinstance(t, ScalarType) and t.dtype.is_float != e.dtype.is_float):
                raise _NotRows
        op = BINOP_FORM[e.op]
        return self.bind(name, make_call(f"tensor.{op if rv else SCALAR_FORM[op]}", [lhs, rhs], span=e.span))

    def write(self, call: Call, written: set[Var]) -> None:
        dst, idx, v = call.args
        if not isinstance(dst, Var) or dst in written:
            raise _NotRows
        written.add(dst)
        sizes, offsets, shape = self.window(dst, idx)
        row = self.value(v, f"{dst.name}_row")
        if row not in self.row_set or row.type.dtype != shape.dtype:
            raise _NotRows  # a loop-invariant value or another dtype: left to the scalar path
        if tuple(sizes) != (1, self.n):
            row = self.bind(f"{dst.name}_win", make_call("tensor.reshape", [row, ints(sizes)], span=call.span))
        if dst in self.local:
            if not _whole(shape, sizes, offsets):
                raise _NotRows  # a window of a computed tile takes no assemble
            self.out.append(AssignStmt(dst, row, span=call.span))
            return
        self.out.append(AssignStmt(dst, make_call("tensor.assemble", [dst, row, ints(offsets)], span=call.span),
                                   span=call.span))


def _whole(shape: TensorType, sizes: list[int], offsets: list[Expr]) -> bool:
    return list(shape.shape) == sizes and all(as_int(o) == 0 for o in offsets)


def _element_stmt(s: Stmt) -> bool:
    """A scalar assignment or an element write: a statement the row rewrite may take."""
    return (isinstance(s, AssignStmt) and isinstance(s.var.type, ScalarType)) or \
        (isinstance(s, EvalStmt) and match(s, "tensor.write") is not None)


def _as_rows(loop: ForStmt, stmts: list[Stmt], local: frozenset[Var]) -> tuple[_Rows, set[Expr]] | None:
    """The row rewrite of ``stmts`` (the element statements a loop body starts with) and the tensors they
    touch, or None."""
    start, stop, step = as_int(loop.start), as_int(loop.stop), as_int(loop.step)
    if start is None or stop is None or step != 1 or stop <= start or loop.iter_args:
        return None
    rw = _Rows(loop, start, stop - start, local)
    written: set[Var] = set()
    read: set[Expr] = set()
    try:
        for s in stmts:
            if isinstance(s, AssignStmt) and isinstance(s.var.type, ScalarType):
                read |= _read_tensors(s.value)
                row = rw.value(s.value, s.var.name)
                if row not in rw.row_set:
                    raise _NotRows
                rw.rows[s.var] = row
            else:  # an element write: ``stmts`` are element statements only
                assert isinstance(s, EvalStmt) and isinstance(s.expr, Call)
                read |= _read_tensors(s.expr.args[2])
                rw.write(s.expr, written)
    except _NotRows:
        return None
    if not rw.reads_local or read & written:
        return None
    return rw, read | written


def rows_of(loop: ForStmt, local: frozenset[Var], uses: Counter[Var]) -> list[Stmt] | None:
    """The tile statements replacing ``loop`` (see the module doc), or None, also when a scalar of the element
    statements is used after the loop (``uses``: the use counts of the enclosing body).

    A loop whose body starts with such statements and goes on with others (tile work that takes the
    scalars only as ``pl.mul(row, s)`` and the like, on one-row tensors, and touches none of their
    tensors) is split: the element statements become row ops before the loop, and in the loop each such
    scalar is the ``[1, 1]`` window of its row at ``i`` (a ``row_expand_*`` operand). A loop that may
    ``break`` or ``continue`` is left alone (its element statements would run for every iteration)."""
    if jumps(loop.body):
        return None
    body = flatten(loop.body)
    cut = next((k for k, s in enumerate(body) if not _element_stmt(s)), len(body))
    done = _as_rows(loop, body[:cut], local) if cut else None
    if done is None:
        return None
    rw, touched = done
    inner = var_use_counts(loop)
    if any(uses[v] != inner[v] for v in rw.rows):
        return None  # a scalar of the loop is used after it
    if cut == len(body):
        return rw.out
    rest = body[cut:]
    if any(v in touched for s in rest for v in used_vars(s)):
        return None
    new_rest = _window_uses(rw, rest)
    return None if new_rest is None else [*rw.out, dataclasses.replace(loop, body=seq(new_rest, span=loop.body.span))]


def _window_uses(rw: _Rows, rest: list[Stmt]) -> list[Stmt] | None:
    """``rest`` with each ``<op>s(row, s)`` of a scalar ``s`` of ``rw`` as ``row_expand_<op>(row, s_win)``."""
    counts = var_use_counts(seq(rest, span=rw.loop.span))
    used = [v for v in rw.rows if counts[v]]
    i = rw.loop.loop_var
    at = i if rw.start == 0 else BinaryExpr(BinOp.Add, i, ConstInt(-rw.start, i.type.dtype), i.type.dtype)
    heads: list[Stmt] = []
    wins: dict[Var, Var] = {}
    for v in used:
        col = rw.bind(f"{v.name}_col", make_call("tensor.reshape", [rw.rows[v], ints([rw.n, 1])], span=v.span))
        win = make_call("tensor.slice", [col, ints([1, 1]), ints([at, 0])], span=v.span)
        wins[v] = Var(f"{v.name}_win", win.type, span=v.span)
        heads.append(AssignStmt(wins[v], win, span=v.span))
    taken: dict[Var, int] = dict.fromkeys(used, 0)

    class _Broadcast(IRMutator):
        def visit_Call(self, c: Call) -> Expr:  # noqa: N802
            c = self.generic_visit(c)
            form = _row_expand(c, wins)
            if form is None:
                return c
            taken[c.args[1]] += 1
            return make_call(form, [c.args[0], wins[c.args[1]]], span=c.span)

    new = flatten(_Broadcast().visit(seq(rest, span=rw.loop.span)))
    if any(taken[v] != counts[v] for v in used):
        return None  # another use of a scalar: left to the scalar path
    return [*heads, *new]


def _row_expand(call: object, wins: dict[Var, Var]) -> str | None:
    """``tensor.row_expand_mul`` for ``tensor.muls(x, s)`` with ``s`` windowed and ``x`` one row of its dtype."""
    if not isinstance(call, Call) or len(call.args) != 2 or call.kwargs or call.args[1] not in wins:
        return None
    short = ROW_EXPAND_FORM.get(str(call.op).split(".", 1)[-1]) if str(call.op).startswith("tensor.") else None
    t, w = call.args[0].type, wins[call.args[1]].type
    if short is None or not isinstance(t, TensorType) or not isinstance(w, TensorType):
        return None
    return f"tensor.{short}" if len(t.shape) == 2 and t.shape[0] == 1 and t.dtype == w.dtype else None


def _read_tensors(e: Expr) -> set[Expr]:
    if isinstance(e, Call):
        own = {e.args[0]} if e.op == "tensor.read" else set()
        return own.union(*(_read_tensors(a) for a in e.args if isinstance(a, Expr)))
    if isinstance(e, BinaryExpr):
        return _read_tensors(e.lhs) | _read_tensors(e.rhs)
    return set()


def _rewrite_region(body: Stmt, local: frozenset[Var]) -> Stmt:
    counts = var_use_counts(body)
    return expand_stmts(body, lambda s: rows_of(s, local, counts) if isinstance(s, ForStmt) else None)


def _assigned(body: Stmt, skip_regions: bool = False) -> dict[Var, list[Expr]]:
    """Each Var ``body`` assigns -> its values (outside its ``pl.at`` regions with ``skip_regions``)."""
    inside = {id(s) for r in iter_stmts(body) if skip_regions and isinstance(r, InCoreScopeStmt)
              for s in iter_stmts(r.body)}
    out: dict[Var, list[Expr]] = {}
    for s in iter_stmts(body):
        if isinstance(s, AssignStmt) and id(s) not in inside:
            out.setdefault(s.var, []).append(s.value)
    return out


def _computed(body: Stmt, outside: set[Var]) -> frozenset[Var]:
    """The tensors ``body`` creates or computes (tiles in its kernel), not windows or updates of GM ones."""
    defs = _assigned(body)
    memo: dict[Var, bool] = {}

    def computed(e: Expr, depth: int = 0) -> bool:
        if depth > len(defs) or e in outside:
            return False
        if isinstance(e, Call):
            src = _source(e)
            return src is None or computed(src, depth + 1)
        if not isinstance(e, Var) or e not in defs:
            return False
        if e not in memo:
            memo[e] = all(computed(v, depth + 1) for v in defs[e])
        return memo[e]

    return frozenset(v for v in defs if isinstance(v.type, TensorType) and computed(v))


def _source(e: Call) -> Expr | None:
    """The tensor whose buffer the call ``e`` names or updates (a slice, a reshape, an assemble), or None."""
    op = op_of(e)
    index = op.arg_index(op.view_of or op.writes) if op is not None else None
    return e.args[index] if index is not None and index < len(e.args) else None


def vectorize_element_loops(func: Function) -> Function:
    """Every such loop of a kernel, or of a ``pl.at`` region of an orchestration, as row tile ops."""
    outside = set(func.params) | (set() if func.is_incore else set(_assigned(func.body, skip_regions=True)))
    return map_kernel_bodies(func, lambda body: _rewrite_region(body, _computed(body, outside)))


__all__ = ["rows_of", "vectorize_element_loops"]
