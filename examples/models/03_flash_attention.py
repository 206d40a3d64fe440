"""Flash-attention style single-head attention with an online-softmax merge over K/V blocks.

``O = softmax(Q K^T / sqrt(D)) V`` for Q [64, 64] and K, V [256, 64], in 64-key blocks:

1. ``qk_kernel`` (cube): ``S_j = Q K_j^T`` per block (K is passed pre-transposed as ``kt``
   [D, S]: the ptoas 0.1.1 codegen has no ``b_trans`` matmul, see below).
2. ``block_softmax_kernel`` (vector): per block, row max ``m_j``, ``P_j = exp(S_j - m_j)`` and
   row sum ``l_j`` (block-local statistics).
3. ``pv_kernel`` (cube): ``U_j = P_j V_j`` per block.
4. ``merge_kernel`` (vector): the online-softmax recurrence over the blocks, with the running
   row max ``m``, running row sum ``l`` and output accumulator ``o`` as loop-carried tiles
   (``init_values`` + ``pl.yield_``). A nested ``if``/``else`` initialises the state from the
   first block and rescales it for later blocks::

       m' = max(m, m_j);  a = exp(m - m'),  b = exp(m_j - m')
       l' = a l + b l_j;  o' = a o + b U_j;      finally O = o / l

Loop-carried tiles live in one on-chip buffer each (the planner gives a carried tile and its
yielded values the same MemRef), so the PTO is an ``scf.for`` whose body updates the carried
buffers in place, with ``scf.if`` choosing initialise vs rescale.

    python examples/models/03_flash_attention.py [a2a3sim|a5sim]
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _common import check, platform_from_argv, rand  # noqa: E402

import pypto.language as pl  # noqa: E402
from pypto.runtime import RunConfig  # noqa: E402

SQ, D, S, B = 64, 64, 256, 64  # query rows, head dim, keys, key block
NB = S // B
SCALE = 1.0 / float(np.sqrt(D))


@pl.jit.incore
def qk_kernel(q: pl.Tensor, kt: pl.Tensor, s: pl.Out[pl.Tensor]):
    q_l0 = pl.move(pl.load(q, [0, 0], [SQ, D], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Left)
    for j in pl.range(0, S, B):
        k_l0 = pl.move(pl.load(kt, [0, j], [D, B], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Right)
        pl.store(pl.matmul(q_l0, k_l0), [0, j], s)
    return s


@pl.jit.incore
def block_softmax_kernel(s: pl.Tensor, p: pl.Out[pl.Tensor], m_blk: pl.Out[pl.Tensor],
                         l_blk: pl.Out[pl.Tensor]):
    for i in pl.range(NB):
        x = pl.muls(pl.load(s, [0, i * B], [SQ, B]), SCALE)
        tmp = pl.create_tile([SQ, B], dtype=pl.FP32)
        m = pl.row_max(x, tmp)
        e = pl.exp(pl.row_expand_sub(x, m))
        tmp2 = pl.create_tile([SQ, B], dtype=pl.FP32)
        l = pl.row_sum(e, tmp2)  # noqa: E741
        pl.store(e, [0, i * B], p)
        pl.store(m, [i * SQ, 0], m_blk)
        pl.store(l, [i * SQ, 0], l_blk)
    return p, m_blk, l_blk


@pl.jit.incore
def pv_kernel(p: pl.Tensor, v: pl.Tensor, u: pl.Out[pl.Tensor]):
    for i in pl.range(NB):
        p_l0 = pl.move(pl.load(p, [0, i * B], [SQ, B], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Left)
        v_l0 = pl.move(pl.load(v, [i * B, 0], [B, D], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Right)
        pl.store(pl.matmul(p_l0, v_l0), [0, i * D], u)
    return u


@pl.jit.incore
def merge_kernel(u: pl.Tensor, m_blk: pl.Tensor, l_blk: pl.Tensor, out: pl.Out[pl.Tensor]):
    o0 = pl.create_tile([SQ, D], dtype=pl.FP32)
    m0 = pl.create_tile([SQ, 1], dtype=pl.FP32)
    l0 = pl.create_tile([SQ, 1], dtype=pl.FP32)
    for i, (o, m, l) in pl.range(NB, init_values=(o0, m0, l0)):  # noqa: E741
        u_j = pl.load(u, [0, i * D], [SQ, D])
        m_j = pl.load(m_blk, [i * SQ, 0], [SQ, 1])
        l_j = pl.load(l_blk, [i * SQ, 0], [SQ, 1])
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
    pl.store(pl.row_expand_div(o_out, l_out), [0, 0], out)
    return out


@pl.jit
def flash_attention(q: pl.Tensor, kt: pl.Tensor, v: pl.Tensor, out: pl.Out[pl.Tensor]):
    s = pl.create_tensor([SQ, S], dtype=pl.FP32)
    s = qk_kernel(q, kt, s)
    p = pl.create_tensor([SQ, S], dtype=pl.FP32)
    m_blk = pl.create_tensor([NB * SQ, 1], dtype=pl.FP32)
    l_blk = pl.create_tensor([NB * SQ, 1], dtype=pl.FP32)
    block_softmax_kernel(s, p, m_blk, l_blk)  # writes all three Out tensors
    u = pl.create_tensor([SQ, NB * D], dtype=pl.FP32)
    u = pv_kernel(p, v, u)
    out = merge_kernel(u, m_blk, l_blk, out)
    return out


def reference(q: np.ndarray, k: np.ndarray, v: np.ndarray) -> np.ndarray:
    s = (q.astype(np.float64) @ k.T.astype(np.float64)) * SCALE
    e = np.exp(s - s.max(axis=1, keepdims=True))
    return (e / e.sum(axis=1, keepdims=True)) @ v


# Sample shapes (the CLI's `pypto compile FILE::NAME` and tests/roundtrip use them).
SHAPES = {"flash_attention": {"q": f"{SQ}x{D}:f32", "kt": f"{D}x{S}:f32", "v": f"{S}x{D}:f32",
                              "out": f"{SQ}x{D}:f32"}}


def main(platform: str) -> None:
    cfg = RunConfig(platform=platform)
    q, k, v = rand(SQ, D, seed=1), rand(S, D, seed=2), rand(S, D, seed=3)
    out = np.zeros((SQ, D), dtype=np.float32)
    flash_attention(q, np.ascontiguousarray(k.T), v, out, config=cfg)
    check(f"flash attention on {platform}", out, reference(q, k, v), rtol=1e-4, atol=1e-5)


if __name__ == "__main__":
    main(platform_from_argv())
