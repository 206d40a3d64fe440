"""InitMemRef: attach a MemRef to every tensor and tile; kernels get one ``tile.alloc`` per on-chip buffer."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from pypto.ir.enums import MemorySpace
from pypto.ir.expr import Call, Var
from pypto.ir.function import Function, Program
from pypto.ir.ops.registry import make_call, op_of
from pypto.ir.properties import IRProperty
from pypto.ir.stmt import AssignStmt, ForStmt, IfStmt, Stmt, WhileStmt, flatten, seq
from pypto.ir.types import MemRef, PtrType, TensorType, TileType, Type
from pypto.ir.visitor import IRVisitor
from pypto.passes._memref import all_vars, memref_of, with_memref
from pypto.passes._util import retype, trailing_yield
from pypto.passes.base import Pass


@dataclass
class _Planner(IRVisitor):
    incore: bool
    n: int = 0
    refs: dict[Var, MemRef] = field(default_factory=dict)
    allocs: list[Stmt] = field(default_factory=list)

    def fresh(self, t: Type) -> MemRef | None:
        """The next buffer for a tensor or tile: in DDR, or (an on-chip tile of a kernel) a ``tile.alloc``."""
        onchip = isinstance(t, TileType) and t.memory_space is not MemorySpace.DDR
        if not isinstance(t, (TensorType, TileType)) or (onchip and not self.incore):
            return None
        n, size = self.n, t.nbytes() or 0
        self.n += 1
        if not onchip:
            return MemRef(f"mem_ddr_{n}", 0, size)  # static offsets are plain ints
        space = t.memory_space or MemorySpace.Vec
        ptr = Var(f"mem_{space.value.lower()}_{n}", PtrType())
        self.allocs.append(AssignStmt(ptr, make_call("tile.alloc", [], {"memory_space": space, "size": size})))
        return MemRef(ptr, 0, size)

    def define(self, v: Var, value: object = None, init: object = None) -> None:
        """Give ``v`` (assigned ``value``, or an iter_arg starting from ``init``) its MemRef."""
        existing = getattr(v.var_type, "memref", None)
        if existing is not None:  # an author's pl.MemRef, or this pass's own output run again
            self.refs[v] = existing
            return
        if isinstance(init, Var) and init in self.refs:
            self.refs[v] = self.refs[init]
            return
        op = op_of(value)
        at = op.buffer_index if op is not None else None
        if isinstance(value, Call) and at is not None and at < len(value.args):
            src = value.args[at]
            if isinstance(src, Var) and src in self.refs and type(src.var_type) is type(v.var_type):
                self.refs[v] = self.refs[src]
                return
        mr = self.fresh(v.var_type)
        if mr is not None:
            self.refs[v] = mr

    # Definitions in order; loop/if results after their bodies, sharing the yielded buffer. A result
    # takes the MemRef of the value its (then-)body yields, which is also the type the parser gives an
    # unannotated ``a, b = pl.yield_(x, y)`` target, so dumps re-parse identically.
    def visit_AssignStmt(self, s: AssignStmt) -> None:  # noqa: N802
        self.define(s.var, s.value)

    def visit_ForStmt(self, s: ForStmt | WhileStmt) -> None:  # noqa: N802
        for v, init in zip(s.iter_args, s.inits, strict=True):
            self.define(v, init=init)
        self.generic_visit(s)
        self.results(s.return_vars, s.body)

    visit_WhileStmt = visit_ForStmt

    def visit_IfStmt(self, s: IfStmt) -> None:  # noqa: N802
        self.generic_visit(s)
        self.results(s.return_vars, s.then_body)

    def results(self, rvs: tuple[Var, ...], body: Stmt | None) -> None:
        y = trailing_yield(body)
        for i, rv in enumerate(rvs):
            src = y.values[i] if y is not None and i < len(y.values) else None
            if isinstance(src, Var) and src in self.refs and type(src.var_type) is type(rv.var_type):
                self.refs[rv] = self.refs[src]
            else:
                self.define(rv)


@dataclass(frozen=True)
class InitMemRef(Pass):
    """Number buffers per function: DDR params first, then buffers in definition order."""

    name = "InitMemRef"
    produces = frozenset({IRProperty.HasMemRefs})

    def run_function(self, func: Function, program: Program) -> Function:
        plan = _Planner(func.is_incore, n=_next_buffer_number(func))
        for p in func.params:
            if isinstance(p.var_type, TensorType) and p.var_type.memref is None:
                plan.refs[p] = plan.fresh(p.var_type)
        plan.visit(func.body)
        types = {v: with_memref(v.var_type, mr) for v, mr in plan.refs.items() if memref_of(v) is None}
        func = retype(func, types)
        if plan.allocs:
            func = func.with_(body=seq([*plan.allocs, *flatten(func.body)]))
        return func


def _next_buffer_number(func: Function) -> int:
    """The first free ``mem_<space>_<n>`` number: a program lowered before keeps its buffer names."""
    bases = (mr.base if isinstance(mr.base, str) else mr.base.name
             for v in all_vars(func) if (mr := memref_of(v)) is not None)
    return max([-1, *(int(m.group(1)) for b in bases if (m := _BUFFER_NAME.fullmatch(b)))]) + 1


_BUFFER_NAME = re.compile(r"mem_[a-z0-9]+_(\d+)")
