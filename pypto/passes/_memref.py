"""MemRef helpers shared by InitMemRef, MaterializeSemanticAliases, MemoryReuse and AllocateMemoryAddr."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from pypto.ir.expr import Call, Var
from pypto.ir.function import Function
from pypto.ir.stmt import flatten, seq
from pypto.ir.types import MemRef, TensorType, TileType, Type
from pypto.ir.visitor import rebuild
from pypto.passes._rewrite import assign_of
from pypto.passes._util import defined_vars, retype


def with_memref(t: Type, mr: MemRef) -> Type:
    return rebuild(t, memref=mr) if isinstance(t, (TensorType, TileType)) else t  # replace(), fields cached


def memref_of(v: Var) -> MemRef | None:
    t = v.var_type
    return t.memref if isinstance(t, TensorType | TileType) else None


def all_vars(func: Function) -> Iterator[Var]:
    yield from func.params
    yield from defined_vars(func.body)


def rebase(func: Function, new_ref: Callable[[MemRef], MemRef | None]) -> Function:
    """``func`` with every Var whose MemRef lies in a ``tile.alloc`` buffer (a Var base) retyped to
    ``new_ref(memref)``; a Var for which that is None keeps its MemRef."""
    return retype(func, {v: with_memref(v.var_type, new) for v in all_vars(func)
                         if (mr := memref_of(v)) is not None and isinstance(mr.base, Var)
                         and (new := new_ref(mr)) is not None})


def allocs(func: Function) -> list[tuple[Var, Call]]:
    """``(buffer, tile.alloc call)`` of every buffer binding in ``func``'s top-level statements."""
    return [a for s in flatten(func.body) if (a := assign_of(s, "tile.alloc")) is not None]


def drop_unused_allocs(func: Function) -> Function:
    """Remove ``tile.alloc`` statements whose buffer no MemRef refers to any more."""
    used = {id(mr.base) for v in all_vars(func) if (mr := memref_of(v)) is not None and isinstance(mr.base, Var)}
    stmts = flatten(func.body)
    kept = [s for s in stmts if (a := assign_of(s, "tile.alloc")) is None or id(a[0]) in used]
    return func if len(kept) == len(stmts) else func.with_(body=seq(kept))
