"""Simplify: fold constant integer arithmetic and algebraic identities (x+0, x*1, x*0, x//1), after
substituting integer scalars bound once to a constant at a function's top level
(:mod:`pypto.passes._const_scalars`)."""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass

from pypto.ir.expr import BinaryExpr, BinOp, ConstInt, Expr, as_int
from pypto.ir.fold import DIVISIONS, INT_FOLD
from pypto.ir.function import Function, Program
from pypto.ir.visitor import IRMutator
from pypto.passes._const_scalars import propagate_constants
from pypto.passes.base import Pass

FOLD: dict[BinOp, Callable[[int, int], int]] = {
    **INT_FOLD,
    BinOp.BitAnd: operator.and_, BinOp.BitOr: operator.or_, BinOp.BitXor: operator.xor,
    BinOp.BitShiftLeft: operator.lshift, BinOp.BitShiftRight: operator.rshift,
}
# (op, constant operand side, constant) -> result is the other operand
IDENTITY: frozenset[tuple[BinOp, str, int]] = frozenset({
    (BinOp.Add, "rhs", 0), (BinOp.Add, "lhs", 0), (BinOp.Sub, "rhs", 0), (BinOp.Mul, "rhs", 1),
    (BinOp.Mul, "lhs", 1), (BinOp.FloorDiv, "rhs", 1),
})


class _Fold(IRMutator):
    def visit_BinaryExpr(self, e: BinaryExpr) -> Expr:  # noqa: N802
        """``e`` with its own constant arithmetic or identity folded (``e`` itself when none applies)."""
        e = self.generic_visit(e)
        a, b = as_int(e.lhs), as_int(e.rhs)
        fn = FOLD.get(e.op)
        if a is not None and b is not None and fn is not None and not (e.op in DIVISIONS and b == 0):
            return ConstInt(fn(a, b), e.dtype, span=e.span)
        if b is not None and (e.op, "rhs", b) in IDENTITY:
            return e.lhs
        if a is not None and (e.op, "lhs", a) in IDENTITY:
            return e.rhs
        return e


@dataclass(frozen=True)
class Simplify(Pass):
    """Top-level integer constants propagated, then arithmetic folding on index expressions; functions with
    nothing to change are returned as is."""

    name = "Simplify"

    def run_function(self, func: Function, program: Program) -> Function:
        func = propagate_constants(func)
        body = _Fold().visit(func.body)  # the body itself when nothing folds
        return func if body is func.body else func.with_(body=body)


__all__ = ["Simplify"]
