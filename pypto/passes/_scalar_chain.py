"""Scalars computed from one tensor read alone, and the same computation on its ``[1, 1]`` tile.

:mod:`._read_tiles` turns ``s = pl.read(t, idx)`` into a one-element tile when every use of ``s`` scales
rows of tiles. The value may first go through scalar work of its own: a cast, or ``+ - * /`` with a
constant (``f = pl.cast(s, pl.FP32)``; ``pl.adds(x, f * 0.0)``). Such a chain is done on the tile instead
(``tensor.cast``, ``tensor.muls``, ...), element for element the same arithmetic.
"""

from __future__ import annotations

from pypto.ir.expr import BinaryExpr, BinOp, ConstFloat, ConstInt, Expr, UnaryExpr, UnOp, Var
from pypto.ir.ops.common import BINOP_FORM, SCALAR_FORM
from pypto.ir.ops.registry import make_call
from pypto.ir.stmt import AssignStmt, Stmt
from pypto.ir.types import ScalarType
from pypto.passes._rewrite import emit
from pypto.passes._util import iter_stmts, var_use_counts
from pypto.span import Span

_CHAINED = (BinOp.Add, BinOp.Sub, BinOp.Mul, BinOp.FloatDiv)  # their tile-scalar forms: adds ... divs
_COMMUTES = (BinOp.Add, BinOp.Mul)

Chain = dict[Var, Expr | None]  # the read's Var (None), then each scalar computed from it -> its value


def _const(e: Expr) -> bool:
    return isinstance(e, ConstInt | ConstFloat)


def _operand(e: BinaryExpr) -> Expr | None:
    """The non-constant operand of ``x <op> c`` (or ``c + x``, ``c * x``), None for anything else."""
    if _const(e.rhs):
        return e.lhs
    return e.rhs if _const(e.lhs) and e.op in _COMMUTES else None


def liftable(e: Expr, chain: Chain) -> bool:
    """``e`` is computed from the chain's values by casts and constant arithmetic of the operand's dtype."""
    if isinstance(e, Var):
        return e in chain
    if isinstance(e, UnaryExpr) and e.op is UnOp.Cast:
        return liftable(e.operand, chain)
    if isinstance(e, BinaryExpr) and e.op in _CHAINED and (x := _operand(e)) is not None:
        same = isinstance(x.type, ScalarType) and x.type.dtype == e.dtype  # no promotion on the way
        return same and liftable(x, chain)
    return False


def chain_of(body: Stmt, read: Var) -> tuple[Chain, list[AssignStmt]]:
    """The scalars ``body`` computes from ``read`` alone, and their definitions."""
    chain: Chain = {read: None}
    defs = []
    for s in iter_stmts(body):
        if isinstance(s, AssignStmt) and isinstance(s.var.var_type, ScalarType) and liftable(s.value, chain):
            chain[s.var] = s.value
            defs.append(s)
    return chain, defs


def accounted(body: Stmt, chain: Chain, operands: list[Expr]) -> bool:
    """Every use of a chain value is in the chain itself or in one of ``operands``."""
    total = var_use_counts(body)
    inside = var_use_counts([v for v in chain.values() if v is not None] + operands)
    return all(total[v] == inside[v] + 1 for v in chain)  # +1: its definition


def lift(e: Expr, chain: Chain, tiles: dict[Var, Var], ns: str, out: list[Stmt], span: Span) -> Var:
    """``e`` computed on tiles (``tiles`` maps chain values already computed); the statements go to ``out``."""
    if isinstance(e, Var):
        if e not in tiles:
            value = chain[e]
            assert value is not None
            tiles[e] = lift(value, chain, tiles, ns, out, span)
        return tiles[e]
    if isinstance(e, UnaryExpr):
        src = lift(e.operand, chain, tiles, ns, out, span)
        return emit(out, f"{src.name}_cast", make_call(f"{ns}.cast", [src], {"target_type": e.dtype}, span=span), span)
    assert isinstance(e, BinaryExpr)
    x = _operand(e)
    assert x is not None
    c = e.rhs if x is e.lhs else e.lhs
    src = lift(x, chain, tiles, ns, out, span)
    op = SCALAR_FORM[BINOP_FORM[e.op]]
    return emit(out, f"{src.name}_{op}", make_call(f"{ns}.{op}", [src, c], span=span), span)
