"""DeriveCallDirections: ``attrs["arg_directions"]`` on every program call.

A tensor argument follows its callee parameter (In -> input, InOut -> inout). An ``Out`` parameter
becomes ``output_existing`` (the runtime registers the task as the buffer's newest writer but looks
up no earlier writer) only when no earlier write to the same buffer can still be pending; otherwise
it becomes ``inout``, which makes the runtime's TensorMap order the task after every earlier,
overlapping writer (write-after-write):

- R-seq: the call sits inside a sequential ``for`` (any kind but ``parallel``) or a ``while``: an
  earlier iteration may have written the buffer;
- ambiguous: the argument may name more than one buffer (control-flow merge), so the call cannot
  be proven the first writer;
- R-prior: an earlier statement of the same scope (a call, or a loop / if containing one) wrote
  the same buffer root. Loops and ifs count as one unit: a call inside them sees the writes made
  before the unit, not those of its sibling branch;
- R-enclosing: the buffer is a parameter the enclosing function declares ``InOut``.

Scalars are ``scalar``. Directions a call already carries are left as they are (call-site
overrides are authoritative).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from pypto.ir.callgraph import written_args
from pypto.ir.enums import ArgDirection, ForKind, ParamDirection
from pypto.ir.expr import Call, Expr, GlobalVar, Var
from pypto.ir.function import Function, Program
from pypto.ir.properties import IRProperty
from pypto.ir.stmt import ForStmt, IfStmt, Stmt, WhileStmt, stmt_value
from pypto.ir.types import ScalarType
from pypto.ir.visitor import IRMutator, IRVisitor
from pypto.passes._buffer_roots import BufferRoots, collect_buffer_roots
from pypto.passes._util import calls_in
from pypto.passes.base import Pass

PARAM_TO_ARG: dict[ParamDirection, ArgDirection] = {
    ParamDirection.In: ArgDirection.Input,
    ParamDirection.Out: ArgDirection.OutputExisting,
    ParamDirection.InOut: ArgDirection.InOut,
}


class _PriorWriters(IRVisitor):
    """For each program call: the buffer roots it is the first writer of within its scope, and whether it
    sits in a sequential loop."""

    def __init__(self, program: Program, roots: BufferRoots) -> None:
        self.program = program
        self.roots = roots
        self.first: dict[int, set[Var]] = {}  # id(call) -> roots it writes first
        self.in_loop: set[int] = set()  # id(call) of every call in a ``while`` or a ``for`` but a parallel one
        self.seen: set[Var] = set()

    def roots_of(self, call: Call) -> set[Var]:
        """The buffer roots of the arguments a program call writes."""
        return {r for i in written_args(call, self.program) if (r := self.roots.root(call.args[i]))}

    # In order; ``seen`` holds the roots written by earlier units of the scope. A loop or an if is one
    # unit: a call inside it sees the writes made before it, not those of its sibling branch.
    def visit_ForStmt(self, s: ForStmt | WhileStmt | IfStmt) -> None:  # noqa: N802
        if isinstance(s, WhileStmt) or (isinstance(s, ForStmt) and s.kind is not ForKind.Parallel):
            self.in_loop.update(id(c) for c in calls_in(s))
        outer = self.seen
        bodies = [b for b in (s.then_body, s.else_body) if b is not None] if isinstance(s, IfStmt) else [s.body]
        for body in bodies:
            self.seen = set(outer)
            self.visit(body)
        self.seen = outer
        # then the unit's writes: the roots of every program call inside it
        outer.update(*(self.roots_of(c) for b in bodies for c in calls_in(b) if isinstance(c.op, GlobalVar)))

    visit_WhileStmt = visit_IfStmt = visit_ForStmt

    def visit_AssignStmt(self, s: Stmt) -> None:  # noqa: N802
        if isinstance(value := stmt_value(s), Call) and isinstance(value.op, GlobalVar):
            mine = self.roots_of(value)
            self.first[id(value)] = mine - self.seen
            self.seen |= mine

    visit_EvalStmt = visit_AssignStmt


class _Stamp(IRMutator):
    def __init__(self, program: Program, func: Function, roots: BufferRoots, prior: _PriorWriters) -> None:
        self.program = program
        self.roots = roots
        self.prior = prior
        self.inout_params = {p for p, d in zip(func.params, func.param_directions, strict=True)
                             if d is ParamDirection.InOut}

    def visit_Call(self, call: Call) -> Expr:  # noqa: N802
        new = self.generic_visit(call)
        if not isinstance(call.op, GlobalVar) or len(new.attrs.get("arg_directions") or ()) == len(new.args):
            return new
        callee = self.program.get_function(call.op.name)
        if callee is None or len(callee.param_directions) != len(call.args):
            return new
        dirs = tuple(self.direction(call, a, d) for a, d in zip(call.args, callee.param_directions, strict=True))
        return dataclasses.replace(new, attrs={**new.attrs, "arg_directions": dirs})

    def direction(self, call: Call, arg: Expr, d: ParamDirection) -> ArgDirection:
        if isinstance(arg.type, ScalarType):
            return ArgDirection.Scalar
        if d is not ParamDirection.Out:
            return PARAM_TO_ARG[d]
        if id(call) in self.prior.in_loop or self.roots.is_ambiguous(arg):
            return ArgDirection.InOut
        root = self.roots.root(arg)
        if root is not None and (root not in self.prior.first.get(id(call), ()) or root in self.inout_params):
            return ArgDirection.InOut
        return ArgDirection.OutputExisting


@dataclass(frozen=True)
class DeriveCallDirections(Pass):
    """Every call to a program function carries one ArgDirection per argument (WAW-safe, see module doc)."""

    name = "DeriveCallDirections"
    produces = frozenset({IRProperty.CallDirectionsResolved})

    def run_function(self, func: Function, program: Program) -> Function:
        if not any(isinstance(c.op, GlobalVar) for c in calls_in(func.body)):
            return func
        roots = collect_buffer_roots(func, program)
        prior = _PriorWriters(program, roots)
        prior.visit(func.body)
        body = _Stamp(program, func, roots, prior).visit(func.body)
        return func if body is func.body else func.with_(body=body)
