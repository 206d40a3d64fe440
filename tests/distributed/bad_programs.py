"""Programs that must be rejected, each with a located error (line numbers are asserted by the tests)."""

from __future__ import annotations

import pypto.language as pl
import pypto.language.distributed as pld

W = 32


@pl.jit.incore
def notify_plain(x: pl.Tensor[[1, W], pl.FP32], y: pl.Out[pl.Tensor[[1, W], pl.FP32]],
                 flag: pl.Tensor[[1, 1], pl.INT32]):
    pld.system.notify(flag, peer=0, offsets=[0, 0], value=1, op=pld.NotifyOp.Set)  # NOTIFY_PLAIN_LINE
    t = pl.load(x, [0, 0], [1, W])
    y = pl.store(t, [0, 0], y)
    return y


@pl.jit
def chip_notify_plain(x: pl.Tensor[[1, W], pl.FP32], y: pl.Out[pl.Tensor[[1, W], pl.FP32]],
                      flag: pl.Tensor[[1, 1], pl.INT32]):
    return notify_plain(x, y, flag)


@pl.jit.host
def host_notify_plain(x: pl.Tensor[[2, 1, W], pl.FP32], y: pl.Out[pl.Tensor[[2, 1, W], pl.FP32]],
                      flags: pl.Tensor[[2, 1, 1], pl.INT32]):
    for r in pl.range(pld.world_size()):
        chip_notify_plain(x[r], y[r], flags[r], device=r)


@pl.jit.incore
def uses_defer_wait(x: pl.Tensor[[1, W], pl.FP32], y: pl.Out[pl.Tensor[[1, W], pl.FP32]],
                   data: pld.DistributedTensor[[1, W], pl.FP32]):
    pld.system.defer_wait(data, offsets=[0, 0], expected=1)  # COLLECTIVE_LINE
    t = pl.load(data, [0, 0], [1, W])
    y = pl.store(t, [0, 0], y)
    return y


@pl.jit.incore
def uses_allreduce_max(x: pl.Tensor[[1, W], pl.FP32], y: pl.Out[pl.Tensor[[1, W], pl.FP32]],
                       data: pld.DistributedTensor[[1, W], pl.FP32], sig: pld.DistributedTensor[[2, 1], pl.INT32]):
    data = pld.tensor.allreduce(data, sig, op=pld.ReduceOp.Max, mode="ring")  # ALLREDUCE_RING_LINE
    t = pl.load(data, [0, 0], [1, W])
    y = pl.store(t, [0, 0], y)
    return y


@pl.jit
def chip_allreduce_max(x: pl.Tensor[[1, W], pl.FP32], y: pl.Out[pl.Tensor[[1, W], pl.FP32]],
                       data: pld.DistributedTensor[[1, W], pl.FP32], sig: pld.DistributedTensor[[2, 1], pl.INT32]):
    return uses_allreduce_max(x, y, data, sig)


@pl.jit.host
def host_allreduce_max(x: pl.Tensor[[2, 1, W], pl.FP32], y: pl.Out[pl.Tensor[[2, 1, W], pl.FP32]]):
    buf = pld.alloc_window_buffer([1, W], dtype=pl.FP32)
    sig = pld.alloc_window_buffer([2, 1], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        chip_allreduce_max(x[r], y[r], pld.window(buf, [1, W], dtype=pl.FP32),
                           pld.window(sig, [2, 1], dtype=pl.INT32), device=r)


@pl.jit
def chip_allreduce(x: pl.Tensor[[1, W], pl.FP32], y: pl.Out[pl.Tensor[[1, W], pl.FP32]],
                   data: pld.DistributedTensor[[1, W], pl.FP32]):
    return uses_defer_wait(x, y, data)


@pl.jit.host
def host_allreduce(x: pl.Tensor[[2, 1, W], pl.FP32], y: pl.Out[pl.Tensor[[2, 1, W], pl.FP32]]):
    buf = pld.alloc_window_buffer([1, W], dtype=pl.FP32)
    for r in pl.range(pld.world_size()):
        chip_allreduce(x[r], y[r], pld.window(buf, [1, W], dtype=pl.FP32), device=r)


@pl.jit.incore
def copy_row(x: pl.Tensor[[1, W], pl.FP32], y: pl.Out[pl.Tensor[[1, W], pl.FP32]]):
    t = pl.load(x, [0, 0], [1, W])
    y = pl.store(t, [0, 0], y)
    return y


@pl.jit
def chip_copy(x: pl.Tensor[[1, W], pl.FP32], y: pl.Out[pl.Tensor[[1, W], pl.FP32]]):
    return copy_row(x, y)


@pl.jit.host
def host_two_fixed(x: pl.Tensor[[2, 1, W], pl.FP32], y: pl.Out[pl.Tensor[[2, 1, W], pl.FP32]]):
    for r in pl.range(2):
        chip_copy(x[r], y[r], device=r)


@pl.jit.host
def host_while(x: pl.Tensor[[2, 1, W], pl.FP32], y: pl.Out[pl.Tensor[[2, 1, W], pl.FP32]]):
    r = 0
    while r < 2:  # WHILE_LINE
        chip_copy(x[r], y[r], device=r)
        r = r + 1


@pl.jit.incore
def wait_forever(x: pl.Tensor[[1, W], pl.FP32], y: pl.Out[pl.Tensor[[1, W], pl.FP32]],
                 flag: pld.DistributedTensor[[1, 1], pl.INT32]):
    pld.system.wait(flag, offsets=[0, 0], expected=5, cmp=pld.WaitCmp.Eq)  # nobody notifies
    t = pl.load(x, [0, 0], [1, W])
    y = pl.store(t, [0, 0], y)
    return y


@pl.jit
def chip_wait_forever(x: pl.Tensor[[1, W], pl.FP32], y: pl.Out[pl.Tensor[[1, W], pl.FP32]],
                      flag: pld.DistributedTensor[[1, 1], pl.INT32]):
    return wait_forever(x, y, flag)


@pl.jit.host
def host_wait_forever(x: pl.Tensor[[2, 1, W], pl.FP32], y: pl.Out[pl.Tensor[[2, 1, W], pl.FP32]]):
    buf = pld.alloc_window_buffer([1, 1], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        chip_wait_forever(x[r], y[r], pld.window(buf, [1, 1], dtype=pl.INT32), device=r)
