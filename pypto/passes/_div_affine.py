"""``e // c`` and ``e % c`` with ``e`` an affine combination of loop indices, split so that only
``i // c'`` / ``i % c'`` on one plain index remain (which :mod:`pypto.passes._strip_mine` removes).

``kv_col = ki * 128; kv_block = kv_col // 256`` is ``ki // 2``; ``(kb * 8 + qi) * 128 // 256`` is
``kb * 4 + qi // 2``. A term whose coefficient ``c`` divides leaves the division; one remaining term
``a * i`` with ``a > 0`` dividing ``c`` gives ``i // (c // a)`` (``a * (i % (c // a))`` for ``%``); the
constant must be a multiple of ``c``. These identities hold for every integer ``i``. Names assigned once
in the function are expanded where their assignment is visible (an enclosing or earlier statement of
the same block), so a value computed before the use is seen through. A helper of UnrollLoops.
"""

from __future__ import annotations

from collections import Counter

from pypto.ir.dtypes import DataType
from pypto.ir.expr import BinaryExpr, BinOp, ConstInt, Expr, Var, as_int
from pypto.ir.stmt import AssignStmt, Stmt
from pypto.ir.types import ScalarType
from pypto.ir.visitor import IRMutator
from pypto.passes._util import iter_stmts

Affine = tuple[dict[Var, int], int]


def _affine(e: Expr, defs: dict[Var, Expr], multi: set[Var], inside: bool = False, depth: int = 0) -> Affine | None:
    """``e`` as ``sum(coeff * var) + const``, or None when it is not affine (or too deep). Inside an
    expanded assignment a name assigned more than once may have changed since: not affine."""
    c = as_int(e)
    if c is not None:
        return {}, c
    if depth > 16 or (inside and e in multi):
        return None
    if isinstance(e, Var) and type(e) is Var:
        return _affine(defs[e], defs, multi, True, depth + 1) if e in defs else ({e: 1}, 0)
    if not isinstance(e, BinaryExpr) or e.op not in (BinOp.Add, BinOp.Sub, BinOp.Mul):
        return None
    a, b = _affine(e.lhs, defs, multi, inside, depth + 1), _affine(e.rhs, defs, multi, inside, depth + 1)
    if a is None or b is None:
        return None
    if e.op is BinOp.Mul:
        if a[0] and b[0]:
            return None
        (terms, k), scale = (a, b[1]) if not b[0] else (b, a[1])
        return {v: n * scale for v, n in terms.items() if n * scale}, k * scale
    sign = 1 if e.op is BinOp.Add else -1
    terms = Counter(a[0])
    terms.update({v: sign * n for v, n in b[0].items()})
    return {v: n for v, n in terms.items() if n}, a[1] + sign * b[1]


def _build(terms: list[tuple[Expr, int]], const: int, dt: DataType) -> Expr:
    out: Expr | None = None
    for e, n in terms:
        term = e if n == 1 else BinaryExpr(BinOp.Mul, e, ConstInt(n, dt), dt)
        out = term if out is None else BinaryExpr(BinOp.Add, out, term, dt)
    if out is None:
        return ConstInt(const, dt)
    return out if const == 0 else BinaryExpr(BinOp.Add, out, ConstInt(const, dt), dt)


def split_div(e: BinaryExpr, defs: dict[Var, Expr], multi: set[Var]) -> Expr | None:
    """The rewritten ``e`` (a ``//`` or ``%`` by a positive constant), or None when it does not apply."""
    c = as_int(e.rhs)
    aff = _affine(e.lhs, defs, multi) if c is not None and c > 0 else None
    if aff is None or aff[1] % c:
        return None
    terms, const = aff
    whole = [(v, n // c) for v, n in terms.items() if n % c == 0]
    rest = [(v, n) for v, n in terms.items() if n % c]
    if len(rest) > 1 or any(n < 0 or c % n for _, n in rest):
        return None
    dt = e.dtype
    if e.op is BinOp.FloorDiv:
        parts = whole + [(BinaryExpr(BinOp.FloorDiv, v, ConstInt(c // n, dt), dt), 1) for v, n in rest]
        new = _build(parts, const // c, dt)
    else:
        new = _build([(BinaryExpr(BinOp.FloorMod, v, ConstInt(c // n, dt), dt), n) for v, n in rest], 0, dt)
    plain = isinstance(e.lhs, Var) and not whole and const == 0 and rest == [(e.lhs, 1)]
    return None if plain else new


class _Split(IRMutator):
    def __init__(self, once: set[Var], multi: set[Var]) -> None:
        self.once, self.multi, self.defs = once, multi, {}

    def visit_AssignStmt(self, s: AssignStmt) -> Stmt:  # noqa: N802
        out = self.generic_visit(s)
        t = s.var.var_type
        if s.var in self.once and isinstance(t, ScalarType) and t.dtype.is_int:
            self.defs[s.var] = out.value
        return out

    def _scoped(self, s: Stmt) -> Stmt:
        """A loop or an if: the assignments of its bodies are not visible after it."""
        saved = dict(self.defs)
        try:
            return self.generic_visit(s)
        finally:
            self.defs = saved

    visit_ForStmt = visit_WhileStmt = visit_IfStmt = _scoped  # noqa: N815

    def visit_BinaryExpr(self, e: BinaryExpr) -> Expr:  # noqa: N802
        e = self.generic_visit(e)
        if isinstance(e, BinaryExpr) and e.op in (BinOp.FloorDiv, BinOp.FloorMod):
            return split_div(e, self.defs, self.multi) or e
        return e


def split_affine_divisions(body: Stmt) -> Stmt:
    """``body`` with every affine ``//`` / ``%`` by a constant split (see the module docstring)."""
    counts = Counter(s.var for s in iter_stmts(body) if isinstance(s, AssignStmt))
    once = {v for v, n in counts.items() if n == 1}
    return _Split(once, {v for v, n in counts.items() if n > 1}).visit(body)
