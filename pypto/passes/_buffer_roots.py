"""Buffer roots: which caller-side tensor's storage each Var of a function body refers to.

The root of a parameter or a ``tensor.create`` result is the Var itself. Roots flow through plain
copies, ``tensor.assemble`` (writes into its first argument), views (``tensor.slice`` /
``tensor.transpose`` / ``tensor.reshape``: same buffer, other shape), program calls (a result is
the buffer of the Out/InOut argument it is returned through), tuple items, and the iter args and
results of ``for``/``while``/``if``.

A Var that may name more than one buffer (differing ``if`` branches, a loop that may run zero
times, a ``while``) is *ambiguous*; it still gets its first candidate as root, so a consumer that
derives dependencies keeps some edge (callers treat ambiguous writes conservatively).

Views deliberately share their source's root: the runtime's TensorMap keys every view of a buffer
by the buffer address, and its overlap test keeps disjoint views edge-free, so treating a view
write as a write of the whole buffer only costs a lookup, while treating it as a fresh buffer would
lose the edge between two overlapping views.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from pypto.ir.callgraph import written_args
from pypto.ir.expr import Call, Expr, TupleGetItem, Var
from pypto.ir.function import Function, Program
from pypto.ir.ops.registry import lookup, source_operand
from pypto.ir.stmt import AssignStmt, ForStmt, IfStmt, WhileStmt, runs_at_least_once
from pypto.ir.types import TensorType, TupleType, Type
from pypto.ir.visitor import IRVisitor
from pypto.passes._util import trailing_yield

Roots = tuple[Var, ...]


@dataclass(frozen=True)
class _RootInfo:
    roots: Roots
    ambiguous: bool
    type: Type | None = None


@dataclass
class BufferRoots:
    """``roots``: Var -> owning buffer root; ``ambiguous``: Vars that may name more than one buffer."""

    roots: dict[Var, Var] = field(default_factory=dict)
    ambiguous: set[Var] = field(default_factory=set)

    def root(self, e: Expr) -> Var | None:
        return self.roots.get(e) if isinstance(e, Var) else None

    def is_ambiguous(self, e: Expr) -> bool:
        return isinstance(e, Var) and e in self.ambiguous


class _Collector(IRVisitor):
    def __init__(self, program: Program) -> None:
        self.program = program
        self.out = BufferRoots()
        self.candidates: dict[Var, Roots] = {}
        self.tuple_items: dict[Var, list[_RootInfo]] = {}

    # ------------------------------------------------------------------ bookkeeping
    def info(self, e: Expr | None) -> _RootInfo:
        if not isinstance(e, Var):
            return _RootInfo((), False)
        return _RootInfo(self.candidates.get(e, ()), e in self.out.ambiguous)

    def record(self, var: Var, info: _RootInfo) -> None:
        unique, unresolved = tuple(dict.fromkeys(info.roots)), info.ambiguous
        if not unique:
            return
        self.candidates[var] = unique
        self.out.roots[var] = unique[0]
        if unresolved or len(unique) > 1:
            self.out.ambiguous.add(var)
        else:
            self.out.ambiguous.discard(var)

    # ------------------------------------------------------------------ statements
    def visit_AssignStmt(self, s: AssignStmt) -> None:  # noqa: N802
        self.assign(s.var, s.value)

    def visit_ForStmt(self, s: ForStmt | WhileStmt) -> None:  # noqa: N802
        inits = [self.info(init) for init in s.inits]
        for ia, i in zip(s.iter_args, inits, strict=True):
            self.record(ia, i)
        self.visit(s.body)
        y = trailing_yield(s.body)
        guaranteed = isinstance(s, ForStmt) and runs_at_least_once(s)
        for k, (rv, val) in enumerate(zip(s.return_vars, y.values if y is not None else (), strict=False)):
            i = self.info(val)
            roots, unresolved = i.roots, not i.roots or i.ambiguous
            if not guaranteed and k < len(inits):  # a loop that may not run may return the init
                unresolved = unresolved or not inits[k].roots
                roots = roots + inits[k].roots
            self.record(rv, _RootInfo(roots, unresolved))

    visit_WhileStmt = visit_ForStmt

    def visit_IfStmt(self, s: IfStmt) -> None:  # noqa: N802
        self.generic_visit(s)
        then_y, else_y = trailing_yield(s.then_body), trailing_yield(s.else_body)
        if then_y is None or else_y is None:  # no else branch, or a branch yields nothing
            return
        for rv, a, b in zip(s.return_vars, then_y.values, else_y.values, strict=False):
            ia, ib = self.info(a), self.info(b)
            unresolved = not ia.roots or not ib.roots or ia.ambiguous or ib.ambiguous
            self.record(rv, _RootInfo(ia.roots + ib.roots, unresolved))

    def assign(self, var: Var, value: Expr) -> None:
        if isinstance(value, Var):
            self.record(var, self.info(value))
        elif isinstance(value, TupleGetItem):
            items = self.tuple_items.get(value.tuple_value) if isinstance(value.tuple_value, Var) else None
            if items is not None and value.index < len(items):
                self.record(var, items[value.index])
        elif isinstance(value, Call) and isinstance(value.op, str):
            op = lookup(value.op)
            if op is not None and op.fresh:
                self.record(var, _RootInfo((var,), False))
            elif (src := source_operand(value)) is not None:
                self.record(var, self.info(src))
        elif isinstance(value, Call):
            outs = [dataclasses.replace(self.info(value.args[i]), type=value.args[i].type)
                    for i in written_args(value, self.program)]
            if isinstance(value.result_type, TupleType):
                self.tuple_items[var] = outs
            else:
                self.record(var, _select_return(outs, value.result_type))


def _select_return(outs: list[_RootInfo], result_type: Type) -> _RootInfo:
    """The buffer a single-result call returns: the one written arg of the result's shape and dtype.

    No unambiguous match falls back to the first written arg, so a later write through the result
    still counts as a write of *some* known buffer (a dependency is never dropped for lack of a root).
    """
    if not outs:
        return _RootInfo((), False)
    if len(outs) == 1:
        return outs[0]
    matches = [o for o in outs if o.roots and _same_shape_dtype(o.type, result_type)]
    if matches and all((m.roots, m.ambiguous) == (matches[0].roots, matches[0].ambiguous) for m in matches):
        return matches[0]
    return outs[0]


def _same_shape_dtype(a: Type | None, b: Type) -> bool:
    if not isinstance(a, TensorType) or not isinstance(b, TensorType):
        return False
    return a.dtype == b.dtype and len(a.shape) == len(b.shape) and all(
        x is y or x == y for x, y in zip(a.shape, b.shape, strict=True))


def collect_buffer_roots(func: Function, program: Program) -> BufferRoots:
    """The buffer root of every tensor Var of ``func`` (params are their own roots)."""
    c = _Collector(program)
    for p in func.params:
        c.record(p, _RootInfo((p,), False))
    c.visit(func.body)
    return c.out
