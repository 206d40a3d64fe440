// TEXP on f32: glibc's expf algorithm (2^(k/32) from a table times a cubic in double precision, one
// rounding to float at the end; < 0.502 ulp), 2, 4 or 8 lanes at a time on contiguous rows. Every
// product and sum is a separate double operation (no fused multiply-add), so every form gives the same
// bits on every host: those of glibc's generic expf for all 2^32 inputs (glibc's FMA variant, picked on
// FMA hosts, differs from it by 1 ulp at two inputs, x = 0x1.04845ep+5 and -0x1.f8cbb2p+5). Inputs
// with |x| >= 88 or NaN (overflow, results near or below the smallest normal, inf, NaN) go to std::exp.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

// The SIMD loops below keep every multiply and add separate even where the target has FMA (C++ mode
// contracts a * b + c by default); hidden: each kernel .so uses its own copy.
#define PTO_SIM_NO_CONTRACT optimize("fp-contract=off"), visibility("hidden")

namespace pto {
namespace sim {

// tab[i] = bits(2^(i/32)) - (i << 47): adding k << 47 to tab[k % 32] gives bits(2^(k/32)).
constexpr uint64_t kExp2Tab[32] = {
    0x3ff0000000000000, 0x3fefd9b0d3158574, 0x3fefb5586cf9890f, 0x3fef9301d0125b51, 0x3fef72b83c7d517b,
    0x3fef54873168b9aa, 0x3fef387a6e756238, 0x3fef1e9df51fdee1, 0x3fef06fe0a31b715, 0x3feef1a7373aa9cb,
    0x3feedea64c123422, 0x3feece086061892d, 0x3feebfdad5362a27, 0x3feeb42b569d4f82, 0x3feeab07dd485429,
    0x3feea47eb03a5585, 0x3feea09e667f3bcd, 0x3fee9f75e8ec5f74, 0x3feea11473eb0187, 0x3feea589994cce13,
    0x3feeace5422aa0db, 0x3feeb737b0cdc5e5, 0x3feec49182a3f090, 0x3feed503b23e255d, 0x3feee89f995ad3ad,
    0x3feeff76f2fb5e47, 0x3fef199bdd85529c, 0x3fef3720dcef9069, 0x3fef5818dcfba487, 0x3fef7c97337b9b5f,
    0x3fefa4afa2a490da, 0x3fefd0765b6e4540,
};
constexpr double kExpInvLn2N = 0x1.71547652b82fep+5;  // 32 / ln 2
constexpr double kExpShift = 0x1.8p+52;               // z + shift rounds z to an integer (ties to even)
constexpr double kExpC0 = 0x1.c6af84b912394p-20;      // 2^(r/32) ~= 1 + C2 r + C1 r^2 + C0 r^3
constexpr double kExpC1 = 0x1.ebfce50fac4f3p-13;
constexpr double kExpC2 = 0x1.62e42ff0c52d6p-6;
constexpr uint32_t kExpSpecial = 0x42b00000u;  // |x| >= 88.0f (bits), or NaN: std::exp

inline uint32_t f32_bits(float x) {
    uint32_t b;
    std::memcpy(&b, &x, sizeof b);
    return b;
}

// The per-lane steps, written once for scalars and GCC vectors (D: double lanes, U: uint64 lanes).
#define PTO_SIM_EXPF_STEPS(D, U, xd, out, LOOKUP)                    \
    {                                                                \
        const D z_ = (xd) * kExpInvLn2N;                             \
        D kd_ = z_ + kExpShift;                                      \
        U ki_;                                                       \
        std::memcpy(&ki_, &kd_, sizeof ki_);                         \
        kd_ = kd_ - kExpShift;                                       \
        const D r_ = z_ - kd_;                                       \
        U t_;                                                        \
        LOOKUP(t_, ki_);                                             \
        t_ = t_ + (ki_ << 47);                                       \
        D s_;                                                        \
        std::memcpy(&s_, &t_, sizeof s_);                            \
        const D p_ = r_ * kExpC0 + kExpC1;                           \
        const D r2_ = r_ * r_;                                       \
        const D q_ = r_ * kExpC2 + 1.0;                              \
        (out) = (p_ * r2_ + q_) * s_;                                \
    }

#define PTO_SIM_EXPF_LOOKUP1(t, k) (t) = kExp2Tab[(k) & 31]

__attribute__((PTO_SIM_NO_CONTRACT)) inline float expf_value(float x) {
    if ((f32_bits(x) & 0x7fffffffu) >= kExpSpecial) return std::exp(x);
    double y;
    PTO_SIM_EXPF_STEPS(double, uint64_t, static_cast<double>(x), y, PTO_SIM_EXPF_LOOKUP1)
    return static_cast<float>(y);
}

// dst[i] = expf_value(src[i]) for i < n, W lanes per step (dst may equal src); LOOKUP(t, k) sets
// t[l] = kExp2Tab[k[l] & 31].
#define PTO_SIM_EXPF_SPAN(W, LOOKUP)                                                 \
    typedef float vf __attribute__((vector_size(4 * (W))));                          \
    typedef double vd __attribute__((vector_size(8 * (W))));                         \
    typedef uint64_t vu __attribute__((vector_size(8 * (W))));                       \
    typedef uint32_t vb __attribute__((vector_size(4 * (W))));                       \
    int i = 0;                                                                       \
    for (; i + (W) <= n; i += (W)) {                                                 \
        vf x;                                                                        \
        std::memcpy(&x, src + i, sizeof x);                                          \
        vb bits;                                                                     \
        std::memcpy(&bits, &x, sizeof bits);                                         \
        const auto special = (bits & 0x7fffffffu) >= kExpSpecial;                    \
        vd y;                                                                        \
        PTO_SIM_EXPF_STEPS(vd, vu, __builtin_convertvector(x, vd), y, LOOKUP)        \
        vf out = __builtin_convertvector(y, vf);                                     \
        uint64_t words[(W) / 2], hit = 0;                                            \
        std::memcpy(words, &special, sizeof words);                                  \
        for (int l = 0; l < (W) / 2; ++l) hit |= words[l];                           \
        if (__builtin_expect(hit != 0, 0))                                           \
            for (int l = 0; l < (W); ++l)                                            \
                if (special[l]) out[l] = std::exp(x[l]);                             \
        std::memcpy(dst + i, &out, sizeof out);                                      \
    }                                                                                \
    for (; i < n; ++i) dst[i] = expf_value(src[i]);

#define PTO_SIM_EXPF_LOOKUP_LANES(t, k) \
    for (int l_ = 0; l_ < static_cast<int>(sizeof(k) / sizeof((k)[0])); ++l_) (t)[l_] = kExp2Tab[(k)[l_] & 31]

__attribute__((PTO_SIM_NO_CONTRACT)) inline void expf_span_2(float* dst, const float* src, int n) {
    PTO_SIM_EXPF_SPAN(2, PTO_SIM_EXPF_LOOKUP_LANES)
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(PTO_SIM_NO_AVX2)
__attribute__((target("avx2"), PTO_SIM_NO_CONTRACT)) inline void expf_span_avx2(float* dst, const float* src, int n) {
    PTO_SIM_EXPF_SPAN(4, PTO_SIM_EXPF_LOOKUP_LANES)
}

#ifndef PTO_SIM_NO_AVX512
typedef long long pto_sim_v8di __attribute__((vector_size(64)));
// The 32-entry table in four registers: two vpermt2q (16 entries each) and a select on bit 4.
#define PTO_SIM_EXPF_LOOKUP_PERMUTE(t, k)                                                                   \
    {                                                                                                       \
        const pto_sim_v8di idx_ = reinterpret_cast<pto_sim_v8di>((k) & 31);                                 \
        const pto_sim_v8di lo_ = __builtin_ia32_vpermt2varq512_mask(idx_, tab[0], tab[1], 0xff);            \
        const pto_sim_v8di hi_ = __builtin_ia32_vpermt2varq512_mask(idx_, tab[2], tab[3], 0xff);            \
        (t) = reinterpret_cast<decltype(t)>((idx_ & 16) != 0 ? hi_ : lo_);                                  \
    }
__attribute__((target("avx512f"), PTO_SIM_NO_CONTRACT)) inline void expf_span_avx512(float* dst, const float* src,
                                                                                     int n) {
    pto_sim_v8di tab[4];
    std::memcpy(tab, kExp2Tab, sizeof tab);
    PTO_SIM_EXPF_SPAN(8, PTO_SIM_EXPF_LOOKUP_PERMUTE)
}
#undef PTO_SIM_EXPF_LOOKUP_PERMUTE
#endif
#endif

#undef PTO_SIM_EXPF_LOOKUP_LANES
#undef PTO_SIM_EXPF_SPAN
#undef PTO_SIM_EXPF_LOOKUP1
#undef PTO_SIM_EXPF_STEPS

// The widest of the forms above the host runs (all give the same bits).
inline void expf_span(float* dst, const float* src, int n) {
#if defined(__x86_64__) && defined(__GNUC__) && !defined(PTO_SIM_NO_AVX2)
#ifndef PTO_SIM_NO_AVX512
    static const bool avx512 = __builtin_cpu_supports("avx512f");
    if (avx512) return expf_span_avx512(dst, src, n);
#endif
    static const bool avx2 = __builtin_cpu_supports("avx2");
    if (avx2) return expf_span_avx2(dst, src, n);
#endif
    expf_span_2(dst, src, n);
}

}  // namespace sim
}  // namespace pto
