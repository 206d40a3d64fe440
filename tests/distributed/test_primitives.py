"""Each primitive on 2 and 4 forked ranks against a numpy model (our own programs, dist_programs.py)."""

from __future__ import annotations

import dist_programs as dp
import numpy as np
import pytest

from pypto.ir.distributed_compiled_program import DistributedConfig
from pypto.runtime import RunConfig

RANKS = [2, 4]


@pytest.fixture(autouse=True)
def _build_dir(monkeypatch, tmp_path):
    monkeypatch.setenv("PYPTO_PROG_BUILD_DIR", str(tmp_path / "build_output"))


def _cfg(n: int) -> RunConfig:
    return RunConfig(platform="a2a3sim", distributed_config=DistributedConfig(device_ids=list(range(n))))


def _rows(n: int, seed: int):
    import torch
    return torch.from_numpy(np.random.default_rng(seed).standard_normal((n, 1, dp.W)).astype(np.float32))


@pytest.mark.parametrize("n", RANKS)
def test_rank_scalar_reaches_every_rank(n, torch):
    x, y = _rows(n, 1), torch.zeros(n, 1, dp.W)
    dp.host_scale(x, y, config=_cfg(n))
    expect = 3 * x.numpy() + np.arange(n, dtype=np.float32).reshape(n, 1, 1)
    np.testing.assert_allclose(y.numpy(), expect, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("n", RANKS)
def test_barrier_then_remote_load_pulls_two_ranks_ahead(n, torch):
    x, y = _rows(n, 2), torch.zeros(n, 1, dp.W)
    dp.host_pull(x, y, config=_cfg(n))
    expect = 2 * np.stack([x.numpy()[(r + 2) % n] for r in range(n)])
    np.testing.assert_allclose(y.numpy(), expect, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("n", RANKS)
def test_remote_store_and_notify_wait_push_to_the_previous_rank(n, torch):
    x, y = _rows(n, 3), torch.zeros(n, 1, dp.W)
    dp.host_push(x, y, config=_cfg(n))
    expect = np.stack([x.numpy()[(r + 1) % n] for r in range(n)])  # rank r receives from rank r + 1
    np.testing.assert_allclose(y.numpy(), expect, rtol=0, atol=0)


@pytest.mark.parametrize("n", RANKS)
def test_get_and_an_atomic_tally_read_back_with_pl_read(n, torch):
    x, y, count = _rows(n, 4), torch.zeros(n, 1, dp.W), torch.full((n, 1, 1), -7, dtype=torch.int32)
    dp.host_get(x, y, count, config=_cfg(n))
    np.testing.assert_array_equal(y.numpy(), np.stack([x.numpy()[(r + 1) % n] for r in range(n)]))
    assert int(count[0, 0, 0]) == n - 1  # rank 0 waited for every other rank's AtomicAdd
    assert [int(c) for c in count[1:, 0, 0]] == [0] * (n - 1)  # the others read their own, never-notified cell


@pytest.mark.parametrize("n", RANKS)
def test_allreduce_sum_and_broadcast_from_rank_one(n, torch):
    x, both = _rows(n, 6), torch.zeros(n, 2, dp.W)
    dp.host_collectives(x, both, config=_cfg(n))
    s = x.numpy()[:, 0, :].sum(axis=0)
    np.testing.assert_allclose(both.numpy()[:, 0, :], np.stack([s] * n), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(both.numpy()[:, 1, :], np.stack([10 * x.numpy()[1, 0]] * n), rtol=1e-6, atol=1e-6)


def test_allgather_gives_every_rank_every_row(torch):
    x, y = _rows(dp.G, 7), torch.zeros(dp.G, dp.G, dp.W)
    dp.host_gather(x, y, config=_cfg(dp.G))
    np.testing.assert_array_equal(y.numpy(), np.stack([x.numpy()[:, 0, :]] * dp.G))


@pytest.mark.parametrize("n", RANKS)
def test_put_then_notify_wait_delivers_to_the_next_rank(n, torch):
    x, y = _rows(n, 8), torch.zeros(n, 1, dp.W)
    dp.host_put(x, y, config=_cfg(n))
    np.testing.assert_allclose(y.numpy(), 2 * np.stack([x.numpy()[(r - 1) % n] for r in range(n)]), rtol=1e-6)


@pytest.mark.parametrize("n", RANKS)
def test_a_tile_living_across_a_comm_op_is_spilled_through_gm(n, torch):
    x, y = _rows(n, 9), torch.zeros(n, 1, dp.W)
    dp.host_keep(x, y, config=_cfg(n))
    expect = np.stack([2 * x.numpy()[r] + x.numpy()[(r + 1) % n] for r in range(n)])
    np.testing.assert_allclose(y.numpy(), expect, rtol=1e-6, atol=1e-6)


def test_a_constant_trip_loop_of_tile_code_and_comm_ops_is_unrolled(torch):
    x, y = _rows(dp.G, 10), torch.zeros(dp.G, 1, dp.W)
    dp.host_ring_sum(x, y, config=_cfg(dp.G))
    np.testing.assert_allclose(y.numpy(), np.stack([x.numpy().sum(axis=0)] * dp.G), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("n", RANKS)
def test_allreduce_max_and_prod(n, torch):
    x, both = _rows(n, 11), torch.zeros(n, 2, dp.W)
    dp.host_max_prod(x, both, config=_cfg(n))
    rows = x.numpy()[:, 0, :]
    np.testing.assert_allclose(both.numpy()[:, 0, :], np.stack([rows.max(axis=0)] * n), rtol=0, atol=0)
    np.testing.assert_allclose(both.numpy()[:, 1, :], np.stack([rows.prod(axis=0)] * n), rtol=1e-5, atol=1e-6)


def test_reduce_scatter_and_all_to_all(torch):
    g = dp.G
    x = torch.from_numpy(np.random.default_rng(12).standard_normal((g, g, dp.W)).astype(np.float32))
    mine, swapped = torch.zeros(g, g, dp.W), torch.zeros(g, g, dp.W)
    dp.host_scatter(x, mine, swapped, config=_cfg(g))
    xs = x.numpy()
    for r in range(g):  # row r of rank r is the sum over ranks of their row r; other rows stay as staged
        np.testing.assert_allclose(mine.numpy()[r, r], xs[:, r].sum(axis=0), rtol=1e-5, atol=1e-5)
        # all_to_all: rank r's row src holds rank src's row r
        np.testing.assert_array_equal(swapped.numpy()[r], np.stack([xs[src, r] for src in range(g)]))


def test_an_if_mixing_a_comm_op_and_tile_code_is_split(torch):
    x, y = _rows(dp.G, 12), torch.zeros(dp.G, 1, dp.W)
    compiled = dp.host_sum_others.compile(x, y, config=_cfg(dp.G))
    params, outs, _ = compiled._get_metadata()  # upstream's metadata triple, as pypto-lib's harness reads it
    assert [p.name for p in params] == ["x", "y"] and outs == [1]
    compiled(x, y, config=_cfg(dp.G))
    np.testing.assert_allclose(y.numpy(), np.stack([x.numpy().sum(axis=0)] * dp.G), rtol=1e-5, atol=1e-5)
