"""The L0 tile chooser: which ``[m, k] @ [k, n]`` block a matmul too big for L0 is cut into.

The chooser scores every legal aligned tile ``(m, n, k)`` of an ``[M, K] @ [K, N]`` matmul with a
roofline estimate of its wall time in core cycles and returns the cheapest design point: the tile,
which operand stays resident (:class:`Stationarity`) and whether L0C is double-buffered. Its inputs,
cost terms, defaults (the Ascend 910B calibration) and tie-breaks are upstream PyPTO's, so the same
matmul is tiled the same way here; the functions below are one per cost term.

Cost of one design point, summed over the ``ceil(M/m) * ceil(N/n)`` output tiles:

- cube (:func:`mad_cycles`): per matmul block a fixed head plus ``passes * ceil(m/16) * fractals *
  ceil(n/16)``; a peeled K tail is charged at its own width;
- operand loads (:func:`load_cycles`): bytes moved L1 -> L0A / L0B over each port's bandwidth; which
  operand is reloaded per tile depends on the stationarity (a full-K output-stationary tile holds
  whichever operand is cheaper, recorded as ``os_holds_a``);
- accumulator drain (:func:`drain_cycles`): per output tile a fixed cost plus, per row, the larger
  of a floor and the byte throughput, plus a penalty for a non-power-of-two count of N fractals;
- wall (:func:`wall_cycles`): ``max(load, cube) + drain``, or with two accumulators
  ``max(compute, drain) + min(compute, drain) / tiles`` (one pipeline fill is not hidden).

Ties on the (rounded) wall break by padded compute volume, then fewer K blocks, then lower load,
then larger ``m * n``, then larger ``k``. Operand-stationary and double-buffered-L0C points are
considered only when their gate is open, need ``k == K``, and replace the output-stationary,
single-accumulator optimum only when strictly cheaper; a matmul that fits L0 whole is never tiled.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import Enum
from functools import lru_cache

from pypto.errors import UserError
from pypto.ir.dtypes import DataType
from pypto.ir.options import BackendType


class Stationarity(Enum):
    """Which operand stays resident across the tile loops (single-buffered in its L0 buffer)."""

    OutputStationary = 0  # the accumulator: both operands stream (double-buffered)
    AStationary = 1  # A held for a row of tiles (k == K); B streams
    BStationary = 2  # B held for a column of tiles (k == K); A streams


@dataclass(frozen=True)
class L0TileConfig:
    """A matmul's shape and the hardware it runs on. Defaults: Ascend 910B, BF16 x BF16 -> FP32."""

    M: int = 0
    N: int = 0
    K: int = 0
    l0a_bytes: int = 0
    l0b_bytes: int = 0
    l0c_bytes: int = 0
    bytes_a: int = 2
    bytes_b: int = 2
    bytes_c: int = 4
    min_m: int = 16
    min_n: int = 16
    min_k: int = 16
    align_m: int = 16
    align_n: int = 16
    align_k: int = 16
    l0c_align_m: int = 16
    """Rows an accumulator allocation is rounded up to (910B INT32 accumulators: 32)."""
    box_align_m: int = 1
    box_align_n: int = 1
    """Padding of the output window in the operands' boxed Mat layout (charged to L0A/L0B/L0C)."""
    max_n: int = 0
    """Largest tile ``n`` (0: none), e.g. what the bias table holds."""
    max_n_pipelined: int = 0
    """Tighter ``n`` bound for a full-K output grid whose N resource is replicated by one pipeline."""
    max_n_nested_pipelined: int = 0
    """The same under two nested pipelines (an output-stationary grid that holds A)."""
    allow_a_stationary: bool = False
    allow_b_stationary: bool = False
    allow_double_buffer_c: bool = False
    c_read: bool = False
    """The matmul accumulates into an existing C (counts C traffic twice)."""
    bw_a: float = 129.7
    bw_b: float = 85.4
    bw_drain: float = 118.0
    drain_fixed_cycles: float = 164.0
    drain_row_cycles: float = 4.45
    drain_penalty_cycles: float = 2.6
    drain_c0_bytes: int = 32
    mad_head: int = 21
    mad_k_fractal_bytes: int = 32
    mad_fp32_passes: int = 2
    allow_padding: bool = False
    """Tile extents may exceed the problem (M, N, K below the cube minimum are padded up)."""
    allow_k_boundary: bool = False
    """``k`` need not divide a 16-aligned K: the last K block is a narrower peeled tail."""


@dataclass(frozen=True)
class L0TileResult:
    """The chosen design point and its estimates."""

    m: int
    n: int
    k: int
    estimated_traffic_bytes: int
    estimated_cost_cycles: int
    padded_compute_volume: int
    stationarity: Stationarity = Stationarity.OutputStationary
    os_holds_a: bool = True
    """For a full-K output-stationary tile: A (rows outer) rather than B is the held operand."""
    double_buffer_c: bool = False
    perf_hint: str = ""


# Upstream's L0 sizes and cost calibrations: 910B (a2a3) on-device sweeps; 950 (a5) fitted on the a5 simulator.
_BACKEND_FIELDS = ("l0a_bytes", "l0b_bytes", "l0c_bytes", "bw_a", "bw_b", "bw_drain", "drain_fixed_cycles",
                   "drain_row_cycles", "drain_penalty_cycles", "mad_head", "mad_fp32_passes")
_BACKENDS = {
    BackendType.Ascend910B: (64 * 1024, 64 * 1024, 128 * 1024, 129.7, 85.4, 118.0, 164.0, 4.45, 2.6, 21, 2),
    BackendType.Ascend950: (64 * 1024, 64 * 1024, 256 * 1024, 206.3, 223.8, 30.0, 343.4, 4.59, 0.26, 25, 8),
}


def backend_config(backend: BackendType, m: int, n: int, k: int, *, dtype_a: DataType, dtype_b: DataType,
                   dtype_c: DataType) -> L0TileConfig:
    """The configuration AutoTileMatmulL0 starts from on ``backend`` (gates closed, no caps)."""
    int32_rows = backend is BackendType.Ascend910B and dtype_c == DataType.INT32
    return L0TileConfig(M=m, N=n, K=k, bytes_a=dtype_a.nbytes, bytes_b=dtype_b.nbytes, bytes_c=dtype_c.nbytes,
                        l0c_align_m=32 if int32_rows else 16,
                        **dict(zip(_BACKEND_FIELDS, _BACKENDS[backend], strict=True)))


@dataclass(frozen=True)
class _Regime:
    """One point of the schedule axes: the resident operand and the number of accumulators."""

    stationarity: Stationarity = Stationarity.OutputStationary
    double_buffer_c: bool = False

    @property
    def full_k_only(self) -> bool:
        return self.stationarity is not Stationarity.OutputStationary or self.double_buffer_c


_BASELINE = _Regime()


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def _align_up(x: int, a: int) -> int:
    return _cdiv(x, a) * a


def _odd_part(x: int) -> int:
    return x // (x & -x)


# --- footprints -------------------------------------------------------------------------------------


def boxed_m(m: int, cfg: L0TileConfig) -> int:
    return _align_up(m, cfg.box_align_m)


def boxed_n(n: int, cfg: L0TileConfig) -> int:
    return _align_up(n, cfg.box_align_n)


def acc_elements(m: int, n: int, cfg: L0TileConfig) -> int:
    """Elements an ``[m, n]`` accumulator occupies in L0C: boxed, then rows rounded to ``l0c_align_m``."""
    return _align_up(boxed_m(m, cfg), cfg.l0c_align_m) * boxed_n(n, cfg)


def _budgets(cfg: L0TileConfig, r: _Regime) -> tuple[int, int, int]:
    """Elements per L0A / L0B block and per accumulator under ``r``'s buffer depths (a streamed operand and a
    second accumulator take two buffers, a resident operand one)."""
    a_depth = 1 if r.stationarity is Stationarity.AStationary else 2
    b_depth = 1 if r.stationarity is Stationarity.BStationary else 2
    return (cfg.l0a_bytes // (cfg.bytes_a * a_depth), cfg.l0b_bytes // (cfg.bytes_b * b_depth),
            cfg.l0c_bytes // (cfg.bytes_c * (2 if r.double_buffer_c else 1)))


def legal_ks(m: int, n: int, cfg: L0TileConfig, a_budget: int, b_budget: int) -> list[int]:
    """Every aligned ``k`` whose blocks fit L0A and L0B, ascending (all are scored: the cube cost is not
    monotone in ``k``). Without padding or a K peel only divisors of K."""
    cap = min(a_budget // boxed_m(m, cfg), b_budget // boxed_n(n, cfg))
    k_problem = max(_align_up(cfg.K, cfg.align_k), cfg.min_k) if cfg.allow_padding else cfg.K
    k_hi = min(cap, k_problem) // cfg.align_k * cfg.align_k
    peel = cfg.allow_k_boundary and cfg.K % cfg.align_k == 0
    return [k for k in range(cfg.min_k, k_hi + 1, cfg.align_k) if cfg.allow_padding or peel or cfg.K % k == 0]


# --- cost terms -------------------------------------------------------------------------------------


def held_load_cycles(m: int, n: int, cfg: L0TileConfig) -> tuple[float, float]:
    """Load cycles of a full-K grid holding A (B reloaded per row block) and holding B."""
    M, N, K = cfg.M, cfg.N, cfg.K
    a_once, b_once = cfg.bytes_a * M * K / cfg.bw_a, cfg.bytes_b * K * N / cfg.bw_b
    a_per_col = cfg.bytes_a * M * K * _cdiv(N, n) / cfg.bw_a
    b_per_row = cfg.bytes_b * K * N * _cdiv(M, m) / cfg.bw_b
    return a_once + b_per_row, a_per_col + b_once


def os_holds_a(m: int, n: int, cfg: L0TileConfig) -> bool:
    """A full-K output-stationary grid holds A (rows outer) unless holding B is strictly cheaper."""
    held_a, held_b = held_load_cycles(m, n, cfg)
    return held_a <= held_b


def load_cycles(m: int, n: int, k: int, cfg: L0TileConfig, stationarity: Stationarity) -> float:
    held_a, held_b = held_load_cycles(m, n, cfg)
    if stationarity is Stationarity.AStationary:
        return held_a
    if stationarity is Stationarity.BStationary:
        return held_b
    if k >= cfg.K:
        return held_a if held_a <= held_b else held_b
    M, N, K = cfg.M, cfg.N, cfg.K  # split K: both operands are reloaded for every output tile
    return cfg.bytes_a * M * K * _cdiv(N, n) / cfg.bw_a + cfg.bytes_b * K * N * _cdiv(M, m) / cfg.bw_b


def mad_cycles(m: int, n: int, k: int, cfg: L0TileConfig) -> int:
    fractal = max(1, cfg.mad_k_fractal_bytes // cfg.bytes_a)
    passes = max(1, cfg.mad_fp32_passes) if cfg.bytes_a == 4 else max(1, cfg.bytes_a // 2)
    full, tail = divmod(cfg.K, k)
    fractals = full * _cdiv(k, fractal) + (_cdiv(tail, fractal) if tail else 0)
    blocks = full + (1 if tail else 0)
    per_tile = blocks * cfg.mad_head + passes * _cdiv(m, cfg.align_m) * fractals * _cdiv(n, cfg.align_n)
    return _cdiv(cfg.M, m) * _cdiv(cfg.N, n) * per_tile


def drain_cycles(m: int, n: int, cfg: L0TileConfig) -> float:
    tiles = _cdiv(cfg.M, m) * _cdiv(cfg.N, n)
    n_fractals = _cdiv(n, max(1, cfg.drain_c0_bytes // cfg.bytes_c))
    per_row = (max(cfg.drain_row_cycles, cfg.bytes_c * n / cfg.bw_drain)
               + cfg.drain_penalty_cycles * (_odd_part(n_fractals) - 1))
    return tiles * (cfg.drain_fixed_cycles + m * per_row)


def wall_cycles(m: int, n: int, k: int, cfg: L0TileConfig, r: _Regime) -> int:
    compute = max(load_cycles(m, n, k, cfg, r.stationarity), float(mad_cycles(m, n, k, cfg)))
    drain = drain_cycles(m, n, cfg)
    if r.double_buffer_c:
        wall = max(compute, drain) + min(compute, drain) / (_cdiv(cfg.M, m) * _cdiv(cfg.N, n))
    else:
        wall = compute + drain
    return math.floor(wall + 0.5)


def traffic_bytes(m: int, n: int, k: int, cfg: L0TileConfig, stationarity: Stationarity) -> int:
    """L1 -> L0 operand bytes plus accumulator bytes (for inspection; the chooser ranks by wall)."""
    M, N, K = cfg.M, cfg.N, cfg.K
    a_reloads, b_reloads = _cdiv(N, n), _cdiv(M, m)
    holds_a = stationarity is Stationarity.AStationary or (
        stationarity is Stationarity.OutputStationary and k >= K and os_holds_a(m, n, cfg))
    holds_b = stationarity is Stationarity.BStationary or (
        stationarity is Stationarity.OutputStationary and k >= K and not holds_a)
    a = cfg.bytes_a * M * K * (1 if holds_a else a_reloads)
    b = cfg.bytes_b * K * N * (1 if holds_b else b_reloads)
    return a + b + (2 if cfg.c_read else 1) * cfg.bytes_c * M * N


def padded_volume(m: int, n: int, k: int, cfg: L0TileConfig) -> int:
    return _cdiv(cfg.M, m) * m * _cdiv(cfg.N, n) * n * _cdiv(cfg.K, k) * k


# --- search -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Candidate:
    m: int
    n: int
    k: int
    regime: _Regime
    wall: int
    key: tuple[int, int, int, float, int, int] = field(compare=False)


def _score(m: int, n: int, k: int, cfg: L0TileConfig, r: _Regime) -> _Candidate:
    wall = wall_cycles(m, n, k, cfg, r)
    key = (wall, padded_volume(m, n, k, cfg), _cdiv(cfg.K, k), load_cycles(m, n, k, cfg, r.stationarity),
           -m * n, -k)
    return _Candidate(m, n, k, r, wall, key)


def _rows_outer(m: int, n: int, cfg: L0TileConfig, s: Stationarity) -> bool:
    """Whether the emitted full-K grid loops over rows outside (so N is its moving inner axis)."""
    return s is Stationarity.AStationary or (s is Stationarity.OutputStationary and os_holds_a(m, n, cfg))


def _n_allowed(m: int, n: int, k: int, cfg: L0TileConfig, s: Stationarity) -> bool:
    """The caller's caps on ``n``: overall, and for a full-K output grid under one or two pipelines."""
    if cfg.max_n and n > cfg.max_n:
        return False
    if k != cfg.K or (m == cfg.M and n == cfg.N):
        return True
    pipelined = s is not Stationarity.BStationary
    nested = s is Stationarity.OutputStationary and os_holds_a(m, n, cfg)
    return not ((cfg.max_n_pipelined and pipelined and n > cfg.max_n_pipelined)
                or (cfg.max_n_nested_pipelined and nested and n > cfg.max_n_nested_pipelined))


def _tiles(cfg: L0TileConfig, r: _Regime, acc_budget: int) -> list[tuple[int, int]]:
    """The legal ``(m, n)`` for regime ``r``, ``m`` then ``n`` ascending."""
    m_hi = _align_up(cfg.M, cfg.align_m) if cfg.allow_padding else cfg.M
    n_hi = _align_up(cfg.N, cfg.align_n) if cfg.allow_padding else cfg.N
    if cfg.max_n:
        n_hi = min(n_hi, cfg.max_n)
    out = []
    for m in range(cfg.min_m, m_hi + 1, cfg.align_m):
        rows = _align_up(boxed_m(m, cfg), cfg.l0c_align_m)
        if rows > acc_budget // boxed_n(cfg.min_n, cfg):
            break
        for n in range(cfg.min_n, min(n_hi, acc_budget // rows) + 1, cfg.align_n):
            inner = cfg.N // n if _rows_outer(m, n, cfg, r.stationarity) else cfg.M // m
            if r.double_buffer_c and inner < 2:
                continue  # two accumulators need two full tiles of the moving inner loop
            if acc_elements(m, n, cfg) <= acc_budget:
                out.append((m, n))
    return out


def _best_in(cfg: L0TileConfig, r: _Regime) -> _Candidate | None:
    a_budget, b_budget, acc_budget = _budgets(cfg, r)
    best: _Candidate | None = None
    for m, n in _tiles(cfg, r, acc_budget):
        for k in legal_ks(m, n, cfg, a_budget, b_budget):
            if (r.full_k_only and k != cfg.K) or not _n_allowed(m, n, k, cfg, r.stationarity):
                continue
            c = _score(m, n, k, cfg, r)
            if best is None or c.key < best.key:
                best = c
    return best


def _regimes(cfg: L0TileConfig) -> list[_Regime]:
    """The gated regimes beyond the baseline, in the order they are tried."""
    stats = [Stationarity.OutputStationary]
    stats += [Stationarity.AStationary] if cfg.allow_a_stationary else []
    stats += [Stationarity.BStationary] if cfg.allow_b_stationary else []
    dbcs = (False, True) if cfg.allow_double_buffer_c else (False,)
    return [_Regime(s, d) for s in stats for d in dbcs if _Regime(s, d) != _BASELINE]


def _check(ok: bool, message: str) -> None:
    if not ok:
        raise UserError(f"choose_l0_tile: {message}",
                        hint="fix the L0TileConfig field named above (AutoTileMatmulL0 leaves such a matmul "
                             "untiled)")


def _validate(cfg: L0TileConfig) -> None:
    _check(cfg.M > 0 and cfg.N > 0 and cfg.K > 0, f"M, N, K must all be positive (got {cfg.M}, {cfg.N}, {cfg.K})")
    _check(min(cfg.l0a_bytes, cfg.l0b_bytes, cfg.l0c_bytes) > 0, "L0 capacities must be positive")
    _check(min(cfg.bytes_a, cfg.bytes_b, cfg.bytes_c) > 0, "element byte sizes must be positive")
    _check(min(cfg.min_m, cfg.min_n, cfg.min_k) > 0, "minimum tile dimensions must be positive")
    _check(cfg.max_n == 0 or cfg.max_n >= cfg.min_n,
           f"max_n must be zero (unbounded) or at least min_n (got max_n={cfg.max_n}, min_n={cfg.min_n})")
    _check(cfg.max_n_pipelined >= 0 and not (cfg.max_n and cfg.max_n_pipelined > cfg.max_n),
           f"max_n_pipelined must be non-negative and at most max_n (got {cfg.max_n_pipelined}, {cfg.max_n})")
    _check(cfg.max_n_nested_pipelined >= 0
           and not (cfg.max_n_pipelined and cfg.max_n_nested_pipelined > cfg.max_n_pipelined),
           f"max_n_nested_pipelined must be non-negative and at most max_n_pipelined "
           f"(got {cfg.max_n_nested_pipelined}, {cfg.max_n_pipelined})")
    _check(min(cfg.align_m, cfg.align_n, cfg.align_k, cfg.l0c_align_m, cfg.box_align_m, cfg.box_align_n) > 0,
           "tile and physical L0C alignments must be positive")
    _check(min(cfg.bw_a, cfg.bw_b, cfg.bw_drain) > 0, "roofline bandwidths bw_a, bw_b, bw_drain must be positive")
    _check(cfg.drain_c0_bytes > 0 and min(cfg.drain_row_cycles, cfg.drain_penalty_cycles,
                                          cfg.drain_fixed_cycles) >= 0,
           "drain_c0_bytes must be positive and the drain cycle parameters non-negative")
    if not cfg.allow_padding:
        for dim, value, least in (("M", cfg.M, cfg.min_m), ("N", cfg.N, cfg.min_n), ("K", cfg.K, cfg.min_k)):
            _check(value >= least, f"allow_padding=false but {dim}={value} is below the cube minimum tile "
                                   f"dimension {least}")
    a_budget, b_budget, acc_budget = _budgets(cfg, _BASELINE)
    _check(boxed_m(cfg.min_m, cfg) <= a_budget // cfg.min_k,
           f"L0a capacity {a_budget} elements is too small for the minimum tile ({cfg.min_m} x {cfg.min_k})")
    _check(boxed_n(cfg.min_n, cfg) <= b_budget // cfg.min_k,
           f"L0b capacity {b_budget} elements is too small for the minimum tile ({cfg.min_k} x {cfg.min_n})")
    _check(acc_elements(cfg.min_m, cfg.min_n, cfg) <= acc_budget,
           f"L0c capacity {acc_budget} elements is too small for the minimum tile ({cfg.min_m} x {cfg.min_n})")


@lru_cache(maxsize=256)
def choose_l0_tile(config: L0TileConfig) -> L0TileResult:
    """The minimum-wall design point for ``config``; UserError (a ValueError) if the config is invalid or no
    tile is legal (e.g. a K that is not a multiple of ``align_k`` and has no aligned divisor)."""
    _validate(config)
    best = _best_in(config, _BASELINE)
    _check(best is not None, f"no legal (m, n, k) tile for M={config.M}, N={config.N}, K={config.K}: no aligned "
                             f"k of at least min_k={config.min_k} fits (K must be a multiple of align_k="
                             f"{config.align_k} or have such a divisor)")
    assert best is not None
    if (best.m, best.n, best.k) != (config.M, config.N, config.K):  # a matmul that fits L0 stays whole
        least = acc_elements(config.min_m, config.min_n, config)
        for r in _regimes(config):
            if _budgets(config, r)[2] < least:
                continue
            c = _best_in(config, r)
            if c is not None and c.wall < best.wall:
                best = c
    return _result(best, config)


def _result(c: _Candidate, cfg: L0TileConfig) -> L0TileResult:
    hint = ""
    if cfg.M < cfg.min_m or cfg.N < cfg.min_n or cfg.K < cfg.min_k:
        hint = (f"Matmul shape (M={cfg.M}, N={cfg.N}, K={cfg.K}) is below the cube minimum tile dimension "
                f"{cfg.min_m}; tile shape padded up to ({c.m}, {c.n}, {c.k}). Consider reshaping or fusing with "
                "adjacent ops to amortise the padding.")
    return L0TileResult(m=c.m, n=c.n, k=c.k, estimated_traffic_bytes=traffic_bytes(c.m, c.n, c.k, cfg,
                                                                                  c.regime.stationarity),
                        estimated_cost_cycles=c.wall, padded_compute_volume=padded_volume(c.m, c.n, c.k, cfg),
                        stationarity=c.regime.stationarity, os_holds_a=os_holds_a(c.m, c.n, cfg),
                        double_buffer_c=c.regime.double_buffer_c, perf_hint=hint)


__all__ = ["L0TileConfig", "L0TileResult", "Stationarity", "backend_config", "choose_l0_tile"]
