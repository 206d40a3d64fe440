"""HoistScopeGathers: row gathers into an on-chip operand become copies through a GM tensor, run before the kernel.

ptoas 0.1.1 has no sub-tile view to load a GM row into a slot of an L1 (Mat) tile, and no scalar load
from GM for the page lookup of ``pl.paged_gather``. A ``pl.create_l1`` accumulator is a tensor here
(``tensor.create``), so a gather only has to fill that tensor before the kernel reads it:

* the statements at the top of a ``pl.at`` region up to its last gather, when they are gathers,
  ``tensor.create`` and scalar work (``pl.read`` of tensors, casts, arithmetic) on values from
  outside the region, move in front of it;
* ``acc = pl.gather_row(acc, src, dst, off, shapes, valid_shape=v)`` there becomes a one-statement
  ``pl.at`` region ``acc = pl.assemble(acc, pl.slice(src, shapes, off, valid_shape=v), dst)``: a copy of
  the (possibly runtime-sized) window, ordered after and before the other tasks through ``acc``;
* ``g = pl.paged_gather(src, idx, bt, ...)`` becomes ``g = pl.create_tensor(...)`` and an orchestration
  loop over the rows that reads ``idx`` and ``bt`` (the page lookup) and copies row ``i`` in a
  ``pl.at`` region of its own.

The kernel then takes the filled tensor as an input; a matmul operand is loaded into Mat as usual.
A gather anywhere else (inside a kernel loop, after tile work, ``transpose=True`` / ``is_trans=True``)
is a located UnsupportedFeatureError.
"""

from __future__ import annotations

import dataclasses
from typing import TypeGuard

from pypto.errors import UnsupportedFeatureError
from pypto.ir.dtypes import DataType
from pypto.ir.expr import BinaryExpr, BinOp, Call, ConstInt, Expr, MakeTuple, UnaryExpr, UnOp, Var, as_int
from pypto.ir.function import Function, Program
from pypto.ir.ops.registry import make_call, op_of
from pypto.ir.stmt import (
    AssignStmt,
    ForStmt,
    IfStmt,
    InCoreScopeStmt,
    ScopeStmt,
    SeqStmts,
    SpmdScopeStmt,
    Stmt,
    flatten,
    seq,
)
from pypto.ir.types import ScalarType, TensorType
from pypto.passes._rewrite import match
from pypto.passes._util import iter_stmts, used_vars
from pypto.passes.base import Pass
from pypto.span import Span

_NEWER = "the ptoas release upstream PyPTO targets (with pto.subview slots and scalar GM loads), not 0.1.1"


def _gather(s: Stmt) -> Call | None:
    v = match(s) if isinstance(s, AssignStmt) else None
    op = op_of(v)
    return v if op is not None and op.row_gather else None


def _refuse(call: Call, why: str, hint: str) -> UnsupportedFeatureError:
    name = "pl." + str(call.op).split(".", 1)[1]
    err = UnsupportedFeatureError(f"{name} {why}: ptoas 0.1.1 cannot load a GM row into a slot of an on-chip tile "
                                  f"({_NEWER} would take it)", call.span, hint=hint)
    err.construct = name  # type: ignore[attr-defined]
    return err


def _scalar_work(s: AssignStmt) -> bool:
    """A scalar statement whose calls are only tensor reads (it may run in the orchestration)."""
    if not isinstance(s.var.type, ScalarType):
        return False
    return all(_tensor_query(c) for c in _calls(s.value))


def _tensor_query(c: Call) -> bool:
    """A read of a tensor's element or dim (``tensor.read``, ``tensor.dim``): an access op that writes nothing."""
    op = op_of(c)
    return op is not None and op.namespace == "tensor" and op.category == "access" and op.writes is None


def _calls(e: object) -> list[Call]:
    out: list[Call] = []
    stack = [e]
    while stack:
        x = stack.pop()
        if isinstance(x, Call):
            out.append(x)
            stack.extend(x.args)
        elif isinstance(x, (BinaryExpr,)):
            stack.extend((x.lhs, x.rhs))
        elif isinstance(x, UnaryExpr):
            stack.append(x.operand)
        elif isinstance(x, MakeTuple):
            stack.extend(x.elements)
    return out


def _movable(s: Stmt) -> TypeGuard[AssignStmt]:
    if not isinstance(s, AssignStmt):
        return False
    return _gather(s) is not None or match(s, "tensor.create") is not None or _scalar_work(s)


def _split(scope: InCoreScopeStmt) -> tuple[list[Stmt], list[Stmt]]:
    """(the statements to move in front of ``scope``, the ones it keeps)."""
    body = flatten(scope.body)
    inner = {s.var for s in iter_stmts(scope.body) if isinstance(s, AssignStmt)}
    moved: set[Var] = set()
    last = -1
    for k, s in enumerate(body):
        if not _movable(s) or any(u in inner and u not in moved for u in used_vars(s.value)):
            break
        moved.add(s.var)
        if _gather(s) is not None:
            last = k
    return body[:last + 1], body[last + 1:]


def _scope(stmts: list[Stmt], like: InCoreScopeStmt | None, span: Span) -> InCoreScopeStmt:
    if like is None:
        return InCoreScopeStmt(seq(stmts, span), span=span)
    return dataclasses.replace(like, body=seq(stmts, span), task_var=None, dumps=(), span=span)


def _row_copy(s: AssignStmt, call: Call, like: InCoreScopeStmt | None) -> list[Stmt]:
    acc, src, dst, off, shapes, *rest = call.args
    if call.kwargs.get("transpose"):
        raise _refuse(call, "with transpose=True", "gather untransposed rows and use pl.matmul(..., b_trans=True)")
    sp = call.span
    window = make_call("tensor.slice", [src, shapes, off, *[v for v in rest if v is not None]], span=sp)
    row = Var(f"{s.var.name}_rows", window.result_type, span=sp)
    copy = make_call("tensor.assemble", [acc, row, dst], span=sp)
    return [_scope([AssignStmt(row, window, span=sp), AssignStmt(s.var, copy, span=sp)], like, sp)]


def _index(t: Expr, i: Expr, sp: Span) -> MakeTuple:
    """``[i]`` for a 1-D tensor, ``[0, i]`` for a ``[1, n]`` one."""
    assert isinstance(t.type, TensorType)
    lead = [ConstInt(0, DataType.INDEX, span=sp)] * (t.type.rank - 1)
    return MakeTuple((*lead, i), span=sp)


def _as_index(call: Call, sp: Span) -> Expr:
    return UnaryExpr(UnOp.Cast, call, DataType.INDEX, span=sp)


def _paged(s: AssignStmt, call: Call, like: InCoreScopeStmt | None) -> list[Stmt]:
    src, idx, bt = call.args
    kw, sp = call.kwargs, call.span
    if kw.get("is_trans"):
        raise _refuse(call, "with is_trans=True", "gather untransposed rows and use pl.matmul(..., b_trans=True)")
    bs, size, n, col = kw["block_size"], kw["size"], kw["max_indices"], kw.get("col_off", 0)
    assert isinstance(idx.type, TensorType) and isinstance(src.type, TensorType)
    count = as_int(idx.type.shape[-1])
    rows = n if count is None else min(n, count)
    dt = DataType.INDEX

    def k(v: int) -> ConstInt:
        return ConstInt(v, dt, span=sp)

    def binop(op: BinOp, a: Expr, b: Expr) -> BinaryExpr:
        return BinaryExpr(op, a, b, dt, span=sp)

    init = Var(s.var.name, TensorType((n, size), src.type.dtype), span=sp)
    create = make_call("tensor.create", [MakeTuple((k(n), k(size)), span=sp)], {"dtype": src.type.dtype}, span=sp)
    i = Var(f"{s.var.name}_i", ScalarType(dt), span=sp)
    logical = Var(f"{s.var.name}_idx", ScalarType(dt), span=sp)
    read_l = make_call("tensor.read", [idx, _index(idx, i, sp)], span=sp)
    page = make_call("tensor.read", [bt, _index(bt, binop(BinOp.FloorDiv, logical, k(bs)), sp)], span=sp)
    phys = Var(f"{s.var.name}_row", ScalarType(dt), span=sp)
    phys_v = binop(BinOp.Add, binop(BinOp.Mul, _as_index(page, sp), k(bs)), binop(BinOp.FloorMod, logical, k(bs)))
    window = make_call("tensor.slice", [src, MakeTuple((k(1), k(size)), span=sp),
                                        MakeTuple((phys, k(col)), span=sp)], span=sp)
    row = Var(f"{s.var.name}_rows", window.result_type, span=sp)
    copy = make_call("tensor.assemble", [init, row, MakeTuple((i, k(0)), span=sp)], span=sp)
    body = [AssignStmt(logical, _as_index(read_l, sp), span=sp), AssignStmt(phys, phys_v, span=sp),
            _scope([AssignStmt(row, window, span=sp), AssignStmt(s.var, copy, span=sp)], like, sp)]
    loop = ForStmt(i, k(0), k(rows), k(1), seq(body, sp), span=sp)
    return [AssignStmt(init, create, span=sp), loop]


def _expand(stmts: list[Stmt], like: InCoreScopeStmt | None) -> list[Stmt]:
    out: list[Stmt] = []
    for s in stmts:
        call = _gather(s)
        if call is None:
            out.append(s)
            continue
        assert isinstance(s, AssignStmt)
        out.extend(_row_copy(s, call, like) if call.op == "tensor.gather_row" else _paged(s, call, like))
    return out


def _block(stmts: list[Stmt], in_scope: bool) -> list[Stmt]:
    out: list[Stmt] = []
    for s in stmts:
        if isinstance(s, InCoreScopeStmt) and not in_scope:
            pre, rest = _split(s)
            out.extend(_expand(pre, s))
            if rest:
                out.append(dataclasses.replace(s, body=seq(rest, s.span)))
        elif _gather(s) is not None and not in_scope:
            out.extend(_expand([s], None))
        else:
            out.append(_nested(s, in_scope))
    return out


def _nested(s: Stmt, in_scope: bool) -> Stmt:
    if isinstance(s, SeqStmts):
        return SeqStmts(tuple(_block(list(s.stmts), in_scope)), span=s.span)
    if isinstance(s, ForStmt):
        return dataclasses.replace(s, body=seq(_block(flatten(s.body), in_scope), s.span))
    if isinstance(s, IfStmt):
        other = None if s.else_body is None else seq(_block(flatten(s.else_body), in_scope), s.span)
        return dataclasses.replace(s, then_body=seq(_block(flatten(s.then_body), in_scope), s.span),
                                   else_body=other)
    if isinstance(s, ScopeStmt):
        return dataclasses.replace(s, body=seq(_block(flatten(s.body), in_scope or isinstance(s, (InCoreScopeStmt, SpmdScopeStmt))),
                                               s.span))
    return s


class HoistScopeGathers(Pass):
    """Rewrite ``pl.gather_row`` / ``pl.paged_gather`` into GM copies run before the kernel (module doc)."""

    name = "HoistScopeGathers"

    def run_function(self, func: Function, program: Program) -> Function:
        if not any(_gather(s) for s in iter_stmts(func.body)):
            return func
        body = seq(_block(flatten(func.body), func.is_incore), func.body.span)
        left = next((_gather(s) for s in iter_stmts(body) if _gather(s) is not None), None)
        if left is not None:
            raise _refuse(left, "here", "call it at the top of the pl.at region (before any tile work), on a "
                          "pl.create_l1 / pl.create_tensor accumulator and values known before the region")
        return dataclasses.replace(func, body=body)
