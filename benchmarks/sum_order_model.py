"""How often summation order alone takes an RMSNorm -> matmul -> RMSNorm -> bf16 chain past a torch tolerance.

A numpy model of the chain that decode_front-style programs compute (sizes from the command line; the defaults are
DeepSeek-V3.2's scope 1: 16 rows, hidden 7168, a 576-wide projection of which 512 columns are normalised again):

    normed = bf16(x * rsqrt(sum(x^2) * (1 / n) + eps) * w)   x, w random; x, wkv rounded to bf16 like the inputs
    kv     = bf16(normed @ wkv)
    out    = bf16(kv * rsqrt(mean(kv^2) + eps) * g)    compared with rtol = atol = 4e-3

The golden is torch's own reductions and matmul. The kernel side is modelled the way a kernel computes it: the
first sum in 512-wide chunks added in f32, the matmul in 512-deep ``matmul_acc`` steps, recip(sqrt(.)). Two
summation models are compared. ``old``: a row sum left to right in f32, and a matmul that continues its
accumulator one k at a time. ``now``: a row sum in double rounded once, and a matmul that sums each step from
zero and then adds it (the simulators' order). Prints, per model, the runs with at least one element past the
tolerance and the bf16 flips of ``normed``. Needs numpy and torch.

    python benchmarks/sum_order_model.py --runs 400
"""

from __future__ import annotations

import argparse

import numpy as np

EPS = 1e-6
CHUNK = 512


def _bf16(a, torch):
    return torch.from_numpy(np.ascontiguousarray(a, np.float32)).to(torch.bfloat16).float().numpy()


def _row_sum(x: np.ndarray, model: str) -> np.ndarray:
    if model == "now":
        return x.astype(np.float64).sum(axis=1).astype(np.float32)
    acc = x[:, 0].copy()
    for j in range(1, x.shape[1]):
        acc += x[:, j]
    return acc


def _matmul(a: np.ndarray, b: np.ndarray, model: str) -> np.ndarray:
    acc = np.zeros((a.shape[0], b.shape[1]), np.float32)
    for k0 in range(0, a.shape[1], CHUNK):
        if model == "old":
            for k in range(k0, min(k0 + CHUNK, a.shape[1])):
                acc += a[:, k:k + 1] * b[k:k + 1, :]
            continue
        part = np.zeros_like(acc)
        for k in range(k0, min(k0 + CHUNK, a.shape[1])):
            part += a[:, k:k + 1] * b[k:k + 1, :]
        acc = acc + part
    return acc


def _rms(x: np.ndarray, model: str) -> np.ndarray:
    total = np.zeros(x.shape[0], np.float32)
    for k0 in range(0, x.shape[1], CHUNK):
        chunk = x[:, k0:k0 + CHUNK]
        total = total + _row_sum(chunk * chunk, model)
    return np.float32(1) / np.sqrt(total * np.float32(1.0 / x.shape[1]) + np.float32(EPS))


def one_run(seed: int, rows: int, hidden: int, width: int, normed_cols: int, torch) -> dict[str, tuple[int, int]]:
    """{model: (elements past the tolerance, bf16 flips of normed)} for one random input."""
    torch.manual_seed(seed)
    x = (torch.rand(rows, hidden) - 0.5).to(torch.bfloat16).float()
    w = torch.rand(1, hidden) - 0.5
    wkv = ((torch.rand(hidden, width) - 0.5) / hidden**0.5).to(torch.bfloat16).float()
    g = torch.rand(1, normed_cols) - 0.5
    inv = torch.rsqrt(torch.sum(x * x, dim=1, keepdim=True) * (1.0 / hidden) + EPS)
    normed_gold = (x * inv * w).to(torch.bfloat16).float()
    kv_gold = (normed_gold @ wkv).to(torch.bfloat16)[:, :normed_cols].float()
    var = torch.mean(kv_gold * kv_gold, dim=-1, keepdim=True)
    gold = (kv_gold * torch.rsqrt(var + EPS) * g).to(torch.bfloat16).float().numpy()
    out = {}
    for model in ("old", "now"):
        xn = x.numpy()
        normed = _bf16(xn * _rms(xn, model)[:, None] * w.numpy(), torch)
        kv = _bf16(_matmul(normed, wkv.numpy(), model), torch)[:, :normed_cols]
        got = _bf16(kv * _rms(kv, model)[:, None] * g.numpy(), torch)
        bad = int((np.abs(got - gold) > 4e-3 + 4e-3 * np.abs(gold)).sum())
        out[model] = (bad, int((normed != normed_gold.numpy()).sum()))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=100, help="random inputs to try (default 100)")
    ap.add_argument("--first-seed", type=int, default=0)
    ap.add_argument("--rows", type=int, default=16)
    ap.add_argument("--hidden", type=int, default=7168)
    ap.add_argument("--width", type=int, default=576, help="projection width (default 576)")
    ap.add_argument("--normed", type=int, default=512, help="projection columns normalised again (default 512)")
    args = ap.parse_args()
    import torch

    missed = {"old": 0, "now": 0}
    flips = {"old": 0, "now": 0}
    for seed in range(args.first_seed, args.first_seed + args.runs):
        for model, (bad, flipped) in one_run(seed, args.rows, args.hidden, args.width, args.normed, torch).items():
            missed[model] += bad > 0
            flips[model] += flipped
    for model in ("old", "now"):
        print(f"{model}: {missed[model]}/{args.runs} runs past rtol = atol = 4e-3; "
              f"{flips[model]} bf16 flips of normed ({flips[model] / args.runs:.2f} a run)")


if __name__ == "__main__":
    main()
