"""What a function's body contains, counted once per Function object: the ops it calls, the program
functions it calls, the binary operators and the statement kinds it uses.

A pass whose rewrite needs an op (or an operator, or a statement kind) that the function does not contain
asks here first and hands the function on untouched, instead of walking it to find nothing. The IR is
immutable and a pass hands on the functions it leaves alone as the same objects, so later passes get the
answer for free. The census walks what the visitor and the mutator walk (statements, expressions, Exprs
in attrs; not types or kwargs), so a rewrite written as an IRMutator finds nothing the census missed.
"""

from __future__ import annotations

from dataclasses import dataclass

from pypto.ir.expr import BinaryExpr, BinOp, Call, GlobalVar
from pypto.ir.function import Function
from pypto.ir.memo import IdentityMemo
from pypto.ir.stmt import preorder
from pypto.ir.visitor import IRVisitor


@dataclass(frozen=True)
class Census:
    """The op names, callee names, binary operators and statement classes found in one body."""

    ops: frozenset[str]
    callees: frozenset[str]
    binops: frozenset[BinOp]
    stmts: frozenset[type]

    def calls_any(self, ops: frozenset[str] | set[str] | tuple[str, ...]) -> bool:
        return not self.ops.isdisjoint(ops)


class _Count(IRVisitor):
    def __init__(self) -> None:
        self.ops: set[str] = set()
        self.callees: set[str] = set()
        self.binops: set[BinOp] = set()

    def visit_Call(self, c: Call) -> None:  # noqa: N802
        if isinstance(c.op, GlobalVar):
            self.callees.add(c.op.name)
        elif isinstance(c.op, str):
            self.ops.add(c.op)
        self.generic_visit(c)

    def visit_BinaryExpr(self, e: BinaryExpr) -> None:  # noqa: N802
        self.binops.add(e.op)
        self.generic_visit(e)


def _count(f: Function) -> Census:
    v = _Count()
    if f.body is not None:
        v.visit(f.body)
    return Census(frozenset(v.ops), frozenset(v.callees), frozenset(v.binops),
                  frozenset(type(s) for s in preorder(f.body)))


_CENSUS = IdentityMemo(1024)


def census(f: Function) -> Census:
    """The census of ``f``'s body (remembered per Function object)."""
    return _CENSUS.get(None, f, _count)
