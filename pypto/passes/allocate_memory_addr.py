"""AllocateMemoryAddr: byte offsets for every on-chip buffer within the per-space capacities.

Under the DSA_RP planner (which drops MemoryReuse from the pipeline and places buffers itself) the
buffers are first coalesced by lifetime as MemoryReuse does: ptoas 0.1.1 gives every ``alloc_tile`` bytes
of its own, so tiles that share no buffer here would overflow L0 where upstream's DSA_RP reuses them
(e.g. the row blocks of a matmul chain, each with its own L0 tiles).
"""

from __future__ import annotations

from dataclasses import dataclass

from pypto.errors import UserError
from pypto.ir.enums import MemorySpace
from pypto.ir.function import Function, Program
from pypto.ir.options import BackendType, MemoryPlanner
from pypto.ir.properties import IRProperty
from pypto.ir.types import MemRef
from pypto.passes._memref import all_vars, allocs, memref_of, rebase
from pypto.passes.base import Pass
from pypto.passes.context import PassContext
from pypto.passes.memory_reuse import MemoryReuse

KIB = 1024
CAPACITY: dict[BackendType, dict[MemorySpace, int]] = {
    BackendType.Ascend910B: {MemorySpace.Vec: 192 * KIB, MemorySpace.Mat: 512 * KIB, MemorySpace.Left: 64 * KIB,
                             MemorySpace.Right: 64 * KIB, MemorySpace.Acc: 128 * KIB, MemorySpace.Bias: 1 * KIB},
    # a5 UB is 256 KiB, but ptoas 0.1.1's PlanMemory for the Ascend910_9599 device spec allows 248 KiB
    BackendType.Ascend950: {MemorySpace.Vec: 248 * KIB, MemorySpace.Mat: 512 * KIB, MemorySpace.Left: 64 * KIB,
                            MemorySpace.Right: 64 * KIB, MemorySpace.Acc: 256 * KIB, MemorySpace.Bias: 4 * KIB,
                            MemorySpace.LeftScale: 4 * KIB, MemorySpace.RightScale: 4 * KIB},
}
ALIGN: dict[MemorySpace, int] = {MemorySpace.Mat: 128, MemorySpace.Left: 64, MemorySpace.Right: 64,
                                 MemorySpace.Acc: 128, MemorySpace.Vec: 128}


def _align(n: int, a: int) -> int:
    return (n + a - 1) // a * a


def _fmt(n: int) -> str:
    return f"{n // KIB} KiB" if n % KIB == 0 else f"{n} B"


@dataclass(frozen=True)
class AllocateMemoryAddr(Pass):
    """Bump allocation per memory space in alloc order; overflow is a UserError naming the tiles."""

    name = "AllocateMemoryAddr"
    produces = frozenset({IRProperty.AllocatedMemoryAddr})
    backend: BackendType = BackendType.Ascend910B
    planner: MemoryPlanner = MemoryPlanner.PYPTO

    @classmethod
    def from_context(cls, ctx: PassContext) -> AllocateMemoryAddr:
        return cls(backend=ctx.backend_type, planner=ctx.memory_planner)

    def run_function(self, func: Function, program: Program) -> Function:
        if not func.is_incore:
            return func
        if self.planner is MemoryPlanner.DSA_RP:
            func = MemoryReuse().run_function(func, program)
        offsets: dict[int, int] = {}
        used: dict[MemorySpace, int] = {}
        for var, call in allocs(func):
            space, size = call.kwargs["memory_space"], call.kwargs["size"]
            off = _align(used.get(space, 0), ALIGN.get(space, 32))
            offsets[id(var)] = off
            used[space] = off + size
        self._check(func, used)

        def placed(mr: MemRef) -> MemRef | None:
            off = offsets.get(id(mr.base))
            return MemRef(mr.base, off, mr.size) if off is not None and off != mr.offset else None

        return rebase(func, placed)

    def _check(self, func: Function, used: dict[MemorySpace, int]) -> None:
        caps = CAPACITY[self.backend]
        for space, total in used.items():
            cap = caps.get(space)
            if cap is not None and total > cap:
                tiles = [f"{v.name} ({_fmt(mr.size)})" for v in all_vars(func)
                         if (mr := memref_of(v)) is not None and getattr(v.var_type, "memory_space", None) is space]
                raise UserError(
                    f"{space.value} buffer usage {_fmt(total)} in kernel '{func.name}' exceeds platform limit "
                    f"{_fmt(cap)} ({self.backend.value}); tiles: {', '.join(tiles)}", func.span,
                    hint="use smaller tiles (loop over chunks) or reuse buffers")
