"""The L0 tile chooser returns upstream PyPTO's design points (cases taken from upstream's unit and system
tests: inputs and expected tiles), never breaks capacity, and is the global optimum of its own cost model."""

from __future__ import annotations

import itertools
from dataclasses import replace

import pytest

from pypto.errors import UserError
from pypto.ir.dtypes import DataType
from pypto.ir.options import BackendType
from pypto.passes import l0_tile_chooser as L
from pypto.passes.l0_tile_chooser import L0TileConfig, Stationarity, choose_l0_tile

OS, AS, BS = Stationarity.OutputStationary, Stationarity.AStationary, Stationarity.BStationary
KIB = 1024


def cfg910(m: int, n: int, k: int, **kw: object) -> L0TileConfig:
    """910B capacities, BF16 x BF16 -> FP32, all gates closed."""
    return replace(L0TileConfig(M=m, N=n, K=k, l0a_bytes=64 * KIB, l0b_bytes=64 * KIB, l0c_bytes=128 * KIB), **kw)


def tile(c: L0TileConfig) -> tuple[int, int, int]:
    r = choose_l0_tile(c)
    return r.m, r.n, r.k


def fits(r: L.L0TileResult, c: L0TileConfig) -> bool:
    a_depth = 1 if r.stationarity is AS else 2
    b_depth = 1 if r.stationarity is BS else 2
    acc = c.l0c_bytes // (c.bytes_c * (2 if r.double_buffer_c else 1))
    return (L.boxed_m(r.m, c) * r.k * c.bytes_a * a_depth <= c.l0a_bytes
            and L.boxed_n(r.n, c) * r.k * c.bytes_b * b_depth <= c.l0b_bytes
            and L.acc_elements(r.m, r.n, c) <= acc)


@pytest.mark.parametrize(("shape", "kw", "want"), [
    ((16, 256, 512), {}, (16, 256, 64)),  # one drain beats holding the full K
    ((4096, 4096, 4096), {}, (128, 256, 64)),  # per-row drain: wide n, small m
    ((4096, 4096, 4096), {"allow_double_buffer_c": True}, (128, 256, 64)),  # compute-bound: dbC declined
    ((4096, 4096, 4096), {"c_read": True}, (128, 256, 64)),
    ((128, 128, 192), {}, (128, 128, 96)),  # not the largest k: 96 divides K
    ((256, 256, 64), {}, (128, 256, 64)),
    ((272, 272, 64), {}, (144, 128, 64)),
    ((320, 320, 64), {}, (160, 128, 64)),
    ((256, 256, 256), {"bytes_a": 4, "bytes_b": 4}, (128, 256, 32)),
    ((16, 16, 64), {"bytes_a": 1, "bytes_b": 1, "allow_k_boundary": True, "l0a_bytes": 2048, "box_align_m": 32},
     (16, 16, 32)),
    ((16, 16, 64), {"bytes_a": 1, "bytes_b": 1, "allow_k_boundary": True, "l0b_bytes": 2048, "box_align_n": 32},
     (16, 16, 32)),
])
def test_upstream_pinned_tiles(shape: tuple[int, int, int], kw: dict, want: tuple[int, int, int]) -> None:
    c = cfg910(*shape, **kw)
    r = choose_l0_tile(c)
    assert (r.m, r.n, r.k) == want and fits(r, c) and r.perf_hint == ""
    assert r.double_buffer_c is False


@pytest.mark.parametrize(("m", "n", "want", "rows_outer"), [(16, 256, (16, 128, 128), True),
                                                            (256, 16, (128, 16, 128), False)])
def test_double_buffered_acc_on_a_one_dimensional_grid(m: int, n: int, want: tuple, rows_outer: bool) -> None:
    r = choose_l0_tile(cfg910(m, n, 128, allow_double_buffer_c=True))
    assert ((r.m, r.n, r.k), r.stationarity, r.os_holds_a, r.double_buffer_c) == (want, OS, rows_outer, True)


@pytest.mark.parametrize(("m", "n", "axis"), [(16, 192, "n"), (192, 16, "m")])
def test_a_peeled_tail_is_not_a_second_accumulator_stage(m: int, n: int, axis: str) -> None:
    kw = {"min_n": 128, "align_n": 128} if axis == "n" else {"min_m": 128, "align_m": 128}
    r = choose_l0_tile(cfg910(m, n, 128, allow_double_buffer_c=True, **kw))
    assert (r.m, r.n, r.k) == ((16, 128, 128) if axis == "n" else (128, 16, 128))
    assert r.double_buffer_c is False


def test_double_buffered_acc_when_the_drain_dominates() -> None:
    c = cfg910(512, 512, 64, allow_double_buffer_c=True)
    r = choose_l0_tile(c)
    assert r.double_buffer_c and r.k == 64 and fits(r, c)
    assert (512 // r.n if r.os_holds_a else 512 // r.m) >= 2
    assert choose_l0_tile(replace(c, allow_double_buffer_c=False)).double_buffer_c is False


def test_k_divides_k_without_a_peel() -> None:
    c = cfg910(16, 320, 128)  # B caps k at 48, which does not divide 128
    r = choose_l0_tile(c)
    assert 128 % r.k == 0 and fits(r, c)


def test_int32_accumulator_rows_are_charged_physically() -> None:
    i8 = {"bytes_a": 1, "bytes_b": 1}
    assert tile(cfg910(16, 1024, 128, l0c_align_m=32, **i8))[:2] == (16, 1024)
    assert tile(cfg910(16, 1152, 128, **i8))[:2] == (16, 1152)
    c = cfg910(16, 1152, 128, l0c_align_m=32, **i8)
    r = choose_l0_tile(c)
    assert r.n < 1152 and fits(r, c)


def test_boxed_output_is_charged_before_selection() -> None:
    c = cfg910(656, 80, 768, bytes_a=1, bytes_b=1, l0c_align_m=32, box_align_m=16, box_align_n=32,
               allow_k_boundary=True)
    r = choose_l0_tile(c)
    assert (r.m, r.n, r.k) != (336, 80, 96) and fits(r, c)


@pytest.mark.parametrize("shape", [(16, 16, 16), (32, 32, 32), (256, 256, 256), (1024, 1024, 1024),
                                   (16, 512, 2048), (512, 16, 2048), (256, 4096, 64), (64, 64, 64)])
def test_results_are_aligned_legal_divisors(shape: tuple[int, int, int]) -> None:
    c = cfg910(*shape)
    r = choose_l0_tile(c)
    assert all(v >= 16 and v % 16 == 0 for v in (r.m, r.n, r.k)) and fits(r, c) and c.K % r.k == 0


def test_operand_stationary_needs_its_gate_and_full_k() -> None:
    assert choose_l0_tile(cfg910(256, 256, 256)).stationarity is OS
    c = cfg910(256, 256, 256, allow_a_stationary=True, allow_b_stationary=True, allow_double_buffer_c=True)
    r = choose_l0_tile(c)
    assert r.stationarity is BS and r.k == 256 and fits(r, c)
    # B is loaded once, A once per column of tiles
    assert r.estimated_traffic_bytes == 2 * 256 * 256 * (256 // r.n) + 2 * 256 * 256 + 4 * 256 * 256


def test_full_k_output_stationary_traffic_follows_the_held_operand() -> None:
    r = choose_l0_tile(cfg910(512, 512, 64))
    assert r.stationarity is OS and r.k == 64
    held_a = 2 * 512 * 64 + 2 * 64 * 512 * (512 // r.m)
    held_b = 2 * 512 * 64 * (512 // r.n) + 2 * 64 * 512
    assert r.estimated_traffic_bytes == (held_a if r.os_holds_a else held_b) + 4 * 512 * 512


def test_c_read_counts_the_accumulator_twice() -> None:
    c = cfg910(4096, 4096, 4096)
    assert (choose_l0_tile(replace(c, c_read=True)).estimated_traffic_bytes
            == choose_l0_tile(c).estimated_traffic_bytes + 4 * 4096 * 4096)


def test_n_caps() -> None:
    assert choose_l0_tile(cfg910(256, 1024, 128, max_n=64)).n <= 64
    caps = {"max_n_pipelined": 128, "max_n_nested_pipelined": 64}
    r = choose_l0_tile(cfg910(256, 256, 64, allow_b_stationary=True, max_n=256, bw_a=1000.0, bw_b=1.0, **caps))
    assert (r.stationarity, r.n) == (BS, 256)  # one B slot: only max_n applies
    r = choose_l0_tile(cfg910(512, 1024, 128, l0b_bytes=128 * KIB, allow_a_stationary=True,
                              allow_double_buffer_c=True, max_n=256, max_n_pipelined=32, max_n_nested_pipelined=16,
                              bw_a=1.0, bw_b=1000.0))
    assert r.stationarity is AS and r.n <= 32
    r = choose_l0_tile(cfg910(128, 512, 16, max_n=512, bw_a=1000.0, bw_b=1.0, **caps))
    assert (r.stationarity, r.os_holds_a) == (OS, False) and r.n <= 128
    r = choose_l0_tile(cfg910(256, 256, 16, max_n=256, bw_a=1.0, bw_b=1000.0, **caps))
    assert (r.stationarity, r.os_holds_a) == (OS, True) and r.n <= 64


def test_padding_pads_small_dims_and_says_so() -> None:
    c = cfg910(7, 256, 512, allow_padding=True)
    r = choose_l0_tile(c)
    assert r.m == 16 and fits(r, c) and "below the cube minimum" in r.perf_hint


@pytest.mark.parametrize(("c", "match"), [
    (cfg910(7, 256, 512), "allow_padding=false but M=7"),
    (cfg910(0, 128, 128), "M, N, K must all be positive"),
    (cfg910(128, -1, 128), "M, N, K must all be positive"),
    (cfg910(128, 128, 128, max_n=8), r"max_n must be zero .* or at least min_n"),
    (cfg910(64, 64, 50, allow_k_boundary=True), "no legal"),  # K not 16-aligned: no whole-K block, no peel
    (cfg910(16, 320, 130), "no legal"),
    (cfg910(16, 320, 130, allow_k_boundary=True), "no legal"),
    (cfg910(64, 64, 64, bw_a=0.0), "bandwidths"),
    (cfg910(64, 64, 64, l0c_bytes=512), "L0c capacity"),
])
def test_invalid_configs_raise_value_errors(c: L0TileConfig, match: str) -> None:
    with pytest.raises(UserError, match=match) as e:
        choose_l0_tile(c)
    assert isinstance(e.value, ValueError)


# --- upstream's system tests: the calibrated 910B configuration AutoTileMatmulL0 uses ------------------

def st_cfg(m: int, k: int, n: int, nbytes: int, dbc: bool) -> L0TileConfig:
    return cfg910(m, n, k, bytes_a=nbytes, bytes_b=nbytes, allow_a_stationary=True, allow_b_stationary=True,
                  allow_double_buffer_c=dbc, allow_k_boundary=True)


@pytest.mark.parametrize("dbc", [False, True])
@pytest.mark.parametrize(("m", "k", "n", "k_tile"), [(16, 128, 128, 64), (64, 192, 128, 64), (64, 384, 256, 32),
                                                    (128, 384, 64, 64)])
def test_system_test_fp32_k_splits(m: int, k: int, n: int, k_tile: int, dbc: bool) -> None:
    r = choose_l0_tile(st_cfg(m, k, n, 4, dbc))
    assert ((r.m, r.n, r.k), r.stationarity, r.double_buffer_c) == ((m, n, k_tile), OS, False)


@pytest.mark.parametrize(("m", "k", "n", "dbc", "want", "stat"), [
    (256, 128, 544, False, (256, 128, 128), AS), (48, 352, 96, True, (48, 32, 352), AS),
    (192, 64, 512, False, (64, 512, 64), BS), (64, 80, 256, True, (32, 256, 80), BS),
])
def test_system_test_operand_stationary(m: int, k: int, n: int, dbc: bool, want: tuple, stat: Stationarity) -> None:
    r = choose_l0_tile(st_cfg(m, k, n, 2, dbc))
    assert ((r.m, r.n, r.k), r.stationarity, r.double_buffer_c) == (want, stat, dbc)


def test_backend_config_910b_is_the_default_calibration() -> None:
    c = L.backend_config(BackendType.Ascend910B, 64, 64, 64, dtype_a=DataType.BF16, dtype_b=DataType.BF16,
                         dtype_c=DataType.FP32)
    assert c == cfg910(64, 64, 64)
    assert L.backend_config(BackendType.Ascend910B, 64, 64, 64, dtype_a=DataType.INT8, dtype_b=DataType.INT8,
                            dtype_c=DataType.INT32).l0c_align_m == 32
    a5 = L.backend_config(BackendType.Ascend950, 64, 64, 64, dtype_a=DataType.FP32, dtype_b=DataType.FP32,
                          dtype_c=DataType.FP32)
    assert (a5.l0c_bytes, a5.mad_fp32_passes, a5.bw_drain) == (256 * KIB, 8, 30.0)


# --- the search is exhaustive: a brute force over every point of the cost model ------------------------

def brute_force(c: L0TileConfig) -> tuple[tuple[int, int, int], Stationarity, bool, int]:
    def best(stat: Stationarity, dbc: bool) -> tuple | None:
        r = L._Regime(stat, dbc)
        a, b, acc = L._budgets(c, r)
        found = None
        for m, n, k in itertools.product(range(16, c.M + 1, 16), range(16, c.N + 1, 16), range(16, c.K + 1, 16)):
            if (m * k > a or n * k > b or m * n > acc or (r.full_k_only and k != c.K)
                    or (not c.allow_k_boundary and c.K % k)):
                continue
            inner = c.N // n if (stat is AS or (stat is OS and L.os_holds_a(m, n, c))) else c.M // m
            if dbc and inner < 2:
                continue
            key = L._score(m, n, k, c, r).key
            if found is None or key < found[0]:
                found = (key, (m, n, k), stat, dbc)
        return found

    base = best(OS, False)
    assert base is not None
    if base[1] != (c.M, c.N, c.K):
        for stat, dbc in itertools.product((OS, AS, BS), (False, True)):
            gated = {AS: c.allow_a_stationary, BS: c.allow_b_stationary, OS: True}[stat]
            if gated and (not dbc or c.allow_double_buffer_c) and (stat, dbc) != (OS, False):
                cand = best(stat, dbc)
                if cand is not None and cand[0][0] < base[0][0]:
                    base = cand
    return base[1], base[2], base[3], base[0][0]


ALL_GATES = {"allow_a_stationary": True, "allow_b_stationary": True, "allow_double_buffer_c": True}


@pytest.mark.parametrize("shape", [(256, 256, 256), (512, 128, 1024), (240, 240, 480), (400, 112, 256),
                                   (1024, 64, 512), (272, 160, 384), (512, 512, 64), (256, 256, 32), (768, 768, 48)])
@pytest.mark.parametrize("nbytes", [(2, 2), (2, 1), (1, 2)])
@pytest.mark.parametrize("gates", [{}, {"allow_double_buffer_c": True}, {"allow_a_stationary": True},
                                   {"allow_b_stationary": True}, ALL_GATES, {"allow_k_boundary": True},
                                   {"allow_k_boundary": True, **ALL_GATES}])
def test_choice_is_the_global_optimum(shape: tuple[int, int, int], nbytes: tuple[int, int], gates: dict) -> None:
    c = cfg910(shape[0], shape[1], shape[2], bytes_a=nbytes[0], bytes_b=nbytes[1], **gates)
    r = choose_l0_tile(c)
    want, stat, dbc, wall = brute_force(c)
    assert ((r.m, r.n, r.k), r.stationarity, r.double_buffer_c, r.estimated_cost_cycles) == (want, stat, dbc, wall)
    assert fits(r, c)


@pytest.mark.parametrize("shape", [(16, 320, 128), (16, 320, 144), (272, 160, 304), (256, 256, 240),
                                   (128, 512, 2064), (512, 512, 64)])
def test_k_peel_choice_is_the_global_optimum(shape: tuple[int, int, int]) -> None:
    c = cfg910(*shape, allow_k_boundary=True)
    r = choose_l0_tile(c)
    assert ((r.m, r.n, r.k), r.double_buffer_c) == brute_force(c)[0:3:2] and fits(r, c)


def test_the_k_peel_tail_is_charged_at_its_own_width() -> None:
    c = cfg910(128, 192, 688, allow_k_boundary=True)
    # 688 = 10 * 64 + 48: ten 4-fractal blocks and one 3-fractal tail, 11 block heads
    assert L.mad_cycles(128, 192, 64, c) == 11 * 21 + 8 * 43 * 12
    assert tile(c) == (128, 192, 64)  # load-bound tie with k=80, broken by the padded volume
