"""Decode-step paged attention: every request reads its keys and values from a shared block pool.

One new query token per request; its ``HEADS`` query heads share one key/value head (grouped
query attention). The KV cache is a pool of ``POOL`` physical blocks of ``BLOCK`` tokens each,
and ``block_table[b, j]`` names the physical block that holds tokens ``j*BLOCK ..`` of request
``b``. Requests have different context lengths (``ctx_blocks[b]`` whole blocks), so the loops of
the orchestration run a data-dependent number of times, read from tensors at run time.

Per request ``b`` and per logical block ``j`` (physical block ``blk = block_table[b, j]``):

1. ``qk`` (cube): ``S = Q_b K_blk^T``. The pool keeps keys transposed per block (``key_t`` is
   ``[D, POOL*BLOCK]``): the ptoas 0.1.1 codegen has no transposed-operand matmul.
2. ``block_softmax`` (vector): block-local row max ``m``, ``P = exp(S*scale - m)``, row sum ``l``.
3. ``pv`` (cube): ``U = P V_blk``.

then ``merge`` (vector) folds the request's blocks with the online-softmax recurrence (carried
running max, sum and output) and writes ``O_b = o / l``. The scalars each task needs (the
physical block's column, the request's rows) are computed in the orchestration and passed to the
kernels as ``pl.Scalar[pl.INDEX]`` arguments.

    python examples/models/05_paged_attention.py [a2a3sim|a5sim]
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _common import check, platform_from_argv, rand  # noqa: E402

import pypto.language as pl  # noqa: E402
from pypto.runtime import RunConfig, run  # noqa: E402

BATCH, HEADS, D = 4, 16, 128          # requests, query heads per KV head, head dim
BLOCK, MAX_BLOCKS = 64, 8             # tokens per cache block, blocks per request at most
POOL = BATCH * MAX_BLOCKS             # physical blocks in the cache
SCALE = 1.0 / float(np.sqrt(D))
ROWS = BATCH * HEADS                  # query rows over all requests
CTX_BLOCKS = (8, 3, 5, 1)             # context length of each request, in blocks
TOK = POOL * BLOCK                    # token slots in the pool
SW = MAX_BLOCKS * BLOCK               # score columns per request
NST = BATCH * MAX_BLOCKS * HEADS      # rows of the per-block softmax statistics
UW = MAX_BLOCKS * D                   # per-block context columns per request


@pl.program
class PagedAttention:
    @pl.function(type=pl.FunctionType.InCore)
    def qk(self, q: pl.Tensor[[ROWS, D], pl.FP32], key_t: pl.Tensor[[D, TOK], pl.FP32],
           s: pl.Out[pl.Tensor[[ROWS, SW], pl.FP32]], row: pl.Scalar[pl.INDEX], kcol: pl.Scalar[pl.INDEX],
           scol: pl.Scalar[pl.INDEX]) -> pl.Tensor[[ROWS, SW], pl.FP32]:
        q_l0 = pl.move(pl.load(q, [row, 0], [HEADS, D], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Left)
        k_l0 = pl.move(pl.load(key_t, [0, kcol], [D, BLOCK], target_memory=pl.Mem.Mat),
                       target_memory=pl.Mem.Right)
        s = pl.store(pl.matmul(q_l0, k_l0), [row, scol], s)
        return s

    @pl.function(type=pl.FunctionType.InCore)
    def block_softmax(self, s: pl.Tensor[[ROWS, SW], pl.FP32], p: pl.Out[pl.Tensor[[ROWS, SW], pl.FP32]],
                      m_blk: pl.Out[pl.Tensor[[NST, 1], pl.FP32]], l_blk: pl.Out[pl.Tensor[[NST, 1], pl.FP32]],
                      row: pl.Scalar[pl.INDEX], scol: pl.Scalar[pl.INDEX], srow: pl.Scalar[pl.INDEX],
                      ) -> tuple[pl.Tensor[[ROWS, SW], pl.FP32], pl.Tensor[[NST, 1], pl.FP32],
                                 pl.Tensor[[NST, 1], pl.FP32]]:
        x = pl.muls(pl.load(s, [row, scol], [HEADS, BLOCK]), SCALE)
        tmp = pl.create_tile([HEADS, BLOCK], dtype=pl.FP32)
        m = pl.row_max(x, tmp)
        e = pl.exp(pl.row_expand_sub(x, m))
        tmp2 = pl.create_tile([HEADS, BLOCK], dtype=pl.FP32)
        l = pl.row_sum(e, tmp2)  # noqa: E741
        p = pl.store(e, [row, scol], p)
        m_blk = pl.store(m, [srow, 0], m_blk)
        l_blk = pl.store(l, [srow, 0], l_blk)
        return p, m_blk, l_blk

    @pl.function(type=pl.FunctionType.InCore)
    def pv(self, p: pl.Tensor[[ROWS, SW], pl.FP32], value: pl.Tensor[[TOK, D], pl.FP32],
           u: pl.Out[pl.Tensor[[ROWS, UW], pl.FP32]], row: pl.Scalar[pl.INDEX], scol: pl.Scalar[pl.INDEX],
           vrow: pl.Scalar[pl.INDEX], ucol: pl.Scalar[pl.INDEX]) -> pl.Tensor[[ROWS, UW], pl.FP32]:
        p_l0 = pl.move(pl.load(p, [row, scol], [HEADS, BLOCK], target_memory=pl.Mem.Mat),
                       target_memory=pl.Mem.Left)
        v_l0 = pl.move(pl.load(value, [vrow, 0], [BLOCK, D], target_memory=pl.Mem.Mat),
                       target_memory=pl.Mem.Right)
        u = pl.store(pl.matmul(p_l0, v_l0), [row, ucol], u)
        return u

    @pl.function(type=pl.FunctionType.InCore)
    def merge(self, u: pl.Tensor[[ROWS, UW], pl.FP32], m_blk: pl.Tensor[[NST, 1], pl.FP32],
              l_blk: pl.Tensor[[NST, 1], pl.FP32], out: pl.Out[pl.Tensor[[ROWS, D], pl.FP32]],
              row: pl.Scalar[pl.INDEX], srow: pl.Scalar[pl.INDEX],
              n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[ROWS, D], pl.FP32]:
        o0 = pl.create_tile([HEADS, D], dtype=pl.FP32)
        m0 = pl.create_tile([HEADS, 1], dtype=pl.FP32)
        l0 = pl.create_tile([HEADS, 1], dtype=pl.FP32)
        for i, (o, m, l) in pl.range(n, init_values=(o0, m0, l0)):  # noqa: E741
            u_j = pl.load(u, [row, i * D], [HEADS, D])
            m_j = pl.load(m_blk, [srow + i * HEADS, 0], [HEADS, 1])
            l_j = pl.load(l_blk, [srow + i * HEADS, 0], [HEADS, 1])
            if i == 0:
                o_new, m_new, l_new = pl.yield_(u_j, m_j, l_j)
            else:
                m_max = pl.maximum(m, m_j)
                a = pl.exp(pl.sub(m, m_max))
                b = pl.exp(pl.sub(m_j, m_max))
                l_sum = pl.add(pl.mul(a, l), pl.mul(b, l_j))
                o_sum = pl.add(pl.row_expand_mul(o, a), pl.row_expand_mul(u_j, b))
                o_new, m_new, l_new = pl.yield_(o_sum, m_max, l_sum)
            o_out, m_out, l_out = pl.yield_(o_new, m_new, l_new)
        out = pl.store(pl.row_expand_div(o_out, l_out), [row, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def paged_attention(self, q: pl.Tensor[[ROWS, D], pl.FP32], key_t: pl.Tensor[[D, TOK], pl.FP32],
                        value: pl.Tensor[[TOK, D], pl.FP32],
                        block_table: pl.Tensor[[BATCH * MAX_BLOCKS], pl.INT32],
                        ctx_blocks: pl.Tensor[[BATCH], pl.INT32],
                        out: pl.Out[pl.Tensor[[ROWS, D], pl.FP32]]) -> pl.Tensor[[ROWS, D], pl.FP32]:
        s = pl.create_tensor([ROWS, MAX_BLOCKS * BLOCK], dtype=pl.FP32)
        p = pl.create_tensor([ROWS, MAX_BLOCKS * BLOCK], dtype=pl.FP32)
        m_blk = pl.create_tensor([BATCH * MAX_BLOCKS * HEADS, 1], dtype=pl.FP32)
        l_blk = pl.create_tensor([BATCH * MAX_BLOCKS * HEADS, 1], dtype=pl.FP32)
        u = pl.create_tensor([ROWS, MAX_BLOCKS * D], dtype=pl.FP32)
        for b in pl.range(BATCH):
            n = pl.cast(pl.read(ctx_blocks, [b]), pl.INDEX)
            row = b * HEADS
            for j in pl.range(n):
                blk = pl.cast(pl.read(block_table, [b * MAX_BLOCKS + j]), pl.INDEX)
                srow = (b * MAX_BLOCKS + j) * HEADS
                s = self.qk(q, key_t, s, row, blk * BLOCK, j * BLOCK)
                stats = self.block_softmax(s, p, m_blk, l_blk, row, j * BLOCK, srow)
                p = stats[0]
                m_blk = stats[1]
                l_blk = stats[2]
                u = self.pv(p, value, u, row, j * BLOCK, blk * BLOCK, j * D)
            out = self.merge(u, m_blk, l_blk, out, row, b * MAX_BLOCKS * HEADS, n)
        return out


def inputs(seed: int = 0) -> tuple[np.ndarray, ...]:
    """Query, the key pool (transposed per block), the value pool, a shuffled block table, lengths."""
    q = rand(ROWS, D, seed=seed)
    keys = rand(POOL * BLOCK, D, seed=seed + 1)
    values = rand(POOL * BLOCK, D, seed=seed + 2)
    table = np.random.default_rng(seed + 3).permutation(POOL).astype(np.int32)
    ctx = np.array(CTX_BLOCKS, dtype=np.int32)
    return q, np.ascontiguousarray(keys.T), values, table, ctx


def reference(q: np.ndarray, key_t: np.ndarray, values: np.ndarray, table: np.ndarray,
              ctx: np.ndarray) -> np.ndarray:
    """Gather each request's blocks from the pool, then plain softmax attention in float64."""
    keys = key_t.T.astype(np.float64)
    out = np.zeros((ROWS, D))
    for b in range(BATCH):
        blocks = table[b * MAX_BLOCKS: b * MAX_BLOCKS + ctx[b]]
        tok = np.concatenate([np.arange(k * BLOCK, (k + 1) * BLOCK) for k in blocks])
        s = q[b * HEADS:(b + 1) * HEADS].astype(np.float64) @ keys[tok].T * SCALE
        e = np.exp(s - s.max(axis=1, keepdims=True))
        out[b * HEADS:(b + 1) * HEADS] = (e / e.sum(axis=1, keepdims=True)) @ values[tok]
    return out


def main(platform: str) -> None:
    q, key_t, values, table, ctx = inputs()
    out = np.zeros((ROWS, D), dtype=np.float32)
    run(PagedAttention, q, key_t, values, table, ctx, out, config=RunConfig(platform=platform))
    check(f"paged attention (batch {BATCH}, {HEADS} heads, blocks {list(CTX_BLOCKS)}) on {platform}", out,
          reference(q, key_t, values, table, ctx), rtol=1e-4, atol=1e-5)


if __name__ == "__main__":
    main(platform_from_argv())
