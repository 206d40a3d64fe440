"""Distributed test programs of our own: each primitive in a small ring/gather, written for any rank count."""

from __future__ import annotations

import pypto.language as pl
import pypto.language.distributed as pld

W = 32  # row width of every payload
NR = pl.dynamic("NR")


# -- rank scalar: y[r] = 3 * x[r] + r --------------------------------------------------------------
@pl.jit.incore
def scale_plus_rank(x: pl.Tensor[[1, W], pl.FP32], y: pl.Out[pl.Tensor[[1, W], pl.FP32]],
                    r: pl.Scalar[pl.INT32]):
    t = pl.load(x, [0, 0], [1, W])
    rf = pl.cast(r, target_type=pl.FP32)
    t3 = pl.mul(t, 3.0)
    y = pl.store(pl.add(t3, rf), [0, 0], y)
    return y


@pl.jit
def chip_scale(x: pl.Tensor[[1, W], pl.FP32], y: pl.Out[pl.Tensor[[1, W], pl.FP32]], r: pl.Scalar[pl.INT32]):
    return scale_plus_rank(x, y, r)


@pl.jit.host
def host_scale(x: pl.Tensor[[NR, 1, W], pl.FP32], y: pl.Out[pl.Tensor[[NR, 1, W], pl.FP32]]):
    for r in pl.range(pld.world_size()):
        chip_scale(x[r], y[r], r, device=r)


# -- barrier + remote_load: y[r] = x[(r + 2) % n] (a pull two ranks ahead) ----------------------------
@pl.jit.incore
def pull_two_ahead(x: pl.Tensor[[1, W], pl.FP32], y: pl.Out[pl.Tensor[[1, W], pl.FP32]],
                   box: pld.DistributedTensor[[1, W], pl.FP32], sig: pld.DistributedTensor[[NR, 1], pl.INT32]):
    ctx = pld.get_comm_ctx(box)
    me = pld.rank(ctx)
    n = pld.nranks(ctx)
    t = pl.load(x, [0, 0], [1, W])
    box = pl.store(t, [0, 0], box)
    sig = pld.tensor.barrier(sig)
    src = (me + 2) % n
    got = pld.tile.remote_load(box, peer=src, offsets=[0, 0], shape=[1, W])
    doubled = pl.add(got, got)
    y = pl.store(doubled, [0, 0], y)
    return y


@pl.jit
def chip_pull(x: pl.Tensor[[1, W], pl.FP32], y: pl.Out[pl.Tensor[[1, W], pl.FP32]],
              box: pld.DistributedTensor[[1, W], pl.FP32], sig: pld.DistributedTensor[[NR, 1], pl.INT32]):
    return pull_two_ahead(x, y, box, sig)


# -- remote_store + notify/wait: rank r pushes x[r] into rank (r - 1)'s inbox, then signals it -------------
@pl.jit.incore
def push_back(x: pl.Tensor[[1, W], pl.FP32], y: pl.Out[pl.Tensor[[1, W], pl.FP32]],
              inbox: pld.DistributedTensor[[1, W], pl.FP32], flag: pld.DistributedTensor[[1, 1], pl.INT32]):
    ctx = pld.get_comm_ctx(inbox)
    me = pld.rank(ctx)
    n = pld.nranks(ctx)
    t = pl.load(x, [0, 0], [1, W])
    to = (me + n - 1) % n
    pld.tile.remote_store(t, inbox, peer=to, offsets=[0, 0])
    pld.system.notify(flag, peer=to, offsets=[0, 0], value=1, op=pld.NotifyOp.Set)
    pld.system.wait(flag, offsets=[0, 0], expected=1, cmp=pld.WaitCmp.Eq)
    back = pl.load(inbox, [0, 0], [1, W])
    y = pl.store(back, [0, 0], y)
    return y


@pl.jit
def chip_push(x: pl.Tensor[[1, W], pl.FP32], y: pl.Out[pl.Tensor[[1, W], pl.FP32]],
              inbox: pld.DistributedTensor[[1, W], pl.FP32], flag: pld.DistributedTensor[[1, 1], pl.INT32]):
    return push_back(x, y, inbox, flag)


# -- get + atomic counter read back: y[r] = x[(r + 1) % n]; count[r] = n - 1 arrivals at rank 0 -------------
@pl.jit.incore
def get_and_count(x: pl.Tensor[[1, W], pl.FP32], y: pl.Out[pl.Tensor[[1, W], pl.FP32]],
                  count: pl.Out[pl.Tensor[[1, 1], pl.INT32]], src: pld.DistributedTensor[[1, W], pl.FP32],
                  dst: pld.DistributedTensor[[1, W], pl.FP32], sig: pld.DistributedTensor[[NR, 1], pl.INT32],
                  tally: pld.DistributedTensor[[1, 1], pl.INT32]):
    ctx = pld.get_comm_ctx(src)
    me = pld.rank(ctx)
    n = pld.nranks(ctx)
    t = pl.load(x, [0, 0], [1, W])
    src = pl.store(t, [0, 0], src)
    sig = pld.tensor.barrier(sig)
    pld.tensor.get(dst, peer=(me + 1) % n, src=src)
    if me != 0:
        pld.system.notify(tally, peer=0, offsets=[0, 0], value=1, op=pld.NotifyOp.AtomicAdd)
    if me == 0:
        pld.system.wait(tally, offsets=[0, 0], expected=n - 1, cmp=pld.WaitCmp.Ge)
    v = pl.read(tally, [0, 0])
    pl.write(count, [0, 0], v)
    got = pl.load(dst, [0, 0], [1, W])
    y = pl.store(got, [0, 0], y)
    return y


@pl.jit
def chip_get(x: pl.Tensor[[1, W], pl.FP32], y: pl.Out[pl.Tensor[[1, W], pl.FP32]],
             count: pl.Out[pl.Tensor[[1, 1], pl.INT32]], src: pld.DistributedTensor[[1, W], pl.FP32],
             dst: pld.DistributedTensor[[1, W], pl.FP32], sig: pld.DistributedTensor[[NR, 1], pl.INT32],
             tally: pld.DistributedTensor[[1, 1], pl.INT32]):
    return get_and_count(x, y, count, src, dst, sig, tally)


@pl.jit.host
def host_pull(x: pl.Tensor[[NR, 1, W], pl.FP32], y: pl.Out[pl.Tensor[[NR, 1, W], pl.FP32]]):
    box_buf = pld.alloc_window_buffer([1, W], dtype=pl.FP32)
    sig_buf = pld.alloc_window_buffer([pld.world_size(), 1], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        box = pld.window(box_buf, [1, W], dtype=pl.FP32)
        sig = pld.window(sig_buf, [pld.world_size(), 1], dtype=pl.INT32)
        chip_pull(x[r], y[r], box, sig, device=r)


@pl.jit.host
def host_push(x: pl.Tensor[[NR, 1, W], pl.FP32], y: pl.Out[pl.Tensor[[NR, 1, W], pl.FP32]]):
    inbox_buf = pld.alloc_window_buffer([1, W], dtype=pl.FP32)
    flag_buf = pld.alloc_window_buffer([1, 1], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        chip_push(x[r], y[r], pld.window(inbox_buf, [1, W], dtype=pl.FP32),
                  pld.window(flag_buf, [1, 1], dtype=pl.INT32), device=r)


@pl.jit.host
def host_get(x: pl.Tensor[[NR, 1, W], pl.FP32], y: pl.Out[pl.Tensor[[NR, 1, W], pl.FP32]],
             count: pl.Out[pl.Tensor[[NR, 1, 1], pl.INT32]]):
    src_buf = pld.alloc_window_buffer([1, W], dtype=pl.FP32)
    dst_buf = pld.alloc_window_buffer([1, W], dtype=pl.FP32)
    sig_buf = pld.alloc_window_buffer([pld.world_size(), 1], dtype=pl.INT32)
    tally_buf = pld.alloc_window_buffer([1, 1], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        src = pld.window(src_buf, [1, W], dtype=pl.FP32)
        dst = pld.window(dst_buf, [1, W], dtype=pl.FP32)
        sig = pld.window(sig_buf, [pld.world_size(), 1], dtype=pl.INT32)
        tally = pld.window(tally_buf, [1, 1], dtype=pl.INT32)
        chip_get(x[r], y[r], count[r], src, dst, sig, tally, device=r)


# -- composed collectives: allreduce (Sum) and broadcast from rank 1, into rows 0 and 1 of `both` ------------
@pl.jit.incore
def sum_and_broadcast(x: pl.Tensor[[1, W], pl.FP32], both: pl.Out[pl.Tensor[[2, W], pl.FP32]],
                      acc: pld.DistributedTensor[[1, W], pl.FP32], bc: pld.DistributedTensor[[1, W], pl.FP32],
                      sig: pld.DistributedTensor[[NR, 1], pl.INT32]):
    t = pl.load(x, [0, 0], [1, W])
    acc = pl.store(t, [0, 0], acc)
    bc = pl.store(pl.mul(t, 10.0), [0, 0], bc)
    acc = pld.tensor.allreduce(acc, sig, op=pld.ReduceOp.Sum)
    bc = pld.tensor.broadcast(bc, sig, root=1)
    s = pl.load(acc, [0, 0], [1, W])
    both = pl.store(s, [0, 0], both)
    b = pl.load(bc, [0, 0], [1, W])
    both = pl.store(b, [1, 0], both)
    return both


@pl.jit
def chip_collectives(x: pl.Tensor[[1, W], pl.FP32], both: pl.Out[pl.Tensor[[2, W], pl.FP32]],
                     acc: pld.DistributedTensor[[1, W], pl.FP32], bc: pld.DistributedTensor[[1, W], pl.FP32],
                     sig: pld.DistributedTensor[[NR, 1], pl.INT32]):
    return sum_and_broadcast(x, both, acc, bc, sig)


@pl.jit.host
def host_collectives(x: pl.Tensor[[NR, 1, W], pl.FP32], both: pl.Out[pl.Tensor[[NR, 2, W], pl.FP32]]):
    acc_buf = pld.alloc_window_buffer([1, W], dtype=pl.FP32)
    bc_buf = pld.alloc_window_buffer([1, W], dtype=pl.FP32)
    sig_buf = pld.alloc_window_buffer([pld.world_size(), 1], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        chip_collectives(x[r], both[r], pld.window(acc_buf, [1, W], dtype=pl.FP32),
                         pld.window(bc_buf, [1, W], dtype=pl.FP32),
                         pld.window(sig_buf, [pld.world_size(), 1], dtype=pl.INT32), device=r)


# -- allgather on a fixed 4-rank world: every rank ends with all 4 rows --------------------------------------
G = 4


@pl.jit.incore
def gather_rows(x: pl.Tensor[[1, W], pl.FP32], y: pl.Out[pl.Tensor[[G, W], pl.FP32]],
                stage: pld.DistributedTensor[[1, W], pl.FP32], rows: pld.DistributedTensor[[G, W], pl.FP32],
                sig: pld.DistributedTensor[[G, 1], pl.INT32]):
    t = pl.load(x, [0, 0], [1, W])
    stage = pl.store(t, [0, 0], stage)
    rows = pld.tensor.allgather(stage, rows, sig)
    all_rows = pl.load(rows, [0, 0], [G, W])
    y = pl.store(all_rows, [0, 0], y)
    return y


@pl.jit
def chip_gather(x: pl.Tensor[[1, W], pl.FP32], y: pl.Out[pl.Tensor[[G, W], pl.FP32]],
                stage: pld.DistributedTensor[[1, W], pl.FP32], rows: pld.DistributedTensor[[G, W], pl.FP32],
                sig: pld.DistributedTensor[[G, 1], pl.INT32]):
    return gather_rows(x, y, stage, rows, sig)


@pl.jit.host
def host_gather(x: pl.Tensor[[G, 1, W], pl.FP32], y: pl.Out[pl.Tensor[[G, G, W], pl.FP32]]):
    stage_buf = pld.alloc_window_buffer([1, W], dtype=pl.FP32)
    rows_buf = pld.alloc_window_buffer([G, W], dtype=pl.FP32)
    sig_buf = pld.alloc_window_buffer([G, 1], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        chip_gather(x[r], y[r], pld.window(stage_buf, [1, W], dtype=pl.FP32),
                    pld.window(rows_buf, [G, W], dtype=pl.FP32), pld.window(sig_buf, [G, 1], dtype=pl.INT32),
                    device=r)


# -- put + notify/wait (Ge): rank r puts 2 * x[r] into rank (r + 1)'s dst ------------------------------------
@pl.jit.incore
def put_doubled(x: pl.Tensor[[1, W], pl.FP32], y: pl.Out[pl.Tensor[[1, W], pl.FP32]],
                src: pld.DistributedTensor[[1, W], pl.FP32], dst: pld.DistributedTensor[[1, W], pl.FP32],
                flag: pld.DistributedTensor[[1, 1], pl.INT32]):
    ctx = pld.get_comm_ctx(src)
    nxt = (pld.rank(ctx) + 1) % pld.nranks(ctx)
    t = pl.load(x, [0, 0], [1, W])
    src = pl.store(pl.add(t, t), [0, 0], src)
    pld.tensor.put(dst, peer=nxt, src=src, atomic=pld.AtomicType.None_)
    pld.system.notify(flag, peer=nxt, offsets=[0, 0], value=1, op=pld.NotifyOp.AtomicAdd)
    pld.system.wait(flag, offsets=[0, 0], expected=1, cmp=pld.WaitCmp.Ge)
    got = pl.load(dst, [0, 0], [1, W])
    y = pl.store(got, [0, 0], y)
    return y


@pl.jit
def chip_put(x: pl.Tensor[[1, W], pl.FP32], y: pl.Out[pl.Tensor[[1, W], pl.FP32]],
             src: pld.DistributedTensor[[1, W], pl.FP32], dst: pld.DistributedTensor[[1, W], pl.FP32],
             flag: pld.DistributedTensor[[1, 1], pl.INT32]):
    return put_doubled(x, y, src, dst, flag)


@pl.jit.host
def host_put(x: pl.Tensor[[NR, 1, W], pl.FP32], y: pl.Out[pl.Tensor[[NR, 1, W], pl.FP32]]):
    src_buf = pld.alloc_window_buffer([1, W], dtype=pl.FP32)
    dst_buf = pld.alloc_window_buffer([1, W], dtype=pl.FP32)
    flag_buf = pld.alloc_window_buffer([1, 1], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        chip_put(x[r], y[r], pld.window(src_buf, [1, W], dtype=pl.FP32), pld.window(dst_buf, [1, W], dtype=pl.FP32),
                 pld.window(flag_buf, [1, 1], dtype=pl.INT32), device=r)


# -- a tile that lives across a comm op (spilled through GM): y[r] = 2 * x[r] + x[r + 1] ----------------------
@pl.jit.incore
def keep_across_barrier(x: pl.Tensor[[1, W], pl.FP32], y: pl.Out[pl.Tensor[[1, W], pl.FP32]],
                        box: pld.DistributedTensor[[1, W], pl.FP32], sig: pld.DistributedTensor[[NR, 1], pl.INT32]):
    ctx = pld.get_comm_ctx(box)
    t = pl.load(x, [0, 0], [1, W])
    twice = pl.mul(t, 2.0)
    box = pl.store(t, [0, 0], box)
    sig = pld.tensor.barrier(sig)
    nb = pld.tile.remote_load(box, peer=(pld.rank(ctx) + 1) % pld.nranks(ctx), offsets=[0, 0], shape=[1, W])
    y = pl.store(pl.add(twice, nb), [0, 0], y)
    return y


@pl.jit
def chip_keep(x: pl.Tensor[[1, W], pl.FP32], y: pl.Out[pl.Tensor[[1, W], pl.FP32]],
              box: pld.DistributedTensor[[1, W], pl.FP32], sig: pld.DistributedTensor[[NR, 1], pl.INT32]):
    return keep_across_barrier(x, y, box, sig)


@pl.jit.host
def host_keep(x: pl.Tensor[[NR, 1, W], pl.FP32], y: pl.Out[pl.Tensor[[NR, 1, W], pl.FP32]]):
    box_buf = pld.alloc_window_buffer([1, W], dtype=pl.FP32)
    sig_buf = pld.alloc_window_buffer([pld.world_size(), 1], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        chip_keep(x[r], y[r], pld.window(box_buf, [1, W], dtype=pl.FP32),
                  pld.window(sig_buf, [pld.world_size(), 1], dtype=pl.INT32), device=r)


# -- a constant-trip loop mixing tile code and comm ops (unrolled): ring sum on 4 ranks, y[r] = sum_p x[p] ----
@pl.jit.incore
def ring_sum(x: pl.Tensor[[1, W], pl.FP32], y: pl.Out[pl.Tensor[[1, W], pl.FP32]],
             box: pld.DistributedTensor[[1, W], pl.FP32], sig: pld.DistributedTensor[[G, 1], pl.INT32]):
    ctx = pld.get_comm_ctx(box)
    nxt = (pld.rank(ctx) + 1) % pld.nranks(ctx)
    acc = pl.load(x, [0, 0], [1, W])
    cur = pl.load(x, [0, 0], [1, W])
    for _step in pl.range(G - 1):
        box = pl.store(cur, [0, 0], box)
        sig = pld.tensor.barrier(sig)
        cur = pld.tile.remote_load(box, peer=nxt, offsets=[0, 0], shape=[1, W])
        sig = pld.tensor.barrier(sig)
        acc = pl.add(acc, cur)
    y = pl.store(acc, [0, 0], y)
    return y


@pl.jit
def chip_ring_sum(x: pl.Tensor[[1, W], pl.FP32], y: pl.Out[pl.Tensor[[1, W], pl.FP32]],
                  box: pld.DistributedTensor[[1, W], pl.FP32], sig: pld.DistributedTensor[[G, 1], pl.INT32]):
    return ring_sum(x, y, box, sig)


@pl.jit.host
def host_ring_sum(x: pl.Tensor[[G, 1, W], pl.FP32], y: pl.Out[pl.Tensor[[G, 1, W], pl.FP32]]):
    box_buf = pld.alloc_window_buffer([1, W], dtype=pl.FP32)
    sig_buf = pld.alloc_window_buffer([G, 1], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        chip_ring_sum(x[r], y[r], pld.window(box_buf, [1, W], dtype=pl.FP32),
                      pld.window(sig_buf, [G, 1], dtype=pl.INT32), device=r)


# -- allreduce Max / Prod, reduce_scatter and all_to_all (fixed 4-rank world for the row collectives) ----------
@pl.jit.incore
def max_and_prod(x: pl.Tensor[[1, W], pl.FP32], both: pl.Out[pl.Tensor[[2, W], pl.FP32]],
                 hi: pld.DistributedTensor[[1, W], pl.FP32], pr: pld.DistributedTensor[[1, W], pl.FP32],
                 sig: pld.DistributedTensor[[NR, 1], pl.INT32]):
    t = pl.load(x, [0, 0], [1, W])
    hi = pl.store(t, [0, 0], hi)
    pr = pl.store(t, [0, 0], pr)
    hi = pld.tensor.allreduce(hi, sig, op=pld.ReduceOp.Max)
    pr = pld.tensor.allreduce(pr, sig, op=pld.ReduceOp.Prod)
    both = pl.store(pl.load(hi, [0, 0], [1, W]), [0, 0], both)
    both = pl.store(pl.load(pr, [0, 0], [1, W]), [1, 0], both)
    return both


@pl.jit
def chip_max_prod(x: pl.Tensor[[1, W], pl.FP32], both: pl.Out[pl.Tensor[[2, W], pl.FP32]],
                  hi: pld.DistributedTensor[[1, W], pl.FP32], pr: pld.DistributedTensor[[1, W], pl.FP32],
                  sig: pld.DistributedTensor[[NR, 1], pl.INT32]):
    return max_and_prod(x, both, hi, pr, sig)


@pl.jit.host
def host_max_prod(x: pl.Tensor[[NR, 1, W], pl.FP32], both: pl.Out[pl.Tensor[[NR, 2, W], pl.FP32]]):
    hi_buf = pld.alloc_window_buffer([1, W], dtype=pl.FP32)
    pr_buf = pld.alloc_window_buffer([1, W], dtype=pl.FP32)
    sig_buf = pld.alloc_window_buffer([pld.world_size(), 1], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        chip_max_prod(x[r], both[r], pld.window(hi_buf, [1, W], dtype=pl.FP32),
                      pld.window(pr_buf, [1, W], dtype=pl.FP32),
                      pld.window(sig_buf, [pld.world_size(), 1], dtype=pl.INT32), device=r)


@pl.jit.incore
def scatter_and_exchange(x: pl.Tensor[[G, W], pl.FP32], mine: pl.Out[pl.Tensor[[G, W], pl.FP32]],
                         swapped: pl.Out[pl.Tensor[[G, W], pl.FP32]], red: pld.DistributedTensor[[G, W], pl.FP32],
                         stage: pld.DistributedTensor[[G, W], pl.FP32], got: pld.DistributedTensor[[G, W], pl.FP32],
                         sig: pld.DistributedTensor[[G, 1], pl.INT32]):
    t = pl.load(x, [0, 0], [G, W])
    red = pl.store(t, [0, 0], red)
    stage = pl.store(t, [0, 0], stage)
    red = pld.tensor.reduce_scatter(red, sig, op=pld.ReduceOp.Sum)
    got = pld.tensor.all_to_all(stage, got, sig)
    mine = pl.store(pl.load(red, [0, 0], [G, W]), [0, 0], mine)
    swapped = pl.store(pl.load(got, [0, 0], [G, W]), [0, 0], swapped)
    return swapped


@pl.jit
def chip_scatter(x: pl.Tensor[[G, W], pl.FP32], mine: pl.Out[pl.Tensor[[G, W], pl.FP32]],
                 swapped: pl.Out[pl.Tensor[[G, W], pl.FP32]], red: pld.DistributedTensor[[G, W], pl.FP32],
                 stage: pld.DistributedTensor[[G, W], pl.FP32], got: pld.DistributedTensor[[G, W], pl.FP32],
                 sig: pld.DistributedTensor[[G, 1], pl.INT32]):
    return scatter_and_exchange(x, mine, swapped, red, stage, got, sig)


@pl.jit.host
def host_scatter(x: pl.Tensor[[G, G, W], pl.FP32], mine: pl.Out[pl.Tensor[[G, G, W], pl.FP32]],
                 swapped: pl.Out[pl.Tensor[[G, G, W], pl.FP32]]):
    red_buf = pld.alloc_window_buffer([G, W], dtype=pl.FP32)
    stage_buf = pld.alloc_window_buffer([G, W], dtype=pl.FP32)
    got_buf = pld.alloc_window_buffer([G, W], dtype=pl.FP32)
    sig_buf = pld.alloc_window_buffer([G, 1], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        chip_scatter(x[r], mine[r], swapped[r], pld.window(red_buf, [G, W], dtype=pl.FP32),
                     pld.window(stage_buf, [G, W], dtype=pl.FP32), pld.window(got_buf, [G, W], dtype=pl.FP32),
                     pld.window(sig_buf, [G, 1], dtype=pl.INT32), device=r)


# -- an if over a rank scalar mixing a comm op and tile code (split into one if per kind), in a
#    constant-trip loop, ending in ``return pl.store(...)``: y[r] = sum_p x[p] ------------------------------
@pl.jit.incore
def sum_others(x: pl.Tensor[[1, W], pl.FP32], y: pl.Out[pl.Tensor[[1, W], pl.FP32]],
               box: pld.DistributedTensor[[1, W], pl.FP32], sig: pld.DistributedTensor[[G, 1], pl.INT32],
               me: pl.Scalar[pl.INT32]):
    t = pl.load(x, [0, 0], [1, W])
    box = pl.store(t, [0, 0], box)
    sig = pld.tensor.barrier(sig)
    acc = pl.load(x, [0, 0], [1, W])
    for peer in pl.range(G):
        if peer != me:
            got = pld.tile.remote_load(box, peer=peer, offsets=[0, 0], shape=[1, W])
            acc = pl.add(acc, got)
    return pl.store(acc, [0, 0], y)


@pl.jit
def chip_sum_others(x: pl.Tensor[[1, W], pl.FP32], y: pl.Out[pl.Tensor[[1, W], pl.FP32]],
                    box: pld.DistributedTensor[[1, W], pl.FP32], sig: pld.DistributedTensor[[G, 1], pl.INT32],
                    me: pl.Scalar[pl.INT32]):
    return sum_others(x, y, box, sig, me)


@pl.jit.host
def host_sum_others(x: pl.Tensor[[G, 1, W], pl.FP32], y: pl.Out[pl.Tensor[[G, 1, W], pl.FP32]]):
    box_buf = pld.alloc_window_buffer([1, W], dtype=pl.FP32)
    sig_buf = pld.alloc_window_buffer([G, 1], dtype=pl.INT32)
    for r in pl.range(pld.world_size()):
        chip_sum_others(x[r], y[r], pld.window(box_buf, [1, W], dtype=pl.FP32),
                        pld.window(sig_buf, [G, 1], dtype=pl.INT32), r, device=r)
