"""MemRef helpers shared by InitMemRef, MaterializeSemanticAliases, MemoryReuse and AllocateMemoryAddr."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

from pypto.ir.expr import Var
from pypto.ir.function import Function
from pypto.ir.stmt import AssignStmt, Stmt, flatten, seq
from pypto.ir.types import MemRef, TensorType, TileType, Type
from pypto.passes._rewrite import match
from pypto.passes._util import defined_vars


def offset0() -> int:
    """Static offsets are plain ints (printed ``pl.const(0, pl.INT64)``)."""
    return 0


def with_memref(t: Type, mr: MemRef) -> Type:
    return dataclasses.replace(t, memref=mr) if isinstance(t, (TensorType, TileType)) else t


def memref_of(v: Var) -> MemRef | None:
    t = v.var_type
    return t.memref if isinstance(t, TensorType | TileType) else None


def all_vars(func: Function) -> Iterator[Var]:
    yield from func.params
    yield from defined_vars(func.body)


def is_alloc(s: Stmt) -> bool:
    return match(s, "tile.alloc") is not None


def allocs(func: Function) -> list[AssignStmt]:
    return [s for s in flatten(func.body) if isinstance(s, AssignStmt) and is_alloc(s)]


def drop_unused_allocs(func: Function) -> Function:
    """Remove ``tile.alloc`` statements whose buffer no MemRef refers to any more."""
    used = {id(mr.base) for v in all_vars(func) if (mr := memref_of(v)) is not None and isinstance(mr.base, Var)}
    stmts = flatten(func.body)
    kept = [s for s in stmts if not (isinstance(s, AssignStmt) and is_alloc(s)) or id(s.var) in used]
    return func if len(kept) == len(stmts) else func.with_(body=seq(kept))
