// TCVT: per-element conversion with rounding mode and optional saturation.
#pragma once

#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "pto/sim/tile.hpp"

namespace pto {

// Unscoped so that `bool m = RoundMode::CAST_RINT;` (emitted by ptoas 0.1.1) compiles.
enum RoundMode : int {
    CAST_NONE = 0,
    CAST_RINT = 1,
    CAST_ROUND = 2,
    CAST_FLOOR = 3,
    CAST_CEIL = 4,
    CAST_TRUNC = 5,
    CAST_ODD = 6,
};

enum class SaturationMode : int { OFF = 0, ON = 1 };

namespace sim {

inline double round_by_mode(double x, RoundMode mode) {
    switch (mode) {
        case CAST_ROUND: return std::round(x);
        case CAST_FLOOR: return std::floor(x);
        case CAST_CEIL: return std::ceil(x);
        case CAST_TRUNC: return std::trunc(x);
        case CAST_ODD: {
            const double f = std::floor(x);
            if (x - f != 0.5) return std::nearbyint(x);
            return std::fmod(f, 2.0) != 0.0 ? f : f + 1.0;
        }
        default: return std::nearbyint(x);  // CAST_RINT and CAST_NONE: nearest, ties to even
    }
}

// f32 -> bf16 bits under a rounding mode; NaN stays NaN (quietened, sign kept). CAST_RINT/CAST_NONE
// round to nearest, ties to even; an overflow rounds to inf exactly where IEEE's mode says so.
inline uint16_t bf16_bits(float f, RoundMode mode) {
    uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40u);
    const uint32_t hi = u >> 16, lost = u & 0xffffu;
    const bool neg = (u >> 31) != 0;
    switch (mode) {
        case CAST_ROUND: return static_cast<uint16_t>((u + 0x8000u) >> 16);  // ties away from zero
        case CAST_TRUNC: return static_cast<uint16_t>(hi);
        case CAST_FLOOR: return static_cast<uint16_t>(neg && lost ? hi + 1 : hi);
        case CAST_CEIL: return static_cast<uint16_t>(!neg && lost ? hi + 1 : hi);
        case CAST_ODD: return static_cast<uint16_t>(lost ? (hi | 1u) : hi);
        default: return static_cast<uint16_t>((u + 0x7fffu + (hi & 1u)) >> 16);
    }
}

inline bfloat16_t bf16_round(float f, RoundMode mode) {
    const uint16_t bits = bf16_bits(f, mode);
    bfloat16_t out;
    std::memcpy(&out, &bits, sizeof out);
    return out;
}

template <class T>
constexpr double finite_max() {
    if constexpr (std::is_same<T, half>::value) {
        return 65504.0;
    } else if constexpr (std::is_same<T, bfloat16_t>::value) {
        return 3.3895313892515355e38;
    } else {
        return static_cast<double>(std::numeric_limits<T>::max());
    }
}

template <class T>
constexpr double finite_lowest() {
    if constexpr (is_float_like<T>::value) {
        return -finite_max<T>();
    } else {
        return static_cast<double>(std::numeric_limits<T>::lowest());
    }
}

template <class D, class S>
inline D convert(S v, RoundMode mode, bool saturate) {
    constexpr bool kSrcFloat = is_float_like<S>::value, kDstFloat = is_float_like<D>::value;
    if constexpr (kSrcFloat && !kDstFloat) {
        const double x = static_cast<double>(static_cast<float>(v));
        if (std::isnan(x)) return D(0);
        // Out-of-range float -> int is undefined in C++; always clamp.
        const double r = std::min(std::max(round_by_mode(x, mode), finite_lowest<D>()), finite_max<D>());
        return static_cast<D>(r);
    } else if constexpr (!kSrcFloat && kDstFloat) {
        double x = static_cast<double>(v);
        if (saturate) x = std::min(std::max(x, finite_lowest<D>()), finite_max<D>());
        return static_cast<D>(static_cast<float>(x));
    } else if constexpr (kSrcFloat && kDstFloat) {
        float x = static_cast<float>(v);
        if (saturate && !std::isnan(x)) {
            const float lo = static_cast<float>(std::max(finite_lowest<D>(), finite_lowest<S>()));
            const float hi = static_cast<float>(std::min(finite_max<D>(), finite_max<S>()));
            x = std::min(std::max(x, lo), hi);
            if constexpr (!std::is_same<D, bfloat16_t>::value) return static_cast<D>(x);
        }
        if constexpr (std::is_same<D, bfloat16_t>::value) {
            return bf16_round(x, mode);  // f16/bf16 -> f32 is exact, so this rounds once
        } else if constexpr (std::is_same<S, bfloat16_t>::value) {
            return static_cast<D>(static_cast<float>(v));
        } else {
            return static_cast<D>(v);
        }
    } else {
        if (saturate) {
            const double x = std::min(std::max(static_cast<double>(v), finite_lowest<D>()), finite_max<D>());
            return static_cast<D>(static_cast<long long>(x));
        }
        return static_cast<D>(v);
    }
}

}  // namespace sim

// The mode may be a RoundMode, an int, or the bool ptoas 0.1.1 stores it in.
template <class TD, class TS, class M,
          std::enable_if_t<is_tile<TD>::value && is_tile<TS>::value && is_sim_scalar<M>::value, int> = 0>
inline void TCVT(TD& dst, const TS& src, M mode, SaturationMode sat = SaturationMode::OFF) {
    sim::require_same_valid("TCVT", dst, src);
    using D = typename TD::DType;
    using S = typename TS::DType;
    const RoundMode rm = static_cast<RoundMode>(static_cast<int>(mode));
    const bool saturate = sat == SaturationMode::ON;
    const int vr = dst.GetValidRow(), vc = dst.GetValidCol();
    if constexpr (TD::kDenseRowMajor && TS::kDenseRowMajor) {
        for (int r = 0; r < vr; ++r) {
            D* d = dst.data() + static_cast<int64_t>(r) * TD::Cols;
            const S* s = src.data() + static_cast<int64_t>(r) * TS::Cols;
            for (int c = 0; c < vc; ++c) d[c] = sim::convert<D, S>(s[c], rm, saturate);
        }
    } else {
        for (int r = 0; r < vr; ++r) {
            for (int c = 0; c < vc; ++c) dst.at(r, c) = sim::convert<D, S>(src.at(r, c), rm, saturate);
        }
    }
}

template <class TD, class TS, std::enable_if_t<is_tile<TD>::value && is_tile<TS>::value, int> = 0>
inline void TCVT(TD& dst, const TS& src) {
    TCVT(dst, src, CAST_RINT);
}

}  // namespace pto
