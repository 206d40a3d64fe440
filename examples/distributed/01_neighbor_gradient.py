"""Distributed: a central difference across ranks, y[r] = (x[r+1] - x[r-1]) / 2 on a ring of ranks.

    python examples/distributed/01_neighbor_gradient.py [a2a3sim|a5sim]

Three levels: ``gradient`` (``@pl.jit.host``) allocates two window buffers and dispatches one
``per_chip`` per rank (``device=r``, each with its row ``x[r]``); ``per_chip`` (``@pl.jit``) calls
the kernel ``central_difference`` (``@pl.jit.incore``). The kernel stages its row in its window,
meets every rank at ``pld.tensor.barrier``, then pulls both neighbours' rows with
``pld.tile.remote_load``. The rank count is ``pl.dynamic("RANKS")``: the same source, and the same
chip build, runs on 2 and on 4 ranks (each rank is a forked process on this host).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _common import check, platform_from_argv, rand  # noqa: E402

import pypto.language as pl  # noqa: E402
import pypto.language.distributed as pld  # noqa: E402
from pypto.ir.distributed_compiled_program import DistributedConfig  # noqa: E402
from pypto.runtime import RunConfig  # noqa: E402

COLS = 64
RANKS = pl.dynamic("RANKS")
# sample inputs of the chip program for tools that compile it on its own (`pypto compile FILE::per_chip`)
SHAPES = {"per_chip": {"x": f"1x{COLS}:f32", "y": f"1x{COLS}:f32", "row": f"1x{COLS}:f32", "sig": "2x1:i32"}}


@pl.jit.incore
def central_difference(x: pl.Tensor[[1, COLS], pl.FP32], y: pl.Out[pl.Tensor[[1, COLS], pl.FP32]],
                       row: pld.DistributedTensor[[1, COLS], pl.FP32],
                       sig: pld.DistributedTensor[[RANKS, 1], pl.INT32]):
    ctx = pld.get_comm_ctx(row)
    me = pld.rank(ctx)
    n = pld.nranks(ctx)
    mine = pl.load(x, [0, 0], [1, COLS])
    row = pl.store(mine, [0, 0], row)          # publish this rank's row in its window
    sig = pld.tensor.barrier(sig)              # every row is published before anyone reads
    right = pld.tile.remote_load(row, peer=(me + 1) % n, offsets=[0, 0], shape=[1, COLS])
    left = pld.tile.remote_load(row, peer=(me + n - 1) % n, offsets=[0, 0], shape=[1, COLS])
    diff = pl.sub(right, left)
    y = pl.store(pl.mul(diff, 0.5), [0, 0], y)
    return y


@pl.jit
def per_chip(x: pl.Tensor[[1, COLS], pl.FP32], y: pl.Out[pl.Tensor[[1, COLS], pl.FP32]],
             row: pld.DistributedTensor[[1, COLS], pl.FP32], sig: pld.DistributedTensor[[RANKS, 1], pl.INT32]):
    return central_difference(x, y, row, sig)


@pl.jit.host
def gradient(x: pl.Tensor[[RANKS, 1, COLS], pl.FP32], y: pl.Out[pl.Tensor[[RANKS, 1, COLS], pl.FP32]]):
    row_buf = pld.alloc_window_buffer([1, COLS], dtype=pl.FP32)
    sig_buf = pld.alloc_window_buffer([pld.world_size(), 1], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        row = pld.window(row_buf, [1, COLS], dtype=pl.FP32)
        sig = pld.window(sig_buf, [pld.world_size(), 1], dtype=pl.INT32)
        per_chip(x[r], y[r], row, sig, device=r)


def golden(x: np.ndarray) -> np.ndarray:
    return (np.roll(x, -1, axis=0) - np.roll(x, 1, axis=0)) / 2


def main(platform: str) -> None:
    for n in (2, 4):
        cfg = RunConfig(platform=platform, distributed_config=DistributedConfig(device_ids=list(range(n))))
        x = rand(n, 1, COLS, seed=n)
        y = np.zeros((n, 1, COLS), np.float32)
        t0 = time.perf_counter()
        compiled = gradient.compile(x, y, config=cfg)
        t1 = time.perf_counter()
        compiled(x, y)
        t2 = time.perf_counter()
        print(f"{n} ranks: compile {1000 * (t1 - t0):.0f} ms, run {1000 * (t2 - t1):.0f} ms "
              f"(artifacts in {compiled.output_dir})")
        check(f"neighbor_gradient ({n} ranks) on {platform}", y, golden(x), rtol=1e-6, atol=1e-6)


if __name__ == "__main__":
    main(platform_from_argv())
