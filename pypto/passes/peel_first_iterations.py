"""PeelFirstIterations: a kernel loop that chooses its accumulator on its first iteration runs that iteration
once before the loop (see :mod:`pypto.passes._peel`).

``if kb == 0: acc = matmul(...) else: acc = matmul_acc(acc, ...)`` (and ``matmul_acc(..., init_cond=(k == 0))``)
gives the two branches different buffers (a fresh Acc tile and the accumulator itself), which ptoas 0.1.1
cannot merge; peeled, the accumulator starts with ``matmul`` and the loop only accumulates. The choice stays
in the IR up to here so that AutoTileMatmulL0 K-tiles each branch's matmul where it stands, as upstream's pass
does (its K loops from 0 choose on ``ko == 0`` in turn, and are peeled here too, innermost first). The
placeholder ``tile.create`` a peeled accumulator started from is dropped. Our own slot, right after
AutoTileMatmulL0: upstream keeps the choice and lowers it to an ``scf.if`` its ptoas merges. Only choices that
compute on the cube wait for this pass; ConvertTensorToTileOps peels a tensor-level kernel's vector-only ones.
"""

from __future__ import annotations

from dataclasses import dataclass

from pypto.ir.function import Function, Program
from pypto.passes._peel import peel_first_iterations
from pypto.passes.base import Pass


@dataclass(frozen=True)
class PeelFirstIterations(Pass):
    """Peel every kernel loop's first-iteration accumulator choice (see the module doc)."""

    name = "PeelFirstIterations"

    def run_function(self, func: Function, program: Program) -> Function:
        if not func.is_incore:
            return func
        return peel_first_iterations(func, cube=True)


__all__ = ["PeelFirstIterations"]
