"""Whether the L0 tiles of an AutoTileMatmulL0 grid fit L0 under the kernel's memory planner.

A grid is a sequence of regions run one after another: the full tiles (two stages at once when L0C is double
buffered), then the peeled last column, last row and corner of tiles; each region has its operand blocks
(every K block, the peeled narrower last one included) and its accumulator. How the buffers are shared
depends on who plans them:

- pypto's MemoryReuse (the PYPTO planner, and DSA_RP, whose placement coalesces by lifetime first): of a
  full-K double-buffered loop's two stages only the accumulators (and the Mat loads) keep a buffer each; each
  stage's one operand block per L0A / L0B is dead before the other stage's move, so the stages share them.
  Not for a ``matmul_bias`` grid: counted so, upstream's full-K biased grids took a double-buffered schedule
  under DSA_RP and computed wrong numbers (not yet understood). Under PYPTO tiles of equal shape share one
  buffer across the regions too; DSA_RP's regions are counted side by side;
- ptoas 0.1.1's planner (PTOAS; MemoryReuse does not run): each ``alloc_tile`` sits at its first use and is
  freed after its last, so only the largest region counts, each stage with tiles of its own.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from pypto.ir.enums import MemorySpace
from pypto.passes.l0_tile_chooser import L0TileConfig, acc_elements


@dataclass(frozen=True, slots=True)
class Tiling:
    """An L0 tile ``[m, n]`` of the output with K blocks of ``k``."""

    m: int
    n: int
    k: int
    double_buffer_c: bool = False
    """Two accumulators in flight (the chooser budgeted each at half of L0C): the grid's inner loop is a
    two-stage ``pl.pipeline`` marked ``pipeline_double_buffer_c``, so tile i's drain overlaps tile i+1's MAD."""


# (space, rows, cols, element bytes, pipeline stage)
_Tile = tuple[MemorySpace, int, int, int, int]


def spans(dim: int, step: int) -> list[tuple[int, int, int]]:
    """``[lo, hi)`` ranges of ``dim`` with their tile extent: the full tiles, then a partial last tile."""
    full = dim // step * step
    return [(0, full, step)] * (full > 0) + [(full, dim, dim - full)] * (full < dim)


def grid_regions(t: Tiling, cfg: L0TileConfig, stages_share_operands: bool) -> list[list[_Tile]]:
    """The L0 tiles of each region of the grid, in program order; ``stages_share_operands``: the two stages of a
    double-buffered loop have one set of operand blocks (stage 0's)."""
    full, tail = divmod(cfg.K, t.k)
    blocks = [t.k] * (1 + (full > 1)) + ([tail] if tail else [])
    regions: list[list[_Tile]] = []
    for _, _, rows in spans(cfg.M, t.m):
        for _, _, cols in spans(cfg.N, t.n):
            tiles: list[_Tile] = []
            for stage in range(2 if t.double_buffer_c and not regions else 1):
                if stage == 0 or not stages_share_operands:
                    tiles += [(MemorySpace.Left, rows, k, cfg.bytes_a, stage) for k in blocks]
                    tiles += [(MemorySpace.Right, k, cols, cfg.bytes_b, stage) for k in blocks]
                tiles.append((MemorySpace.Acc, acc_elements(rows, 1, cfg), cols, cfg.bytes_c, stage))
            regions.append(tiles)
    return regions


def regions_fit(t: Tiling, cfg: L0TileConfig, caps: dict[MemorySpace, int], shared: bool,
                one_region_at_a_time: bool = False, biased: bool = False, operand_sets: int = 1) -> bool:
    """Whether the grid's tiles fit L0 (see the module doc): all regions side by side, each distinct tile
    once when ``shared`` (PYPTO); with ``one_region_at_a_time`` (ptoas plans, PTOAS) only the largest.
    ``biased``: a ``matmul_bias`` grid, whose stages are counted with operand blocks of their own.
    ``operand_sets``: each sub-tile loads its K blocks that many times (a loop-carried accumulation: the first
    matmul's blocks, then the loop's), counted as tiles of their own."""
    share = not one_region_at_a_time and not biased and t.k == cfg.K
    regions = [r + [(*x[:4], -i) for i in range(1, operand_sets) for x in r if x[0] is not MemorySpace.Acc]
               for r in grid_regions(t, cfg, share)]
    if not one_region_at_a_time:
        regions = [[x for r in regions for x in r]]
    for tiles in regions:
        used: Counter[MemorySpace] = Counter()
        for space, r, c, nbytes, _ in (set(tiles) if shared else tiles):
            used[space] += r * c * nbytes
        if any(used[space] > caps[space] for space in used):
            return False
    return True


__all__ = ["Tiling", "grid_regions", "regions_fit", "spans"]
