"""bf16 on the simulator: TCVT f32 -> bf16 bit for bit against torch, every rounding mode, bf16 matmul."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="torch is not installed (pip install torch==2.13.0)")

pytestmark = pytest.mark.sim

N = 64
PRELUDE = '#include "common/pto_instr.hpp"\nusing namespace pto;\n'
KERNELS = PRELUDE + f"""
template <RoundMode M>
void cvt(float* in, bfloat16_t* out, float* back) {{
  Tile<TileType::Vec, float, 1, {N}> s, w;
  Tile<TileType::Vec, bfloat16_t, 1, {N}> d;
  TASSIGN(s, 0); TASSIGN(d, 1024); TASSIGN(w, 2048);
  GlobalTensor<float, pto::Shape<1, {N}>, pto::Stride<{N}, 1>> gi(in), gb(back);
  GlobalTensor<bfloat16_t, pto::Shape<1, {N}>, pto::Stride<{N}, 1>> go(out);
  TLOAD(s, gi);
  TCVT(d, s, M);
  TCVT(w, d, M);
  TSTORE(go, d);
  TSTORE(gb, w);
}}
__global__ AICORE void rint(__gm__ float* a, __gm__ bfloat16_t* o, __gm__ float* b) {{ cvt<RoundMode::CAST_RINT>(a, o, b); }}
__global__ AICORE void round(__gm__ float* a, __gm__ bfloat16_t* o, __gm__ float* b) {{ cvt<RoundMode::CAST_ROUND>(a, o, b); }}
__global__ AICORE void floor(__gm__ float* a, __gm__ bfloat16_t* o, __gm__ float* b) {{ cvt<RoundMode::CAST_FLOOR>(a, o, b); }}
__global__ AICORE void ceil(__gm__ float* a, __gm__ bfloat16_t* o, __gm__ float* b) {{ cvt<RoundMode::CAST_CEIL>(a, o, b); }}
__global__ AICORE void trunc(__gm__ float* a, __gm__ bfloat16_t* o, __gm__ float* b) {{ cvt<RoundMode::CAST_TRUNC>(a, o, b); }}
__global__ AICORE void odd(__gm__ float* a, __gm__ bfloat16_t* o, __gm__ float* b) {{ cvt<RoundMode::CAST_ODD>(a, o, b); }}
"""

# f32 bit patterns: ties to even up and down, just off a tie, signed zeros, subnormals (with a tie),
# the largest finite values (one rounds to inf), inf, quiet/signalling/negative NaN
EDGE = [
    0x3F808000, 0x3F818000, 0x3F808001, 0x3F807FFF, 0xBF808000, 0xBF818000, 0x00000000, 0x80000000,
    0x00000001, 0x00008000, 0x00018000, 0x007FFFFF, 0x807FFFFF, 0x00800000, 0x7F7FFFFF, 0x7F7F7FFF,
    0x7F7F8000, 0xFF7F8000, 0x7F7EFFFF, 0x7F800000, 0xFF800000, 0x3DCCCCCD, 0x40490FDB, 0xC2F6E979,
]
NAN = [0x7FC00000, 0x7F800001, 0xFFC12345]


def _inputs() -> np.ndarray:
    rng = np.random.default_rng(7)
    rest = rng.integers(0, 2**32, size=N - len(EDGE) - len(NAN), dtype=np.uint64).astype(np.uint32)
    rest[(rest & 0x7F800000) == 0x7F800000] &= 0xBFFFFFFF  # keep the random ones finite
    return np.concatenate([np.array(EDGE + NAN, np.uint32), rest]).view(np.float32)


def _run(kit, mode: str, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    out, back = np.zeros(N, np.uint16), np.zeros(N, np.float32)
    kit.kernel(KERNELS, mode)(x, out, back)
    return out, back


def _mode_ref(x: np.ndarray, mode: str) -> np.ndarray:
    """Reference bf16 bits of a directed/ties-away rounding, from the f32 bits (finite inputs)."""
    u = x.view(np.uint32).astype(np.uint64)
    hi, lost, neg = u >> 16, u & 0xFFFF, (u >> 31) == 1
    up = {"round": lost >= 0x8000, "trunc": np.zeros_like(neg), "floor": neg & (lost != 0),
          "ceil": ~neg & (lost != 0)}
    if mode == "odd":
        return np.where(lost != 0, hi | 1, hi).astype(np.uint16)
    return (hi + up[mode]).astype(np.uint16)


def test_tcvt_f32_to_bf16_rint_matches_torch_bit_for_bit(kit):
    x = _inputs()
    out, back = _run(kit, "rint", x)
    want = torch.from_numpy(x.copy()).to(torch.bfloat16).view(torch.int16).numpy().view(np.uint16)
    finite_or_inf = ~np.isnan(x)
    np.testing.assert_array_equal(out[finite_or_inf], want[finite_or_inf])
    assert out[EDGE.index(0x7F7F8000)] == 0x7F80 and out[EDGE.index(0x3F808000)] == 0x3F80
    assert out[EDGE.index(0x00008000)] == 0x0000 and out[EDGE.index(0x00018000)] == 0x0002
    # NaN stays NaN with its sign (torch writes 0xFFFF for every NaN; we keep sign and top payload, quietened)
    nan = out[len(EDGE):len(EDGE) + len(NAN)]
    np.testing.assert_array_equal(nan, [0x7FC0, 0x7FC0, 0xFFC1])
    # bf16 -> f32 is exact: the widened result equals torch's
    np.testing.assert_array_equal(back[finite_or_inf], torch.from_numpy(want.view(np.int16)).view(
        torch.bfloat16).float().numpy()[finite_or_inf])
    assert np.isnan(back[~finite_or_inf]).all()


@pytest.mark.parametrize("mode", ["round", "floor", "ceil", "trunc", "odd"])
def test_tcvt_f32_to_bf16_other_round_modes(kit, mode):
    x = _inputs()
    out, _ = _run(kit, mode, x)
    finite = np.isfinite(x)
    np.testing.assert_array_equal(out[finite], _mode_ref(x, mode)[finite])
    assert out[EDGE.index(0x7F800000)] == 0x7F80 and out[EDGE.index(0xFF800000)] == 0xFF80


MATMUL = PRELUDE + """
__global__ AICORE void mm(__gm__ bfloat16_t* a, __gm__ bfloat16_t* b, __gm__ float* c) {
  using Mat = Tile<TileType::Mat, bfloat16_t, 32, 32, BLayout::ColMajor, 32, 32, SLayout::RowMajor, 512>;
  Mat am, bm;
  Tile<TileType::Left, bfloat16_t, 32, 32, BLayout::RowMajor, 32, 32, SLayout::RowMajor, 512> al;
  Tile<TileType::Right, bfloat16_t, 32, 32, BLayout::RowMajor, 32, 32, SLayout::ColMajor, 512> br;
  Tile<TileType::Acc, float, 32, 32, BLayout::ColMajor, 32, 32, SLayout::RowMajor, 1024> acc;
  TASSIGN(am, 0); TASSIGN(bm, 4096); TASSIGN(al, 0); TASSIGN(br, 0); TASSIGN(acc, 0);
  GlobalTensor<bfloat16_t, pto::Shape<32, 32>, pto::Stride<32, 1>> ga(a), gb(b);
  GlobalTensor<float, pto::Shape<32, 32>, pto::Stride<32, 1>> gc(c);
  TLOAD(am, ga); TLOAD(bm, gb);
  TMOV(al, am); TMOV(br, bm);
  TMATMUL(acc, al, br);
  TMATMUL_ACC(acc, acc, al, br);
  TSTORE(gc, acc);
}
"""


def test_bf16_matmul_accumulates_in_f32_exactly(kit):
    g = torch.Generator().manual_seed(3)
    a = torch.randn(32, 32, generator=g).to(torch.bfloat16)
    b = torch.randn(32, 32, generator=g).to(torch.bfloat16)
    c = np.zeros((32, 32), np.float32)
    kit.kernel(MATMUL, "mm")(a.view(torch.int16).numpy().copy(), b.view(torch.int16).numpy().copy(), c)
    af, bf = a.float().numpy(), b.float().numpy()
    one = np.zeros((32, 32), np.float32)
    for k in range(32):  # each instruction: f32 products (exact) added per k, ascending, from zero
        one = one + np.outer(af[:, k], bf[k, :]).astype(np.float32)
    np.testing.assert_array_equal(c, one + one)  # TMATMUL, then TMATMUL_ACC adds its own sum to it
    np.testing.assert_allclose(c, 2 * (a.float() @ b.float()).numpy(), rtol=1e-5, atol=1e-4)
