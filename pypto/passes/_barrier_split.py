"""Segments of a kernel cut at ``pl.system.syncall`` barriers, for ExpandMixedKernel.

ptoas 0.1.1 has no SYNCALL instruction. A barrier across the blocks of an SPMD launch means every
block finishes the work before it before any block starts the work after it, which is exactly the
order between two tasks the runtime runs one after another. So a kernel with top-level barriers
becomes one InCore kernel per segment (``<f>_seg<k>``), launched with the same block count; tiles
live across a barrier pass through GM temps (one row band per block, as the mixed split does; loads of
tensors the kernel does not write are repeated instead),
scalars are recomputed, and each segment is then typed AIC/AIV or split like any other kernel.
"""

from __future__ import annotations

from pypto.errors import UnsupportedFeatureError
from pypto.ir.function import Function
from pypto.ir.stmt import Stmt
from pypto.passes._mixed_split import Analysis, stmt_cores
from pypto.passes._rewrite import match
from pypto.passes._util import calls_in

SEGMENT = "segment"  # the core of a statement with tile work: it runs in its segment


def has_barrier(f: Function) -> bool:
    return any(match(c, "system.syncall") for c in calls_in(f.body))


class BarrierAnalysis(Analysis):
    """Items of a kernel and their segments (the number of barriers before them)."""

    def __post_init__(self) -> None:
        seg = 0
        for s in self._top():
            if match(s, "system.syncall") is not None:
                seg += 1
                continue
            nested = [c for c in calls_in(s) if match(c, "system.syncall")]
            if nested:
                raise UnsupportedFeatureError(
                    f"kernel '{self.func.name}': pl.system.syncall inside a loop or if; ptoas 0.1.1 has no "
                    f"SYNCALL, so pypto cuts the kernel into one task before the barrier and one after it, "
                    f"which needs the barrier at the top level of the kernel", nested[0].span,
                    hint="move the barrier out of the loop (one kernel per loop part), or split the kernel "
                         "into two kernels launched one after another")
            item = self._item(s)
            self.items.append(item)
            if item.core is not None:
                self.stage[len(self.items) - 1] = seg
        written = {w for it in self.items for w in it.writes}
        for i, it in enumerate(self.items):  # loads of unwritten tensors: re-loaded where used, not passed via GM
            if match(it.stmt, "tile.load") is not None and not (it.reads & written):
                it.core = None
                self.stage.pop(i, None)
        segs = sorted(set(self.stage.values())) or [0]  # segments with work (a barrier before none orders nothing)
        self.stage = {i: segs.index(k) for i, k in self.stage.items()}
        self.stage_cores = [SEGMENT] * len(segs)

    def _core(self, s: Stmt) -> str | None:
        return SEGMENT if stmt_cores(s) else None
