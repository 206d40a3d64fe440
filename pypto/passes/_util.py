"""Small IR helpers shared by the passes: use/def collection, name bases, fresh names."""

from __future__ import annotations

import dataclasses
import re
from collections import Counter
from typing import Any

from pypto.errors import InternalError
from pypto.ir.dtypes import DataType
from pypto.ir.enums import MemorySpace
from pypto.ir.expr import BinaryExpr, Call, ConstInt, Expr, Var
from pypto.ir.fold import fold
from pypto.ir.function import Function
from pypto.ir.ops.registry import get_op, has_op
from pypto.ir.stmt import (
    AssignStmt,
    BreakStmt,
    ContinueStmt,
    ForStmt,
    IfStmt,
    ScopeStmt,
    SeqStmts,
    Stmt,
    WhileStmt,
    defined_by,
    flatten,
    preorder,
    seq,
    trailing_yield,  # noqa: F401 - re-exported: the yield ending a loop/branch body
)
from pypto.ir.types import ScalarType, TensorType, TileType
from pypto.ir.verifier import calls as calls_in  # noqa: F401 - re-exported: every Call in a tree, pre-order
from pypto.ir.verifier import refs
from pypto.ir.visitor import Substitute

_SUFFIXES = re.compile(r"(__(ssa|tmp|idx|iter|rv|phi|tile|store)(_v\d+)?)+$")


def base_name(name: str) -> str:
    """``x__tile__ssa_v3`` -> ``x``: the user-facing stem of a compiler-made name."""
    return _SUFFIXES.sub("", name)


def used_vars(node: Any) -> list[Var]:
    """Vars referenced in an expression or statement tree, in first-use order (definitions included)."""
    return list(dict.fromkeys(refs(node)))


def var_use_counts(node: Any) -> Counter[Var]:
    """How often each Var occurs in a tree (its definitions included; iter args are not counted)."""
    return Counter(v for v in refs(node) if type(v) is Var)


def free_vars(stmt: Stmt) -> list[Var]:
    """Vars a statement tree reads but does not define itself, in first-use order."""
    local = set(defined_vars(stmt))
    return [v for v in used_vars(stmt) if v not in local]


def scalar_dtype(e: Expr) -> DataType:
    """The dtype of a scalar expression (a loop variable, an index); INDEX for anything else."""
    return e.type.dtype if isinstance(e.type, ScalarType) else DataType.INDEX


def shaped(e: Expr) -> TensorType | TileType:
    """The tensor or tile type of ``e``; a pypto bug for anything else."""
    t = e.type
    if not isinstance(t, TensorType | TileType):
        raise InternalError(f"expected a tensor or tile, got {t}")
    return t


def element_dtype(e: Expr) -> DataType:
    """The element dtype of a tile- or tensor-typed expression (a matmul's result: its ``out_dtype``)."""
    return shaped(e).dtype


def tile_space(e: Expr) -> MemorySpace | None:
    """The memory space of a tile-typed expression; None for anything else (or a tile without one yet)."""
    return e.type.memory_space if isinstance(e.type, TileType) else None


# Pre-order walk over every statement (nested bodies included); the tuple is remembered per body, so
# scanning an unchanged body again costs a tuple iteration.
iter_stmts = preorder


def defined_vars(stmt: Stmt) -> list[Var]:
    """Vars defined anywhere inside ``stmt`` (assignments, loop vars, iter args, return vars)."""
    return [v for s in iter_stmts(stmt) for v in defined_by(s)]


def bound_vars(stmt: Stmt) -> list[Var]:
    """Vars a statement binds for the statements after it: an assignment's var, a loop's or if's results."""
    return [stmt.var] if isinstance(stmt, AssignStmt) else list(getattr(stmt, "return_vars", ()))


def jumps(stmt: Stmt | None, kinds: tuple[type, ...] = (BreakStmt, ContinueStmt)) -> list[Stmt]:
    """Jump statements of the innermost enclosing loop (nested loops are not searched)."""
    if isinstance(stmt, kinds):
        return [stmt]
    if isinstance(stmt, IfStmt):
        inner = (stmt.then_body, stmt.else_body)
    elif isinstance(stmt, SeqStmts):
        inner = stmt.stmts
    else:
        inner = (stmt.body,) if isinstance(stmt, ScopeStmt) else ()
    return [j for s in inner for j in jumps(s, kinds)]


class NameGen:
    """Per-stem counters producing ``<stem>__<kind>_v<k>`` names."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.counts: Counter[str] = Counter()

    def __call__(self, stem: str) -> str:
        self.counts[stem] += 1
        return f"{stem}__{self.kind}_v{self.counts[stem] - 1}"


def unique_name(stem: str, taken: set[str]) -> str:
    """``stem``, or ``stem_1``, ``stem_2``, ... when taken; the name returned is added to ``taken``."""
    k, name = 0, stem
    while name in taken:
        k += 1
        name = f"{stem}_{k}"
    taken.add(name)
    return name


def follow(links: Any, v: Var) -> Var:
    """The end of the chain ``v -> links[v] -> ...`` (a root of a union-find, the buffer a version came
    from); a cycle stops where it closes."""
    seen: set[Var] = set()
    while v in links and v not in seen:
        seen.add(v)
        v = links[v]
    return v


def map_blocks(body: Stmt, fn: Any) -> Stmt:
    """Apply ``fn(list[Stmt]) -> list[Stmt]`` to every statement list, innermost first; ``body`` itself
    when nothing changed, so untouched functions are shared."""
    old = flatten(body)
    new = fn([_map_child_blocks(s, fn) for s in old])
    if len(new) == len(old) and all(a is b for a, b in zip(new, old, strict=True)):
        return body
    return seq(new, span=body.span)


def _map_child_blocks(stmt: Stmt, fn: Any) -> Stmt:
    if isinstance(stmt, IfStmt):
        fields = ("then_body", "else_body")
    else:
        fields = ("body",) if isinstance(stmt, (ForStmt, WhileStmt, ScopeStmt)) else ()
    new = {f: map_blocks(b, fn) for f in fields if (b := getattr(stmt, f)) is not None}
    return stmt if all(b is getattr(stmt, f) for f, b in new.items()) else dataclasses.replace(stmt, **new)


def retype(func: Function, new_types: dict[Var, Any]) -> Function:
    """``func`` with the given Vars replaced by fresh Vars of new types (uses and definitions)."""
    if not new_types:
        return func
    mapping: dict[Var, Any] = {v: type(v)(v.name, t, span=v.span) for v, t in new_types.items()}
    params = tuple(mapping.get(p, p) for p in func.params)
    return dataclasses.replace(func, params=params, body=_RetypeCalls(mapping).visit(func.body))


def substitute_typed(node: Any, mapping: dict[Var, Expr], *, keep_defs: bool = False) -> Any:
    """``substitute`` that also re-derives the result type of op calls whose arguments changed; with
    ``keep_defs`` the assignments that define a mapped Var stay as they are and integer arithmetic on
    constants is folded before the types are derived (a constant substituted into ``M - 8``)."""
    if not mapping:
        return node
    return (_RetypeUses if keep_defs else _RetypeCalls)(mapping).visit(node)


class _RetypeCalls(Substitute):
    """Substitute, re-deriving the result type of every op Call whose arguments changed (the parser types
    a call from its arguments, so a stale result type would not survive a dump)."""

    def visit_Call(self, call: Call) -> Expr:  # noqa: N802
        new = self.generic_visit(call)
        if new is call or not isinstance(new.op, str) or not has_op(new.op):
            return new
        op = get_op(new.op)
        result = op.infer(list(new.args), {**op.kwargs, **new.kwargs}, new.span)
        return new if result == new.result_type else dataclasses.replace(new, result_type=result)


class _RetypeUses(_RetypeCalls):
    """_RetypeCalls that leaves the definitions of mapped Vars alone and folds constant integer arithmetic."""

    def visit_AssignStmt(self, s: AssignStmt) -> Stmt:  # noqa: N802
        return s if s.var in self.mapping else self.generic_visit(s)

    def visit_BinaryExpr(self, e: BinaryExpr) -> Expr:  # noqa: N802
        new = self.generic_visit(e)
        value = fold(new) if new is not e else None
        return ConstInt(value, new.dtype, span=new.span) if value is not None else new
