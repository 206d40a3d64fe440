"""Hand-written kernels against the ISA headers: layouts, padding, rounding, errors, platform."""

from __future__ import annotations

import numpy as np
import pytest
from sim_isa_kit import SimFailure

pytestmark = pytest.mark.sim

PRELUDE = '#include "common/pto_instr.hpp"\nusing namespace pto;\n'

PAD_KERNEL = (
    PRELUDE
    + """
template <PadValue P>
void load_partial(float* in, float* out, int vr, int vc) {
  using GS = pto::Shape<-1, -1>;
  using GD = pto::Stride<-1, 1>;
  GlobalTensor<float, GS, GD> src(in, GS(vr, vc), GD(64));
  Tile<TileType::Vec, float, 16, 64, BLayout::RowMajor, -1, -1, SLayout::NoneBox, 512, P> part(vr, vc);
  TASSIGN(part, 0);
  TLOAD(part, src);
  Tile<TileType::Vec, float, 16, 64> whole;  // aliases the same UB bytes
  TASSIGN(whole, 0);
  GlobalTensor<float, pto::Shape<16, 64>, pto::Stride<64, 1>> dst(out);
  TSTORE(dst, whole);
}
__global__ AICORE void pad_zero(__gm__ float* a, __gm__ float* o, int32_t vr, int32_t vc) {
  load_partial<PadValue::Zero>(a, o, vr, vc);
}
__global__ AICORE void pad_max(__gm__ float* a, __gm__ float* o, int32_t vr, int32_t vc) {
  load_partial<PadValue::Max>(a, o, vr, vc);
}
__global__ AICORE void pad_min(__gm__ float* a, __gm__ float* o, int32_t vr, int32_t vc) {
  load_partial<PadValue::Min>(a, o, vr, vc);
}
"""
)


@pytest.mark.parametrize(("kernel", "fill"), [("pad_zero", 0.0), ("pad_max", np.inf), ("pad_min", -np.inf)])
def test_tload_partial_tile_fills_pad(kit, rng, kernel, fill):
    a = rng.uniform(-1, 1, size=(16, 64)).astype(np.float32)
    o = np.zeros_like(a)
    kit.kernel(PAD_KERNEL, kernel)(a, o, 5, 40)
    want = np.full_like(a, fill)
    want[:5, :40] = a[:5, :40]
    np.testing.assert_array_equal(o, want)


LAYOUT_KERNEL = (
    PRELUDE
    + """
template <class TileT, class T>
void roundtrip(T* in, T* out, T* raw) {
  GlobalTensor<T, pto::Shape<32, 32>, pto::Stride<32, 1>> src(in), dst(out);
  TileT t;
  TASSIGN(t, 0);
  TLOAD(t, src);
  TSTORE(dst, t);
  const T* p = t.data();
  for (int i = 0; i < 32 * 32; ++i) raw[i] = p[i];
}
__global__ AICORE void nz_f16(__gm__ half* a, __gm__ half* o, __gm__ half* raw) {
  roundtrip<Tile<TileType::Mat, half, 32, 32, BLayout::ColMajor, 32, 32, SLayout::RowMajor, 512>>(a, o, raw);
}
__global__ AICORE void zn_f32(__gm__ float* a, __gm__ float* o, __gm__ float* raw) {
  roundtrip<Tile<TileType::Right, float, 32, 32, BLayout::RowMajor, 32, 32, SLayout::ColMajor, 512>>(a, o, raw);
}
__global__ AICORE void zz_f32(__gm__ float* a, __gm__ float* o, __gm__ float* raw) {
  roundtrip<Tile<TileType::Left, float, 32, 32, BLayout::RowMajor, 32, 32, SLayout::RowMajor, 512>>(a, o, raw);
}
__global__ AICORE void nn_f16(__gm__ half* a, __gm__ half* o, __gm__ half* raw) {
  roundtrip<Tile<TileType::Mat, half, 32, 32, BLayout::ColMajor, 32, 32, SLayout::ColMajor, 512>>(a, o, raw);
}
__global__ AICORE void acc_f32(__gm__ float* a, __gm__ float* o, __gm__ float* raw) {
  roundtrip<Tile<TileType::Acc, float, 32, 32, BLayout::ColMajor, 32, 32, SLayout::RowMajor, 1024>>(a, o, raw);
}
__global__ AICORE void colmajor_f32(__gm__ float* a, __gm__ float* o, __gm__ float* raw) {
  roundtrip<Tile<TileType::Vec, float, 32, 32, BLayout::ColMajor>>(a, o, raw);
}
"""
)


def _boxed_offset(r, c, rows, cols, ir, ic, outer_col, inner_col):
    br, i_r = divmod(r, ir)
    bc, i_c = divmod(c, ic)
    inner = i_c * ir + i_r if inner_col else i_r * ic + i_c
    return (bc * rows * ic + br * ir * ic if outer_col else br * cols * ir + bc * ir * ic) + inner


@pytest.mark.parametrize(
    ("kernel", "dtype", "box", "outer_col", "inner_col"),
    [
        ("nz_f16", np.float16, (16, 16), True, False),
        ("zn_f32", np.float32, (8, 16), False, True),
        ("zz_f32", np.float32, (16, 8), False, False),
        ("nn_f16", np.float16, (16, 16), True, True),
        ("acc_f32", np.float32, (16, 16), True, False),
        ("colmajor_f32", np.float32, (1, 1), True, False),
    ],
)
def test_tile_layout_offsets(kit, kernel, dtype, box, outer_col, inner_col):
    a = np.arange(32 * 32).reshape(32, 32).astype(dtype)
    o, raw = np.zeros_like(a), np.zeros(32 * 32, dtype)
    kit.kernel(LAYOUT_KERNEL, kernel)(a, o, raw)
    np.testing.assert_array_equal(o, a)
    want = np.zeros(32 * 32, dtype)
    for r in range(32):
        for c in range(32):
            want[_boxed_offset(r, c, 32, 32, *box, outer_col, inner_col)] = a[r, c]
    np.testing.assert_array_equal(raw, want)


ERROR_KERNEL = (
    PRELUDE
    + """
__global__ AICORE void ub_overflow(__gm__ float* a, int64_t addr) {
  Tile<TileType::Vec, float, 128, 128> t;  // 64 KiB
  TASSIGN(t, addr);
}
__global__ AICORE void l0c_overflow(__gm__ float* a, int64_t addr) {
  Tile<TileType::Acc, float, 128, 128, BLayout::ColMajor, 128, 128, SLayout::RowMajor, 1024> t;
  TASSIGN(t, addr);
}
__global__ AICORE void valid_mismatch(__gm__ float* a) {
  Tile<TileType::Vec, float, 16, 16> x;
  Tile<TileType::Vec, float, 16, 16, BLayout::RowMajor, -1, -1> y(8, 16);
  TASSIGN(x, 0);
  TASSIGN(y, 1024);
  TADD(x, x, y);
}
__global__ AICORE void unassigned(__gm__ float* a) {
  Tile<TileType::Vec, float, 16, 16> x;
  TEXP(x, x);
}
__global__ AICORE void int_div_zero(__gm__ int32_t* a) {
  Tile<TileType::Vec, int32_t, 8, 8> x;
  TASSIGN(x, 0);
  TEXPANDS(x, 0);
  TDIVS(x, x, 0);
}
__global__ AICORE void matmul_k_mismatch(__gm__ float* a) {
  Tile<TileType::Left, half, 16, 32, BLayout::RowMajor, 16, 32, SLayout::RowMajor> l;
  Tile<TileType::Right, half, 16, 16, BLayout::RowMajor, 16, 16, SLayout::ColMajor> r;
  Tile<TileType::Acc, float, 16, 16, BLayout::ColMajor, 16, 16, SLayout::RowMajor, 1024> c;
  TASSIGN(l, 0); TASSIGN(r, 0); TASSIGN(c, 0);
  TMATMUL(c, l, r);
}
__global__ AICORE void load_too_big(__gm__ float* a) {
  Tile<TileType::Vec, float, 16, 16> x;
  TASSIGN(x, 0);
  GlobalTensor<float, pto::Shape<8, 16>, pto::Stride<16, 1>> g(a);
  TLOAD(x, g);
}
"""
)


@pytest.mark.parametrize(
    ("kernel", "args", "pattern"),
    [
        (
            "ub_overflow",
            (196608 - 65536 + 4,),
            r"TASSIGN of Vec tile 128x128 \(65536 B\) at byte address 131076 "
            r"exceeds UB capacity 196608 B \(a2a3\)",
        ),
        ("ub_overflow", (-64,), "exceeds UB capacity"),
        ("l0c_overflow", (65536 + 32,), "exceeds L0C capacity 131072 B"),
        ("valid_mismatch", (), r"TADD operands have different valid shapes \(16, 16\) vs \(8, 16\)"),
        ("unassigned", (), "TEXP on a Vec tile 16x16 that was never TASSIGNed"),
        ("int_div_zero", (), "TDIVS integer division by zero"),
        ("matmul_k_mismatch", (), "TMATMUL K mismatch"),
        ("load_too_big", (), r"TLOAD of valid region \(16, 16\) does not fit the GlobalTensor view 8x16"),
    ],
)
def test_isa_misuse_raises_sim_error(kit, kernel, args, pattern):
    buf = np.zeros(256, np.float32 if kernel != "int_div_zero" else np.int32)
    with pytest.raises(SimFailure, match="SimError: .*" + pattern):
        kit.kernel(ERROR_KERNEL, kernel)(buf, *args)


def test_ub_capacity_follows_platform_macro(kit):
    k = kit.kernel(ERROR_KERNEL, "ub_overflow", defines=("-DPTO_SIM_ARCH_A5",))
    k(np.zeros(4, np.float32), 196608)  # 192 KiB + 64 KiB fits the a5 UB of 256 KiB
    with pytest.raises(SimFailure, match=r"exceeds UB capacity 262144 B \(a5\)"):
        k(np.zeros(4, np.float32), 196608 + 4)
    kit.kernel(ERROR_KERNEL, "l0c_overflow", defines=("-DPTO_SIM_ARCH_A5",))(np.zeros(4, np.float32), 131072)


CVT_KERNEL = (
    PRELUDE
    + """
template <RoundMode M, class D>
void cvt(float* in, D* out) {
  Tile<TileType::Vec, float, 1, 16> s;
  Tile<TileType::Vec, D, 1, 16> d;
  TASSIGN(s, 0); TASSIGN(d, 256);
  GlobalTensor<float, pto::Shape<1, 16>, pto::Stride<16, 1>> gi(in);
  GlobalTensor<D, pto::Shape<1, 16>, pto::Stride<16, 1>> go(out);
  TLOAD(s, gi);
  TCVT(d, s, M);
  TSTORE(go, d);
}
__global__ AICORE void rint(__gm__ float* a, __gm__ int32_t* o) { cvt<RoundMode::CAST_RINT>(a, o); }
__global__ AICORE void round(__gm__ float* a, __gm__ int32_t* o) { cvt<RoundMode::CAST_ROUND>(a, o); }
__global__ AICORE void floor(__gm__ float* a, __gm__ int32_t* o) { cvt<RoundMode::CAST_FLOOR>(a, o); }
__global__ AICORE void ceil(__gm__ float* a, __gm__ int32_t* o) { cvt<RoundMode::CAST_CEIL>(a, o); }
__global__ AICORE void trunc(__gm__ float* a, __gm__ int32_t* o) { cvt<RoundMode::CAST_TRUNC>(a, o); }
__global__ AICORE void odd(__gm__ float* a, __gm__ int32_t* o) { cvt<RoundMode::CAST_ODD>(a, o); }
__global__ AICORE void to_i16_sat(__gm__ float* a, __gm__ int16_t* o) { cvt<RoundMode::CAST_RINT>(a, o); }
"""
)

CVT_IN = np.array(
    [0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 1.2, -1.2, 1.7, -1.7, 3.0, 1e10, -1e10, 7.5, 0.0, -3.5], np.float32
)
_X = CVT_IN.astype(np.float64)
_ODD = np.where(
    np.abs(_X - np.floor(_X) - 0.5) < 1e-12,
    np.where(np.floor(_X) % 2 != 0, np.floor(_X), np.floor(_X) + 1),
    np.rint(_X),
)


@pytest.mark.parametrize(
    ("kernel", "ref"),
    [
        ("rint", np.rint(_X)),
        ("round", np.sign(_X) * np.floor(np.abs(_X) + 0.5)),
        ("floor", np.floor(_X)),
        ("ceil", np.ceil(_X)),
        ("trunc", np.trunc(_X)),
        ("odd", _ODD),
    ],
)
def test_tcvt_float_to_int_round_modes(kit, kernel, ref):
    o = np.zeros(16, np.int32)
    kit.kernel(CVT_KERNEL, kernel)(CVT_IN.copy(), o)
    want = np.clip(ref, np.iinfo(np.int32).min, np.iinfo(np.int32).max).astype(np.int64)
    np.testing.assert_array_equal(o.astype(np.int64), want)


def test_tcvt_clamps_out_of_range_ints(kit):
    o = np.zeros(16, np.int16)
    kit.kernel(CVT_KERNEL, "to_i16_sat")(CVT_IN.copy(), o)
    assert o[11] == 32767 and o[12] == -32768


MISC_KERNEL = (
    PRELUDE
    + """
__global__ AICORE void colsum_tree_f16(__gm__ half* a, __gm__ half* seq, __gm__ half* tree) {
  Tile<TileType::Vec, half, 13, 64> x, tmp;
  Tile<TileType::Vec, half, 1, 64> s, t;
  TASSIGN(x, 0); TASSIGN(tmp, 4096); TASSIGN(s, 8192); TASSIGN(t, 8192 + 128);
  TLOAD(x, GlobalTensor<half, pto::Shape<13, 64>, pto::Stride<64, 1>>(a));
  TCOLSUM(s, x, tmp, false);
  TCOLSUM(t, x, tmp, true);
  auto gs = GlobalTensor<half, pto::Shape<1, 64>, pto::Stride<64, 1>>(seq);
  auto gt = GlobalTensor<half, pto::Shape<1, 64>, pto::Stride<64, 1>>(tree);
  TSTORE(gs, s);
  TSTORE(gt, t);
}
__global__ AICORE void rowsum_f16(__gm__ half* a, __gm__ half* rs, __gm__ float* rs32, __gm__ half* cs) {
  Tile<TileType::Vec, half, 16, 128> x;
  Tile<TileType::Vec, half, 16, 1, BLayout::ColMajor> r;
  Tile<TileType::Vec, float, 16, 1, BLayout::ColMajor> r32;
  Tile<TileType::Vec, half, 1, 128> c;
  TASSIGN(x, 0); TASSIGN(r, 8192); TASSIGN(r32, 8192 + 64); TASSIGN(c, 8192 + 256);
  TLOAD(x, GlobalTensor<half, pto::Shape<16, 128>, pto::Stride<128, 1>>(a));
  TROWSUM(r, x);
  TROWSUM(r32, x, x);
  TCOLSUM(c, x);
  auto grs = GlobalTensor<half, pto::Shape<16, 1>, pto::Stride<1, 1>>(rs);
  auto grs32 = GlobalTensor<float, pto::Shape<16, 1>, pto::Stride<1, 1>>(rs32);
  auto gcs = GlobalTensor<half, pto::Shape<1, 128>, pto::Stride<128, 1>>(cs);
  TSTORE(grs, r);
  TSTORE(grs32, r32);
  TSTORE(gcs, c);
}
__global__ AICORE void colred_trans(__gm__ float* a, __gm__ float* mx, __gm__ float* mn, __gm__ float* t) {
  Tile<TileType::Vec, float, 8, 16> x;
  Tile<TileType::Vec, float, 1, 16> cmax, cmin;
  Tile<TileType::Vec, float, 16, 8> tr;
  TASSIGN(x, 0); TASSIGN(cmax, 512); TASSIGN(cmin, 576); TASSIGN(tr, 1024);
  TLOAD(x, GlobalTensor<float, pto::Shape<8, 16>, pto::Stride<16, 1>>(a));
  TCOLMAX(cmax, x);
  TCOLMIN(cmin, x);
  TTRANS(tr, x);
  auto g1 = GlobalTensor<float, pto::Shape<1, 16>, pto::Stride<16, 1>>(mx);
  auto g2 = GlobalTensor<float, pto::Shape<1, 16>, pto::Stride<16, 1>>(mn);
  auto g3 = GlobalTensor<float, pto::Shape<16, 8>, pto::Stride<8, 1>>(t);
  TSTORE(g1, cmax); TSTORE(g2, cmin); TSTORE(g3, tr);
}
__global__ AICORE void atomic_add(__gm__ float* a, __gm__ float* o) {
  Tile<TileType::Vec, float, 8, 8> x;
  TASSIGN(x, 0);
  TLOAD(x, GlobalTensor<float, pto::Shape<8, 8>, pto::Stride<8, 1>>(a));
  auto g = GlobalTensor<float, pto::Shape<8, 8>, pto::Stride<8, 1>>(o);
  TSTORE<AtomicType::AtomicAdd>(g, x);
  TSTORE(g, x, AtomicType::AtomicAdd);
}
__global__ AICORE void strided_views(__gm__ float* a, __gm__ float* o, int32_t ld) {
  // rows of a 3-D ND view [2, 4, 8] with a padded leading dimension; store through a DN view
  using S3 = pto::Shape<2, 4, 8>;
  using D3 = pto::Stride<-1, 8, 1>;
  Tile<TileType::Vec, float, 8, 8> x;
  TASSIGN(x, 0);
  TLOAD(x, GlobalTensor<float, S3, D3>(a, S3(), D3(ld)));
  GlobalTensor<float, pto::Shape<8, 8>, pto::Stride<1, 8>, Layout::DN> gt(o);
  Tile<TileType::Vec, float, 8, 8, BLayout::ColMajor> y;
  TASSIGN(y, 256);
  TMOV(y, x);
  TSTORE(gt, y);
}
__global__ AICORE void block_ids(__gm__ int64_t* o) {
  o[0] = get_block_idx(); o[1] = get_block_num(); o[2] = get_subblockid(); o[3] = get_subblockdim();
}
"""
)


def test_row_and_col_sums_f16(kit, rng):
    a = rng.uniform(0, 1, size=(16, 128)).astype(np.float16)
    rs, rs32, cs = (
        np.zeros((16, 1), np.float16),
        np.zeros((16, 1), np.float32),
        np.zeros((1, 128), np.float16),
    )
    kit.kernel(MISC_KERNEL, "rowsum_f16")(a, rs, rs32, cs)
    exact = a.astype(np.float64).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(rs32, exact, rtol=1e-6)  # accumulated in f32
    np.testing.assert_allclose(rs.astype(np.float64), exact, rtol=1e-3)
    col = np.zeros(128, np.float16)
    for r in range(16):  # TCOLSUM accumulates in the destination dtype, top to bottom
        col = (col + a[r]).astype(np.float16)
    np.testing.assert_array_equal(cs[0], col)


ROWSUM_LONG_KERNEL = (
    PRELUDE
    + """
__global__ AICORE void rowsum_f32_long(__gm__ float* a, __gm__ float* rs) {
  Tile<TileType::Vec, float, 4, 1024> x;
  Tile<TileType::Vec, float, 4, 1, BLayout::ColMajor> r;
  TASSIGN(x, 0); TASSIGN(r, 16384);
  TLOAD(x, GlobalTensor<float, pto::Shape<4, 1024>, pto::Stride<1024, 1>>(a));
  TROWSUM(r, x);
  auto g = GlobalTensor<float, pto::Shape<4, 1>, pto::Stride<1, 1>>(rs);
  TSTORE(g, r);
}
"""
)


def test_row_sum_f32_rounds_once(kit, rng):
    """A long f32 row sum is the exact sum rounded once, not a left-to-right f32 sum: each 2**-25 after a
    leading 1.0 is half an ulp and would vanish one at a time (row 0); random rows agree with float64."""
    a = rng.standard_normal((4, 1024)).astype(np.float32)
    a[0, 0], a[0, 1:] = 1.0, np.float32(2.0**-25)
    rs = np.zeros((4, 1), np.float32)
    kit.kernel(ROWSUM_LONG_KERNEL, "rowsum_f32_long")(a, rs)
    exact = a.astype(np.float64).sum(axis=1).astype(np.float32)
    left_to_right = np.float32(1.0)
    for v in a[0, 1:]:
        left_to_right = np.float32(left_to_right + v)
    assert left_to_right == np.float32(1.0) != exact[0]  # the data tells the two sums apart
    np.testing.assert_array_equal(rs[:, 0], exact)


def test_col_sum_binary_tree_f16(kit, rng):
    """TCOLSUM(dst, src, tmp, isBinary): true sums row pairs level by level (an odd row folds into row 0),
    false top to bottom; both round to f16 at every step, so the two differ in the last bits."""
    a = rng.standard_normal((13, 64)).astype(np.float16)
    seq, tree = np.zeros((1, 64), np.float16), np.zeros((1, 64), np.float16)
    kit.kernel(MISC_KERNEL, "colsum_tree_f16")(a, seq, tree)
    want_seq = a[0].copy()
    for r in range(1, 13):
        want_seq = (want_seq + a[r]).astype(np.float16)
    buf, cnt = a.copy(), 13
    while cnt > 1:
        half = cnt // 2
        paired = (buf[0 : 2 * half : 2] + buf[1 : 2 * half : 2]).astype(np.float16)
        buf[:half] = paired
        if cnt % 2:
            buf[0] = (buf[0] + buf[cnt - 1]).astype(np.float16)
        cnt = half
    np.testing.assert_array_equal(seq[0], want_seq)
    np.testing.assert_array_equal(tree[0], buf[0])
    assert not np.array_equal(want_seq, buf[0])  # the data tells the two orders apart


def test_col_max_min_and_transpose(kit, rng):
    a = rng.uniform(-1, 1, size=(8, 16)).astype(np.float32)
    mx, mn, t = np.zeros((1, 16), np.float32), np.zeros((1, 16), np.float32), np.zeros((16, 8), np.float32)
    kit.kernel(MISC_KERNEL, "colred_trans")(a, mx, mn, t)
    np.testing.assert_array_equal(mx[0], a.max(axis=0))
    np.testing.assert_array_equal(mn[0], a.min(axis=0))
    np.testing.assert_array_equal(t, a.T)


def test_atomic_add_store(kit, rng):
    a = rng.uniform(-1, 1, size=(8, 8)).astype(np.float32)
    o = np.ones_like(a)
    kit.kernel(MISC_KERNEL, "atomic_add")(a, o)
    np.testing.assert_allclose(o, 1 + 2 * a, rtol=1e-6)


def test_nd_3d_view_with_dynamic_stride_and_dn_store(kit, rng):
    ld = 40
    a = rng.uniform(-1, 1, size=(2, ld)).astype(np.float32)
    o = np.zeros((8, 8), np.float32)
    kit.kernel(MISC_KERNEL, "strided_views")(a.reshape(-1).copy(), o, ld)
    rows = np.concatenate([a[0, :32].reshape(4, 8), a[1, :32].reshape(4, 8)])
    np.testing.assert_array_equal(o, rows.T)  # the DN view with strides [1, 8] stores the transpose


def test_core_identity_defaults(kit):
    o = np.full(4, -1, np.int64)
    kit.kernel(MISC_KERNEL, "block_ids")(o)
    np.testing.assert_array_equal(o, [0, 1, 0, 1])


def test_core_identity_set_through_exported_hook(kit):
    import ctypes

    so, _ = kit.build(MISC_KERNEL)
    lib = ctypes.CDLL(str(so))
    lib.pto_sim_set_core_context.argtypes = [ctypes.c_int64] * 4
    lib.pto_sim_set_core_context(5, 8, 1, 2)
    try:
        o = np.full(4, -1, np.int64)
        kit.kernel(MISC_KERNEL, "block_ids")(o)
        np.testing.assert_array_equal(o, [5, 8, 1, 2])
    finally:
        lib.pto_sim_set_core_context(0, 1, 0, 1)
