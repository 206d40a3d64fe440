"""The simulator's fast paths give the exact bits of the plain per-element loops they replace."""

from __future__ import annotations

import numpy as np
import pytest

pytestmark = pytest.mark.sim

PRELUDE = '#include "common/pto_instr.hpp"\nusing namespace pto;\n'

WIDEN_KERNEL = PRELUDE + """
__global__ AICORE void widen_all(__gm__ half* h, __gm__ float* fast, __gm__ float* cast) {
  for (int i = 0; i < 65536; ++i) {
    fast[i] = pto::sim::widen_half(h[i]);
    cast[i] = static_cast<float>(h[i]);
  }
}
"""


def test_widen_half_matches_the_compiler_cast_for_every_bit_pattern(kit):
    h = np.arange(65536, dtype=np.uint32).astype(np.uint16).view(np.float16)
    fast, cast = np.zeros(65536, np.float32), np.zeros(65536, np.float32)
    kit.kernel(WIDEN_KERNEL, "widen_all")(h, fast, cast)
    np.testing.assert_array_equal(fast.view(np.uint32), cast.view(np.uint32))
    finite = np.isfinite(h)
    np.testing.assert_array_equal(fast[finite], h[finite].astype(np.float32))


# Odd valid shapes (not multiples of the 4-row x 16-column register blocks) in capacity-sized tiles.
MATMUL_KERNEL = PRELUDE + """
using GS = pto::Shape<-1, -1>;
using GD = pto::Stride<-1, 1>;
__global__ AICORE void mm_odd(__gm__ half* a, __gm__ half* b, __gm__ float* init, __gm__ float* c,
                              int32_t m, int32_t k, int32_t n, int32_t acc) {
  GlobalTensor<half, GS, GD> ga(a, GS(m, k), GD(k)), gb(b, GS(k, n), GD(n));
  GlobalTensor<float, GS, GD> gi(init, GS(m, n), GD(n)), gc(c, GS(m, n), GD(n));
  Tile<TileType::Mat, half, 48, 48, BLayout::ColMajor, -1, -1, SLayout::RowMajor, 512> am(m, k), bm(k, n);
  TASSIGN(am, 0);
  TASSIGN(bm, 48 * 48 * 2);
  TLOAD(am, ga);
  TLOAD(bm, gb);
  Tile<TileType::Left, half, 48, 48, BLayout::RowMajor, -1, -1, SLayout::RowMajor, 512> l(m, k);
  Tile<TileType::Right, half, 48, 48, BLayout::RowMajor, -1, -1, SLayout::ColMajor, 512> r(k, n);
  TASSIGN(l, 0);
  TASSIGN(r, 0);
  TMOV(l, am);
  TMOV(r, bm);
  Tile<TileType::Acc, float, 48, 48, BLayout::ColMajor, -1, -1, SLayout::RowMajor, 1024> out(m, n);
  TASSIGN(out, 0);
  if (acc) {
    Tile<TileType::Vec, float, 48, 48, BLayout::RowMajor, -1, -1> v(m, n);
    TASSIGN(v, 0);
    TLOAD(v, gi);
    Tile<TileType::Acc, float, 48, 48, BLayout::ColMajor, -1, -1, SLayout::RowMajor, 1024> in(m, n);
    TASSIGN(in, 48 * 48 * 4);
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j) in.at(i, j) = v.at(i, j);
    TMATMUL_ACC(out, in, l, r);
  } else {
    TMATMUL(out, l, r);
  }
  TSTORE(gc, out);
}
"""


def _sequential(a: np.ndarray, b: np.ndarray, init: np.ndarray) -> np.ndarray:
    """f32 result of summing k ascending from zero, each product and each sum rounded to f32 (no fused
    multiply-add), then adding that sum to ``init`` (one more rounding)."""
    a32, b32 = a.astype(np.float32), b.astype(np.float32)
    out = np.zeros(init.shape, np.float32)
    for k in range(a.shape[1]):
        out = (out + (a32[:, k:k + 1] * b32[k:k + 1, :]).astype(np.float32)).astype(np.float32)
    return (init.astype(np.float32) + out).astype(np.float32)


@pytest.mark.parametrize(("m", "k", "n"), [(20, 33, 40), (48, 48, 48), (3, 7, 5), (17, 48, 16), (4, 1, 33), (8, 40, 48)])
@pytest.mark.parametrize("acc", [0, 1])
@pytest.mark.parametrize("defines", [(), ("-DPTO_SIM_NO_AVX512",), ("-DPTO_SIM_NO_AVX2",)], ids=["host", "avx2", "sse"])
def test_blocked_matmul_is_bit_identical_to_the_sequential_sum(kit, rng, m, k, n, acc, defines):
    # magnitudes spread over many binades, so a fused or reordered sum would show in the low bits
    a = (rng.standard_normal((m, k)) * np.exp2(rng.integers(-8, 8, (m, k)))).astype(np.float16)
    b = (rng.standard_normal((k, n)) * np.exp2(rng.integers(-8, 8, (k, n)))).astype(np.float16)
    init = rng.standard_normal((m, n)).astype(np.float32) * 100
    c = np.full((m, n), np.nan, np.float32)
    kit.kernel(MATMUL_KERNEL, "mm_odd", defines)(a, b, init, c, m, k, n, acc)
    want = _sequential(a, b, init if acc else np.zeros_like(init))
    np.testing.assert_array_equal(c.view(np.uint32), want.view(np.uint32))


# TMOV/TEXTRACT copy in runs when both tiles store lines the same way; an unaligned window crosses
# box boundaries of the source and not of the destination.
EXTRACT_KERNEL = PRELUDE + """
template <class TileT>
void dump(const TileT& t, float* out) {
  for (int r = 0; r < TileT::Rows; ++r)
    for (int c = 0; c < TileT::Cols; ++c) out[r * TileT::Cols + c] = static_cast<float>(t.at(r, c));
}
template <class SrcT>
void extract_all(SrcT& m, float* o, int ro, int co) {
  Tile<TileType::Left, half, 16, 32, BLayout::RowMajor, 16, 32, SLayout::RowMajor, 512> zz;
  Tile<TileType::Right, half, 16, 32, BLayout::RowMajor, 16, 32, SLayout::ColMajor, 512> nz;
  Tile<TileType::Mat, half, 16, 32, BLayout::ColMajor, 16, 32, SLayout::RowMajor, 512> zn;
  Tile<TileType::Vec, half, 16, 32> rowmajor;
  Tile<TileType::Vec, half, 16, 32, BLayout::ColMajor> colmajor;
  TASSIGN(zz, 0);
  TASSIGN(nz, 0);
  TASSIGN(zn, 100000);
  TASSIGN(rowmajor, 0);
  TASSIGN(colmajor, 4096);
  TEXTRACT(zz, m, ro, co);
  TEXTRACT(nz, m, ro, co);
  TEXTRACT(zn, m, ro, co);
  TEXTRACT(rowmajor, m, ro, co);
  TEXTRACT(colmajor, m, ro, co);
  dump(zz, o);
  dump(nz, o + 512);
  dump(zn, o + 1024);
  dump(rowmajor, o + 1536);
  dump(colmajor, o + 2048);
}
__global__ AICORE void extract_from_nz(__gm__ half* a, __gm__ float* o, int32_t ro, int32_t co) {
  GlobalTensor<half, pto::Shape<48, 64>, pto::Stride<64, 1>> ga(a);
  Tile<TileType::Mat, half, 48, 64, BLayout::ColMajor, 48, 64, SLayout::RowMajor, 512> m;
  TASSIGN(m, 0);
  TLOAD(m, ga);
  extract_all(m, o, ro, co);
}
__global__ AICORE void extract_from_colmajor(__gm__ half* a, __gm__ float* o, int32_t ro, int32_t co) {
  GlobalTensor<half, pto::Shape<48, 64>, pto::Stride<64, 1>> ga(a);
  Tile<TileType::Mat, half, 48, 64, BLayout::ColMajor> m;
  TASSIGN(m, 0);
  TLOAD(m, ga);
  extract_all(m, o, ro, co);
}
"""


@pytest.mark.parametrize("kernel", ["extract_from_nz", "extract_from_colmajor"])
@pytest.mark.parametrize(("ro", "co"), [(0, 0), (16, 16), (5, 9), (32, 31)])
def test_extract_windows_into_every_layout(kit, rng, kernel, ro, co):
    a = rng.standard_normal((48, 64)).astype(np.float16)
    o = np.full(5 * 512, np.nan, np.float32)
    kit.kernel(EXTRACT_KERNEL, kernel)(a, o, ro, co)
    want = a[ro:ro + 16, co:co + 32].astype(np.float32)
    for i, layout in enumerate(("zZ", "nZ", "zN", "row-major", "col-major")):
        np.testing.assert_array_equal(o[i * 512:(i + 1) * 512].reshape(16, 32), want, err_msg=layout)
