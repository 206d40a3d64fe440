// TMATMUL family: operands upcast to the accumulator type; each instruction sums its own product from zero over
// k ascending and then adds it to the accumulator or bias it starts from, as the reference CPU simulator does.
// -DPTO_SIM_NO_AVX2 keeps the GEMM on its 4-wide path even where the host has AVX2, -DPTO_SIM_NO_AVX512 on
// its 8-wide path where it has AVX-512 (same results).
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "pto/sim/tile.hpp"
#include "pto/sim/vmath.hpp"

namespace pto {
namespace sim {

template <class A>
struct MatmulScratch {
    std::vector<A> lhs, rhs, out, init, line;
};

template <class A>
__attribute__((visibility("hidden"))) inline MatmulScratch<A>& matmul_scratch() {
    static thread_local MatmulScratch<A> s;
    return s;
}

enum class AccInit { Zero, Acc, Bias };

// Exact f16 -> f32 (what the cube does when it widens an operand); bit operations instead of a
// libgcc call per element on hosts without F16C. Signalling NaNs come out quiet, like the cast.
inline float widen_half(half h) {
    uint16_t b;
    std::memcpy(&b, &h, sizeof b);
    const uint32_t sign = static_cast<uint32_t>(b & 0x8000u) << 16;
    const uint32_t em = b & 0x7fffu;
    uint32_t bits;
    if (em >= 0x7c00u) {
        bits = sign | 0x7f800000u | ((em & 0x3ffu) << 13) | ((em & 0x3ffu) != 0 ? 0x400000u : 0u);
    } else if (em >= 0x0400u) {
        bits = sign | ((em << 13) + (112u << 23));
    } else {
        const float f = static_cast<float>(em) * 5.9604644775390625e-08f;  // subnormal: em * 2^-24, exact
        std::memcpy(&bits, &f, sizeof bits);
        bits |= sign;
    }
    float out;
    std::memcpy(&out, &bits, sizeof out);
    return out;
}

template <class A, class T>
inline A widen(T v) {
    if constexpr (std::is_same<A, float>::value && std::is_same<T, half>::value) {
        return widen_half(v);
    } else {
        return static_cast<A>(v);
    }
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(PTO_SIM_NO_AVX2)
typedef short pto_sim_v8hi __attribute__((vector_size(16)));
typedef float pto_sim_v8sf __attribute__((vector_size(32)));
// vcvtph2ps: the same exact widening, 8 at a time (the builtin behind _mm256_cvtph_ps).
__attribute__((target("avx,f16c"), visibility("hidden"))) inline void widen_half_f16c(float* out, const half* in,
                                                                                     int n) {
    int i = 0;
    for (; i + 8 <= n; i += 8) {
        pto_sim_v8hi h;
        std::memcpy(&h, in + i, sizeof h);
        const pto_sim_v8sf f = __builtin_ia32_vcvtph2ps256(h);
        std::memcpy(out + i, &f, sizeof f);
    }
    for (; i < n; ++i) out[i] = widen_half(in[i]);
}
#endif

// out[k] = widen<A>(in[k]) for k < n.
template <class A, class T>
inline void widen_run(A* out, const T* in, int n) {
#if defined(__x86_64__) && defined(__GNUC__) && !defined(PTO_SIM_NO_AVX2)
    if constexpr (std::is_same<A, float>::value && std::is_same<T, half>::value) {
        static const bool f16c = __builtin_cpu_supports("f16c");
        if (f16c) return widen_half_f16c(out, in, n);
    }
#endif
    for (int k = 0; k < n; ++k) out[k] = widen<A>(in[k]);
}

// Row-major copy of a tile's valid (rows x cols) region in the accumulator type, walking the tile's
// storage once, run by run (a run along rows is widened into `line` first, then spread down a column).
template <class A, class TileT>
inline void unpack(std::vector<A>& out, std::vector<A>& line, const TileT& t, int rows, int cols) {
    out.resize(static_cast<size_t>(rows) * cols);
    A* o = out.data();
    const auto* base = t.data();
    for_each_run<TileT>(rows, cols, [&](int64_t off, int r, int c, int n) {
        if (StorageRuns<TileT>::kAlongCols) {
            widen_run(o + static_cast<size_t>(r) * cols + c, base + off, n);
        } else {
            line.resize(static_cast<size_t>(n));
            widen_run(line.data(), base + off, n);
            for (int k = 0; k < n; ++k) o[static_cast<size_t>(r + k) * cols + c] = line[static_cast<size_t>(k)];
        }
    });
}

// dst's valid (rows x cols) region = the row-major (rows x cols) `in`, converted to dst's type.
template <class TileT, class A>
inline void pack(TileT& dst, const A* in, int rows, int cols) {
    using D = typename TileT::DType;
    D* base = dst.data();
    for_each_run<TileT>(rows, cols, [&](int64_t off, int r, int c, int n) {
        if constexpr (StorageRuns<TileT>::kAlongCols && std::is_same<D, A>::value) {
            copy_run<StorageRuns<TileT>::kLength>(base + off, in + static_cast<size_t>(r) * cols + c, n);
        } else {
            for (int k = 0; k < n; ++k) {
                base[off + k] = static_cast<D>(StorageRuns<TileT>::kAlongCols ? in[static_cast<size_t>(r) * cols + c + k]
                                                                           : in[static_cast<size_t>(r + k) * cols + c]);
            }
        }
    });
}

// out(M x N) += a(M x K) * b(K x N) for rows [i0, M) and columns [0, n_blk) with n_blk a multiple of
// 2 * W, in blocks of 4 rows x 2W columns kept in vector registers (W floats each) over the whole k loop.
// Each element gets a separate multiply and add per k, k ascending: the scalar loop's exact result.
#define PTO_SIM_GEMM_BLOCKS(W)                                                                   \
    typedef float vec __attribute__((vector_size(4 * (W))));                                     \
    int i = i0;                                                                                  \
    for (; i + 4 <= M; i += 4) {                                                                 \
        for (int j = 0; j < n_blk; j += 2 * (W)) {                                               \
            vec c[4][2];                                                                         \
            _Pragma("GCC unroll 4") for (int r = 0; r < 4; ++r) {                                \
                std::memcpy(&c[r][0], out + static_cast<size_t>(i + r) * N + j, sizeof(vec));    \
                std::memcpy(&c[r][1], out + static_cast<size_t>(i + r) * N + j + (W), sizeof(vec)); \
            }                                                                                    \
            const float* ar = a + static_cast<size_t>(i) * K;                                    \
            for (int k = 0; k < K; ++k) {                                                        \
                vec b0, b1;                                                                      \
                std::memcpy(&b0, b + static_cast<size_t>(k) * N + j, sizeof(vec));               \
                std::memcpy(&b1, b + static_cast<size_t>(k) * N + j + (W), sizeof(vec));         \
                _Pragma("GCC unroll 4") for (int r = 0; r < 4; ++r) {                            \
                    const vec av = ar[static_cast<size_t>(r) * K + k] - vec{}; /* x - +0 == x */ \
                    c[r][0] = c[r][0] + av * b0;                                                 \
                    c[r][1] = c[r][1] + av * b1;                                                 \
                }                                                                                \
            }                                                                                    \
            _Pragma("GCC unroll 4") for (int r = 0; r < 4; ++r) {                                \
                std::memcpy(out + static_cast<size_t>(i + r) * N + j, &c[r][0], sizeof(vec));    \
                std::memcpy(out + static_cast<size_t>(i + r) * N + j + (W), &c[r][1], sizeof(vec)); \
            }                                                                                    \
        }                                                                                        \
    }                                                                                            \
    return i;

// Returns the first row not done (the last M % 4 rows are left to the caller).
__attribute__((PTO_SIM_NO_CONTRACT)) inline int gemm_blocks_sse(float* out, const float* a, const float* b, int i0, int M, int K, int N, int n_blk) {
    PTO_SIM_GEMM_BLOCKS(4)
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(PTO_SIM_NO_AVX2)
// The same blocks 8 (AVX2) or 16 (AVX-512) floats wide (no FMA: multiply and add stay separate).
__attribute__((target("avx2"), PTO_SIM_NO_CONTRACT)) inline int gemm_blocks_avx2(float* out, const float* a,
                                                                                 const float* b, int i0, int M, int K,
                                                                                 int N, int n_blk) {
    PTO_SIM_GEMM_BLOCKS(8)
}

inline bool host_has_avx2() {
    static const bool yes = __builtin_cpu_supports("avx2");
    return yes;
}

#ifndef PTO_SIM_NO_AVX512
__attribute__((target("avx512f"), PTO_SIM_NO_CONTRACT)) inline int gemm_blocks_avx512(float* out, const float* a,
                                                                                      const float* b, int i0, int M,
                                                                                      int K, int N, int n_blk) {
    PTO_SIM_GEMM_BLOCKS(16)
}

inline bool host_has_avx512() {
    static const bool yes = __builtin_cpu_supports("avx512f");
    return yes;
}
#endif
#endif
#undef PTO_SIM_GEMM_BLOCKS

// out(M x N) += a(M x K) * b(K x N), all row-major, summed over k ascending per element.
template <class A>
inline void gemm_rows(A* out, const A* a, const A* b, int M, int K, int N) {
    int done_rows = 0, n_blk = 0;
    if constexpr (std::is_same<A, float>::value) {
#if defined(__x86_64__) && defined(__GNUC__) && !defined(PTO_SIM_NO_AVX2)
#ifndef PTO_SIM_NO_AVX512
        if (host_has_avx512() && N >= 32) {
            n_blk = N / 32 * 32;
            done_rows = gemm_blocks_avx512(out, a, b, 0, M, K, N, n_blk);
        }
#endif
        if (n_blk == 0 && host_has_avx2()) {
            n_blk = N / 16 * 16;
            done_rows = gemm_blocks_avx2(out, a, b, 0, M, K, N, n_blk);
        }
#endif
        if (n_blk == 0) {
            n_blk = N / 8 * 8;
            done_rows = gemm_blocks_sse(out, a, b, 0, M, K, N, n_blk);
        }
    }
    for (int i = 0; i < M; ++i) {  // what the blocks left: columns past n_blk, rows past done_rows
        A* o = out + static_cast<size_t>(i) * N;
        const A* ar = a + static_cast<size_t>(i) * K;
        const int j0 = i < done_rows ? n_blk : 0;
        if (j0 == N) continue;
        for (int k = 0; k < K; ++k) {
            const A av = ar[k];
            const A* br = b + static_cast<size_t>(k) * N;
            for (int j = j0; j < N; ++j) o[j] += av * br[j];
        }
    }
}

// acc(i, j) = init(i, j) + sum_k L(i, k) * R(k, j) with M = L.vr, K = L.vc, N = R.vc. The sum starts from zero and
// is added to init afterwards: a K-chained accumulation rounds once per instruction, not once per k.
template <class TAcc, class TL, class TR, class TInit>
inline void matmul(const char* op, TAcc& acc, const TL& lhs, const TR& rhs, AccInit mode, const TInit* init) {
    using A = typename TAcc::DType;
    require_assigned(op, acc);
    require_assigned(op, lhs);
    require_assigned(op, rhs);
    const int M = lhs.GetValidRow(), K = lhs.GetValidCol(), N = rhs.GetValidCol();
    if (rhs.GetValidRow() != K) {
        failf("pto sim: %s K mismatch: left valid shape (%d, %d), right valid shape (%d, %d)", op, M, K,
              rhs.GetValidRow(), N);
    }
    if (M > TAcc::Rows || N > TAcc::Cols) {
        failf("pto sim: %s result %dx%d does not fit the %dx%d accumulator", op, M, N, TAcc::Rows, TAcc::Cols);
    }
    if (mode == AccInit::Bias && (init == nullptr || init->GetValidCol() < N)) {
        failf("pto sim: %s bias tile must have at least %d valid columns", op, N);
    }
    MatmulScratch<A>& s = matmul_scratch<A>();
    unpack(s.lhs, s.line, lhs, M, K);
    unpack(s.rhs, s.line, rhs, K, N);
    s.out.assign(static_cast<size_t>(M) * N, A(0));
    gemm_rows(s.out.data(), s.lhs.data(), s.rhs.data(), M, K, N);
    if (mode == AccInit::Acc) {
        unpack(s.init, s.line, *init, M, N);
        for (size_t e = 0; e < s.out.size(); ++e) s.out[e] = s.init[e] + s.out[e];
    } else if (mode == AccInit::Bias) {
        for (int i = 0; i < M; ++i) {
            A* o = s.out.data() + static_cast<size_t>(i) * N;
            for (int j = 0; j < N; ++j) o[j] = static_cast<A>(init->at(0, j)) + o[j];
        }
    }
    pack(acc, s.out.data(), M, N);
}

}  // namespace sim

template <class TAcc, class TL, class TR,
          std::enable_if_t<is_tile<TAcc>::value && is_tile<TL>::value && is_tile<TR>::value, int> = 0>
inline void TMATMUL(TAcc& acc, const TL& lhs, const TR& rhs) {
    sim::matmul("TMATMUL", acc, lhs, rhs, sim::AccInit::Zero, static_cast<const TAcc*>(nullptr));
}

template <class TAcc, class TIn, class TL, class TR,
          std::enable_if_t<is_tile<TAcc>::value && is_tile<TIn>::value && is_tile<TL>::value && is_tile<TR>::value,
                           int> = 0>
inline void TMATMUL_ACC(TAcc& acc_out, const TIn& acc_in, const TL& lhs, const TR& rhs) {
    sim::matmul("TMATMUL_ACC", acc_out, lhs, rhs, sim::AccInit::Acc, &acc_in);
}

template <class TAcc, class TL, class TR,
          std::enable_if_t<is_tile<TAcc>::value && is_tile<TL>::value && is_tile<TR>::value, int> = 0>
inline void TMATMUL_ACC(TAcc& acc, const TL& lhs, const TR& rhs) {
    sim::matmul("TMATMUL_ACC", acc, lhs, rhs, sim::AccInit::Acc, &acc);
}

template <class TAcc, class TL, class TR, class TB,
          std::enable_if_t<is_tile<TAcc>::value && is_tile<TL>::value && is_tile<TR>::value && is_tile<TB>::value,
                           int> = 0>
inline void TMATMUL_BIAS(TAcc& acc, const TL& lhs, const TR& rhs, const TB& bias) {
    sim::matmul("TMATMUL_BIAS", acc, lhs, rhs, sim::AccInit::Bias, &bias);
}

template <class... Args>
inline void TGEMV(Args&&... args) { TMATMUL(std::forward<Args>(args)...); }
template <class... Args>
inline void TGEMV_ACC(Args&&... args) { TMATMUL_ACC(std::forward<Args>(args)...); }
template <class... Args>
inline void TGEMV_BIAS(Args&&... args) { TMATMUL_BIAS(std::forward<Args>(args)...); }

}  // namespace pto
