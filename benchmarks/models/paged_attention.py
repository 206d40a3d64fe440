"""A decode-step paged attention written the way a model author does: torch tensors in, torch golden out.

The workload of ``benchmarks/edit_run.py``: four kernels and an orchestration, run with
``pypto.runtime.run(program, ...)``. Requests read their keys and values from a shared pool of
``POOL`` blocks of ``BLOCK`` tokens through ``block_table``; request ``b`` holds ``lens[b]`` blocks.

Per request and block: ``scores`` (cube) ``S = Q K_blk^T``; ``probs`` (vector) the block's row max,
``exp(S*scale - max)`` and row sum; ``context`` (cube) ``U = P V_blk``; then per request ``combine``
(vector) folds the blocks with the online-softmax recurrence and writes ``O = o / l``.

    python benchmarks/models/paged_attention.py [a2a3sim|a5sim]
"""

from __future__ import annotations

import sys

import torch

import pypto.language as pl
from pypto.runtime import RunConfig, run

REQS, GROUP, DIM = 4, 16, 128        # requests, query heads sharing one KV head, head dim
BLOCK, BLOCKS = 64, 8                # tokens per pool block, blocks per request at most
POOL = REQS * BLOCKS
LENS = (6, 8, 2, 5)                  # blocks held by each request
SCALE = DIM ** -0.5
ROWS, TOKENS, SCOLS, UCOLS, STATS = REQS * GROUP, POOL * BLOCK, BLOCKS * BLOCK, BLOCKS * DIM, REQS * BLOCKS * GROUP


@pl.program
class PagedDecode:
    @pl.function(type=pl.FunctionType.InCore)
    def scores(self, q: pl.Tensor[[ROWS, DIM], pl.FP32], kt: pl.Tensor[[DIM, TOKENS], pl.FP32],
               s: pl.Out[pl.Tensor[[ROWS, SCOLS], pl.FP32]], row: pl.Scalar[pl.INDEX], tok: pl.Scalar[pl.INDEX],
               col: pl.Scalar[pl.INDEX]) -> pl.Tensor[[ROWS, SCOLS], pl.FP32]:
        lhs = pl.move(pl.load(q, [row, 0], [GROUP, DIM], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Left)
        rhs = pl.move(pl.load(kt, [0, tok], [DIM, BLOCK], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Right)
        s = pl.store(pl.matmul(lhs, rhs), [row, col], s)
        return s

    @pl.function(type=pl.FunctionType.InCore)
    def probs(self, s: pl.Tensor[[ROWS, SCOLS], pl.FP32], p: pl.Out[pl.Tensor[[ROWS, SCOLS], pl.FP32]],
              mx: pl.Out[pl.Tensor[[STATS, 1], pl.FP32]], sm: pl.Out[pl.Tensor[[STATS, 1], pl.FP32]],
              row: pl.Scalar[pl.INDEX], col: pl.Scalar[pl.INDEX], srow: pl.Scalar[pl.INDEX],
              ) -> tuple[pl.Tensor[[ROWS, SCOLS], pl.FP32], pl.Tensor[[STATS, 1], pl.FP32],
                         pl.Tensor[[STATS, 1], pl.FP32]]:
        x = pl.muls(pl.load(s, [row, col], [GROUP, BLOCK]), SCALE)
        scratch = pl.create_tile([GROUP, BLOCK], dtype=pl.FP32)
        m = pl.row_max(x, scratch)
        e = pl.exp(pl.row_expand_sub(x, m))
        scratch2 = pl.create_tile([GROUP, BLOCK], dtype=pl.FP32)
        total = pl.row_sum(e, scratch2)
        p = pl.store(e, [row, col], p)
        mx = pl.store(m, [srow, 0], mx)
        sm = pl.store(total, [srow, 0], sm)
        return p, mx, sm

    @pl.function(type=pl.FunctionType.InCore)
    def context(self, p: pl.Tensor[[ROWS, SCOLS], pl.FP32], v: pl.Tensor[[TOKENS, DIM], pl.FP32],
                u: pl.Out[pl.Tensor[[ROWS, UCOLS], pl.FP32]], row: pl.Scalar[pl.INDEX], col: pl.Scalar[pl.INDEX],
                tok: pl.Scalar[pl.INDEX], ucol: pl.Scalar[pl.INDEX]) -> pl.Tensor[[ROWS, UCOLS], pl.FP32]:
        lhs = pl.move(pl.load(p, [row, col], [GROUP, BLOCK], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Left)
        rhs = pl.move(pl.load(v, [tok, 0], [BLOCK, DIM], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Right)
        u = pl.store(pl.matmul(lhs, rhs), [row, ucol], u)
        return u

    @pl.function(type=pl.FunctionType.InCore)
    def combine(self, u: pl.Tensor[[ROWS, UCOLS], pl.FP32], mx: pl.Tensor[[STATS, 1], pl.FP32],
                sm: pl.Tensor[[STATS, 1], pl.FP32], out: pl.Out[pl.Tensor[[ROWS, DIM], pl.FP32]],
                row: pl.Scalar[pl.INDEX], srow: pl.Scalar[pl.INDEX],
                n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[ROWS, DIM], pl.FP32]:
        o0 = pl.create_tile([GROUP, DIM], dtype=pl.FP32)
        m0 = pl.create_tile([GROUP, 1], dtype=pl.FP32)
        l0 = pl.create_tile([GROUP, 1], dtype=pl.FP32)
        for i, (o, m, l) in pl.range(n, init_values=(o0, m0, l0)):  # noqa: E741
            u_i = pl.load(u, [row, i * DIM], [GROUP, DIM])
            m_i = pl.load(mx, [srow + i * GROUP, 0], [GROUP, 1])
            l_i = pl.load(sm, [srow + i * GROUP, 0], [GROUP, 1])
            if i == 0:
                o_new, m_new, l_new = pl.yield_(u_i, m_i, l_i)
            else:
                top = pl.maximum(m, m_i)
                a = pl.exp(pl.sub(m, top))
                b = pl.exp(pl.sub(m_i, top))
                o_new, m_new, l_new = pl.yield_(pl.add(pl.row_expand_mul(o, a), pl.row_expand_mul(u_i, b)), top,
                                                pl.add(pl.mul(a, l), pl.mul(b, l_i)))
            o_out, m_out, l_out = pl.yield_(o_new, m_new, l_new)
        out = pl.store(pl.row_expand_div(o_out, l_out), [row, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def decode(self, q: pl.Tensor[[ROWS, DIM], pl.FP32], kt: pl.Tensor[[DIM, TOKENS], pl.FP32],
               v: pl.Tensor[[TOKENS, DIM], pl.FP32], table: pl.Tensor[[REQS * BLOCKS], pl.INT32],
               lens: pl.Tensor[[REQS], pl.INT32],
               out: pl.Out[pl.Tensor[[ROWS, DIM], pl.FP32]]) -> pl.Tensor[[ROWS, DIM], pl.FP32]:
        s = pl.create_tensor([ROWS, SCOLS], dtype=pl.FP32)
        p = pl.create_tensor([ROWS, SCOLS], dtype=pl.FP32)
        mx = pl.create_tensor([STATS, 1], dtype=pl.FP32)
        sm = pl.create_tensor([STATS, 1], dtype=pl.FP32)
        u = pl.create_tensor([ROWS, UCOLS], dtype=pl.FP32)
        for r in pl.range(REQS):
            n = pl.cast(pl.read(lens, [r]), pl.INDEX)
            row = r * GROUP
            for j in pl.range(n):
                blk = pl.cast(pl.read(table, [r * BLOCKS + j]), pl.INDEX)
                srow = (r * BLOCKS + j) * GROUP
                s = self.scores(q, kt, s, row, blk * BLOCK, j * BLOCK)
                st = self.probs(s, p, mx, sm, row, j * BLOCK, srow)
                p = st[0]
                mx = st[1]
                sm = st[2]
                u = self.context(p, v, u, row, j * BLOCK, blk * BLOCK, j * DIM)
            out = self.combine(u, mx, sm, out, row, r * BLOCKS * GROUP, n)
        return out


def inputs(seed: int = 0) -> tuple[torch.Tensor, ...]:
    """Queries, the key pool (transposed), the value pool, a shuffled block table, the lengths."""
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(ROWS, DIM, generator=g)
    keys = torch.randn(TOKENS, DIM, generator=g)
    values = torch.randn(TOKENS, DIM, generator=g)
    table = torch.randperm(POOL, generator=g).to(torch.int32)
    return q, keys.T.contiguous(), values, table, torch.tensor(LENS, dtype=torch.int32)


def golden(q: torch.Tensor, kt: torch.Tensor, v: torch.Tensor, table: torch.Tensor, lens: torch.Tensor) -> torch.Tensor:
    out = torch.zeros(ROWS, DIM, dtype=torch.float64)
    for r in range(REQS):
        blocks = table[r * BLOCKS: r * BLOCKS + int(lens[r])].tolist()
        tok = torch.cat([torch.arange(b * BLOCK, (b + 1) * BLOCK) for b in blocks])
        s = q[r * GROUP:(r + 1) * GROUP].double() @ kt.T[tok].double().T * SCALE
        out[r * GROUP:(r + 1) * GROUP] = torch.softmax(s, dim=1) @ v[tok].double()
    return out


def main(platform: str) -> None:
    q, kt, v, table, lens = inputs()
    out = torch.zeros(ROWS, DIM)
    run(PagedDecode, q, kt, v, table, lens, out, config=RunConfig(platform=platform))
    err = float((out.double() - golden(q, kt, v, table, lens)).abs().max())
    assert err < 1e-4, f"paged decode: max abs error {err:.3g}"
    print(f"paged decode on {platform}: OK (max abs error {err:.3g})")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "a2a3sim")
