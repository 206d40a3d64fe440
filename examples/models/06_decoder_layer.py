"""One pre-norm transformer decoder layer (prefill of ``SEQ`` tokens), checked against numpy.

    h   = x + Attn(RMSNorm(x) Wqkv) Wo          causal multi-head attention, NH heads of DH
    out = h + (silu(RMSNorm(h) Wg) * (RMSNorm(h) Wu)) Wd

Kernels (``@pl.jit.incore``), called by one ``@pl.jit`` orchestration:

- ``rmsnorm``: ``x * rsqrt(mean(x^2) + eps) * w`` over 16-row chunks (vector).
- ``matmul(K, N)``: a kernel factory; ``[SEQ, K] @ [K, N]`` in 64-column output tiles with a
  128-deep ``matmul_acc`` K loop, so every operand fits the cube's L0 buffers (cube). One factory,
  four kernels: the fused QKV projection, the output projection, gate/up and down.
- ``K^T`` is not computed: the orchestration passes ``pl.transpose(qkv, 0, 1)``, a transposed
  view of the projection output, to a parameter annotated with the matching column-major
  ``pl.TensorView`` (strides ``[1, 3*HID]``, layout DN), and the cube loads each head's
  ``[DH, SEQ]`` block through it.
- ``scores`` / ``softmax`` / ``context``: per head ``Q K^T`` (cube), ``softmax(S * scale + mask)``
  with an additive causal mask (vector), ``P V`` into the head's columns (cube).
- ``add`` (residuals) and ``swiglu`` (``g * sigmoid(g) * u``, vector).

    python examples/models/06_decoder_layer.py [a2a3sim|a5sim]
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _common import check, platform_from_argv, rand  # noqa: E402

import pypto.language as pl  # noqa: E402
from pypto.runtime import RunConfig  # noqa: E402

SEQ, HID, NH, FF = 64, 256, 4, 512
DH = HID // NH
EPS = 1e-6
SCALE = 1.0 / float(np.sqrt(DH))
RC = 16  # rows per vector chunk


@pl.jit.incore
def rmsnorm(x: pl.Tensor, w: pl.Tensor, out: pl.Out[pl.Tensor]):
    wt = pl.load(w, [0, 0], [1, HID])
    for r in pl.range(0, SEQ, RC):
        t = pl.load(x, [r, 0], [RC, HID])
        tmp = pl.create_tile([RC, HID], dtype=pl.FP32)
        ss = pl.row_sum(pl.mul(t, t), tmp)
        inv = pl.rsqrt(pl.adds(pl.muls(ss, 1.0 / HID), EPS))
        pl.store(pl.col_expand_mul(pl.row_expand_mul(t, inv), wt), [r, 0], out)
    return out


def matmul(k_dim: int, n_dim: int, kc: int = 128, nc: int = 64):
    """A ``[SEQ, k_dim] @ [k_dim, n_dim]`` kernel tiled for the cube's L0 buffers."""

    @pl.jit.incore
    def mm(a: pl.Tensor, w: pl.Tensor, out: pl.Out[pl.Tensor]):
        for n in pl.range(0, n_dim, nc):
            a0 = pl.move(pl.load(a, [0, 0], [SEQ, kc], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Left)
            w0 = pl.move(pl.load(w, [0, n], [kc, nc], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Right)
            acc = pl.matmul(a0, w0)
            for k in pl.range(kc, k_dim, kc):
                ak = pl.move(pl.load(a, [0, k], [SEQ, kc], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Left)
                wk = pl.move(pl.load(w, [k, n], [kc, nc], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Right)
                acc = pl.matmul_acc(acc, ak, wk)
            pl.store(acc, [0, n], out)
        return out

    return mm


qkv_proj, out_proj, up_proj, down_proj = matmul(HID, 3 * HID), matmul(HID, HID), matmul(HID, 2 * FF), matmul(FF, HID)


# ``pl.transpose(qkv, 0, 1)`` seen by the kernel: [3*HID, SEQ], column-major over qkv's memory.
QKV_T = pl.TensorView(stride=[1, 3 * HID], layout=pl.TensorLayout.DN)


@pl.jit.incore
def scores(qkv: pl.Tensor, kt: pl.Tensor[[3 * HID, SEQ], pl.FP32, QKV_T], s: pl.Out[pl.Tensor]):
    for h in pl.range(NH):
        q = pl.move(pl.load(qkv, [0, h * DH], [SEQ, DH], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Left)
        k = pl.move(pl.load(kt, [HID + h * DH, 0], [DH, SEQ], target_memory=pl.Mem.Mat),
                    target_memory=pl.Mem.Right)
        pl.store(pl.matmul(q, k), [h * SEQ, 0], s)
    return s


@pl.jit.incore
def softmax(s: pl.Tensor, mask: pl.Tensor, p: pl.Out[pl.Tensor]):
    m = pl.load(mask, [0, 0], [SEQ, SEQ])
    for h in pl.range(NH):
        x = pl.add(pl.muls(pl.load(s, [h * SEQ, 0], [SEQ, SEQ]), SCALE), m)
        tmp = pl.create_tile([SEQ, SEQ], dtype=pl.FP32)
        e = pl.exp(pl.row_expand_sub(x, pl.row_max(x, tmp)))
        tmp2 = pl.create_tile([SEQ, SEQ], dtype=pl.FP32)
        pl.store(pl.row_expand_div(e, pl.row_sum(e, tmp2)), [h * SEQ, 0], p)
    return p


@pl.jit.incore
def context(p: pl.Tensor, qkv: pl.Tensor, attn: pl.Out[pl.Tensor]):
    for h in pl.range(NH):
        pl0 = pl.move(pl.load(p, [h * SEQ, 0], [SEQ, SEQ], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Left)
        v = pl.move(pl.load(qkv, [0, 2 * HID + h * DH], [SEQ, DH], target_memory=pl.Mem.Mat),
                    target_memory=pl.Mem.Right)
        pl.store(pl.matmul(pl0, v), [0, h * DH], attn)
    return attn


@pl.jit.incore
def add(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]):
    for r in pl.range(0, SEQ, RC):
        pl.store(pl.add(pl.load(a, [r, 0], [RC, HID]), pl.load(b, [r, 0], [RC, HID])), [r, 0], out)
    return out


@pl.jit.incore
def swiglu(gu: pl.Tensor, out: pl.Out[pl.Tensor]):
    """``gu`` holds gate | up side by side ([SEQ, 2*FF]); out = silu(gate) * up."""
    for r in pl.range(0, SEQ, RC):
        g = pl.load(gu, [r, 0], [RC, FF])
        u = pl.load(gu, [r, FF], [RC, FF])
        sig = pl.recip(pl.adds(pl.exp(pl.neg(g)), 1.0))
        pl.store(pl.mul(pl.mul(g, sig), u), [r, 0], out)
    return out


@pl.jit
def decoder_layer(x: pl.Tensor, w_norm1: pl.Tensor, w_qkv: pl.Tensor, w_o: pl.Tensor, mask: pl.Tensor,
                  w_norm2: pl.Tensor, w_gu: pl.Tensor, w_down: pl.Tensor, out: pl.Out[pl.Tensor]):
    xn = pl.create_tensor([SEQ, HID], dtype=pl.FP32)
    xn = rmsnorm(x, w_norm1, xn)
    qkv = pl.create_tensor([SEQ, 3 * HID], dtype=pl.FP32)
    qkv = qkv_proj(xn, w_qkv, qkv)
    kt = pl.transpose(qkv, 0, 1)  # a transposed view of the same memory: K^T for the cube
    s = pl.create_tensor([NH * SEQ, SEQ], dtype=pl.FP32)
    s = scores(qkv, kt, s)
    p = pl.create_tensor([NH * SEQ, SEQ], dtype=pl.FP32)
    p = softmax(s, mask, p)
    attn = pl.create_tensor([SEQ, HID], dtype=pl.FP32)
    attn = context(p, qkv, attn)
    o = pl.create_tensor([SEQ, HID], dtype=pl.FP32)
    o = out_proj(attn, w_o, o)
    h = pl.create_tensor([SEQ, HID], dtype=pl.FP32)
    h = add(x, o, h)
    hn = pl.create_tensor([SEQ, HID], dtype=pl.FP32)
    hn = rmsnorm(h, w_norm2, hn)
    gu = pl.create_tensor([SEQ, 2 * FF], dtype=pl.FP32)
    gu = up_proj(hn, w_gu, gu)
    act = pl.create_tensor([SEQ, FF], dtype=pl.FP32)
    act = swiglu(gu, act)
    down = pl.create_tensor([SEQ, HID], dtype=pl.FP32)
    down = down_proj(act, w_down, down)
    out = add(h, down, out)
    return out


def weights(seed: int = 0) -> dict[str, np.ndarray]:
    """Random weights scaled like an initialised layer (keeps activations O(1))."""
    mask = np.triu(np.full((SEQ, SEQ), -1e9, dtype=np.float32), k=1)
    return {"w_norm1": 1.0 + 0.1 * rand(1, HID, seed=seed + 1), "w_qkv": rand(HID, 3 * HID, seed=seed + 2) / 16,
            "w_o": rand(HID, HID, seed=seed + 3) / 16, "mask": mask, "w_norm2": 1.0 + 0.1 * rand(1, HID, seed=seed + 4),
            "w_gu": rand(HID, 2 * FF, seed=seed + 5) / 16, "w_down": rand(FF, HID, seed=seed + 6) / 22.6}


def reference(x: np.ndarray, w: dict[str, np.ndarray]) -> np.ndarray:
    """The same layer in float64 numpy."""
    def norm(t: np.ndarray, g: np.ndarray) -> np.ndarray:
        return t / np.sqrt((t * t).mean(axis=1, keepdims=True) + EPS) * g

    x = x.astype(np.float64)
    qkv = norm(x, w["w_norm1"]) @ w["w_qkv"]
    heads = []
    for h in range(NH):
        q, k, v = (qkv[:, i * HID + h * DH: i * HID + (h + 1) * DH] for i in range(3))
        s = q @ k.T * SCALE + w["mask"]
        e = np.exp(s - s.max(axis=1, keepdims=True))
        heads.append(e / e.sum(axis=1, keepdims=True) @ v)
    h1 = x + np.concatenate(heads, axis=1) @ w["w_o"]
    gu = norm(h1, w["w_norm2"]) @ w["w_gu"]
    g, u = gu[:, :FF], gu[:, FF:]
    return h1 + (g / (1.0 + np.exp(-g)) * u) @ w["w_down"]


# Sample shapes (the CLI's `pypto compile FILE::NAME` and tests/roundtrip use them).
SHAPES = {"decoder_layer": {"x": f"{SEQ}x{HID}:f32", "w_norm1": f"1x{HID}:f32", "w_qkv": f"{HID}x{3 * HID}:f32",
                            "w_o": f"{HID}x{HID}:f32", "mask": f"{SEQ}x{SEQ}:f32", "w_norm2": f"1x{HID}:f32",
                            "w_gu": f"{HID}x{2 * FF}:f32", "w_down": f"{FF}x{HID}:f32", "out": f"{SEQ}x{HID}:f32"}}


def main(platform: str) -> None:
    x, w = rand(SEQ, HID, seed=7), weights()
    out = np.zeros((SEQ, HID), dtype=np.float32)
    decoder_layer(x, *w.values(), out, config=RunConfig(platform=platform))
    check(f"decoder layer (seq {SEQ}, hidden {HID}, {NH} heads, ffn {FF}) on {platform}", out, reference(x, w),
          rtol=1e-3, atol=1e-3)


if __name__ == "__main__":
    main(platform_from_argv())
