"""Subscript sugar: ``A[a:b, :]`` -> slice, ``A[i, j]`` -> read, ``dst[a:b, :] = src`` -> assemble."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Any

from pypto.errors import ParserTypeError, UnsupportedFeatureError
from pypto.ir.expr import BinaryExpr, BinOp, ConstInt, Expr, as_int
from pypto.ir.types import ShapedType, TileType
from pypto.language.calls import call_op
from pypto.span import Span

if TYPE_CHECKING:
    from pypto.language.expr_parser import ExprParser


def _ns(base: Expr) -> str:
    return "tile" if isinstance(base.type, TileType) else "tensor"


def _items(node: ast.expr) -> list[ast.expr]:
    return list(node.elts) if isinstance(node, ast.Tuple) else [node]


def _check_rank(items: list[ast.expr], t: ShapedType, span: Span) -> None:
    if len(items) > t.rank:
        raise ParserTypeError(f"too many indices: {len(items)} for a rank-{t.rank} value", span)


def _linear(e: Any) -> tuple[dict[Any, int], int]:
    """``e`` as integer-weighted terms plus a constant (``i * 64 + c + 8`` -> {i: 64, c: 1}, 8)."""
    n = as_int(e)
    if n is not None:
        return {}, n
    if isinstance(e, BinaryExpr) and e.op in (BinOp.Add, BinOp.Sub):
        (lt, lc), (rt, rc) = _linear(e.lhs), _linear(e.rhs)
        sign = 1 if e.op is BinOp.Add else -1
        terms = dict(lt)
        for k, c in rt.items():
            terms[k] = terms.get(k, 0) + sign * c
        return {k: c for k, c in terms.items() if c}, lc + sign * rc
    if isinstance(e, BinaryExpr) and e.op is BinOp.Mul:
        for a, b in ((e.lhs, e.rhs), (e.rhs, e.lhs)):
            k = as_int(b)
            if k is not None:
                terms, c = _linear(a)
                return {t: w * k for t, w in terms.items() if w * k}, c * k
    from pypto.ir.structural import structural_hash

    return {structural_hash(e): 1}, 0


def _size(lo: Any, hi: Any, span: Span) -> int:
    (lt, lc), (ht, hc) = _linear(lo), _linear(hi)
    if lt == ht:  # the bounds differ by a constant: A[x + 8 : x + 24] has extent 16
        return hc - lc
    raise ParserTypeError("slice extent must be static (write A[i:i + 16, :])", span)


def read_subscript(ev: ExprParser, base: Expr, node: ast.expr, span: Span) -> Expr:
    """``A[i, j]`` -> ``read``; ``A[a:b, :]`` -> ``slice`` (missing trailing dims are full)."""
    t = base.type
    assert isinstance(t, ShapedType)
    items = _items(node)
    _check_rank(items, t, span)
    if not any(isinstance(i, ast.Slice) for i in items):
        if len(items) != t.rank:
            raise ParserTypeError(f"element access needs {t.rank} indices, got {len(items)}", span)
        return call_op(f"{_ns(base)}.read", [base, [ev.eval(i) for i in items]], {}, span)
    shape: list[Any] = []
    offs: list[Any] = []
    for k in range(t.rank):
        item = items[k] if k < len(items) else ast.Slice(None, None, None)
        lo, hi = _bounds(ev, item, t.shape[k])
        offs.append(lo)
        shape.append(_size(lo, hi, ev.span(item) if hasattr(item, "lineno") else span))
    return call_op(f"{_ns(base)}.slice", [base, shape, offs], {}, span)


def _bounds(ev: ExprParser, item: ast.expr, dim: Any) -> tuple[Any, Any]:
    if not isinstance(item, ast.Slice):
        lo = ev.eval(item)
        return lo, (lo + 1 if isinstance(lo, int) else BinaryExpr(BinOp.Add, lo, ConstInt(1), lo.type.dtype))
    if item.step is not None:
        raise UnsupportedFeatureError("slice steps are not supported", ev.span(item))
    lo = ev.eval(item.lower) if item.lower is not None else 0
    hi = ev.eval(item.upper) if item.upper is not None else dim
    return lo, hi


def write_offsets(ev: ExprParser, base: Expr, node: ast.expr, span: Span) -> list[Any]:
    """The window offsets of ``dst[...] = src`` (``dst[:]`` -> all zeros)."""
    t = base.type
    if not isinstance(t, ShapedType):
        raise ParserTypeError("only tensors and tiles can be written through a subscript", span)
    items = _items(node)
    _check_rank(items, t, span)
    offs: list[Any] = []
    for k in range(t.rank):
        item = items[k] if k < len(items) else ast.Slice(None, None, None)
        if isinstance(item, ast.Slice):
            if item.step is not None:
                raise UnsupportedFeatureError("slice steps are not supported", ev.span(item))
            offs.append(ev.eval(item.lower) if item.lower is not None else 0)
        else:
            offs.append(ev.eval(item))
    return offs


def assemble(base: Expr, value: Expr, offs: list[Any], span: Span) -> Expr:
    """``dst = <ns>.assemble(dst, value, offs)``."""
    return call_op(f"{_ns(base)}.assemble", [base, value, offs], {}, span)
