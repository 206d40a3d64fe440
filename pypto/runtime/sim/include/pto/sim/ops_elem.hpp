// Elementwise binary, ternary, tile-scalar and unary ops over the destination's valid region.
#pragma once

#include <cmath>
#include <type_traits>

#include "pto/sim/tile.hpp"
#include "pto/sim/vmath.hpp"

namespace pto {
namespace sim {

template <class T>
using math_t = std::conditional_t<std::is_same<T, double>::value, double, float>;

// Apply dst(r, c) = f(src_k(r, c)...) over dst's valid region; plain loops when all tiles share
// a dense major order so the compiler can vectorise the inner loop.
template <class TD, class... TS, class F>
inline void ew_apply(TD& dst, F f, const TS&... srcs) {
    const int vr = dst.GetValidRow(), vc = dst.GetValidCol();
    typename TD::DType* d = dst.data();
    if constexpr (TD::kDenseRowMajor && (TS::kDenseRowMajor && ...)) {
        for (int r = 0; r < vr; ++r) {
            typename TD::DType* dr = d + static_cast<int64_t>(r) * TD::Cols;
            for (int c = 0; c < vc; ++c) dr[c] = f(srcs.data()[static_cast<int64_t>(r) * TS::Cols + c]...);
        }
    } else if constexpr (TD::kDenseColMajor && (TS::kDenseColMajor && ...)) {
        for (int c = 0; c < vc; ++c) {
            typename TD::DType* dc = d + static_cast<int64_t>(c) * TD::Rows;
            for (int r = 0; r < vr; ++r) dc[r] = f(srcs.data()[static_cast<int64_t>(c) * TS::Rows + r]...);
        }
    } else {
        for (int r = 0; r < vr; ++r) {
            for (int c = 0; c < vc; ++c) d[TD::offset(r, c)] = f(srcs.data()[TS::offset(r, c)]...);
        }
    }
}

template <class TD, class... TS>
inline void ew_check(const char* op, const TD& dst, const TS&... srcs) {
    require_assigned(op, dst);
    (require_same_valid(op, dst, srcs), ...);
    static_assert((std::is_same<typename TD::DType, typename TS::DType>::value && ...),
                  "elementwise op operands must share the destination element type");
}

template <class T>
inline void require_nonzero_int(const char* op, T b) {
    if constexpr (std::is_integral<T>::value) {
        if (b == T(0)) failf("pto sim: %s integer division by zero", op);
    }
}

template <class T>
inline T div_op(const char* op, T a, T b) {
    if constexpr (std::is_integral<T>::value) {
        require_nonzero_int(op, b);
        if (std::is_signed<T>::value && b == T(-1)) return static_cast<T>(T(0) - a);
        return static_cast<T>(a / b);
    } else {
        return static_cast<T>(a / b);
    }
}

// Remainder with the sign of the divisor (floor modulo).
template <class T>
inline T rem_op(const char* op, T a, T b) {
    if constexpr (std::is_integral<T>::value) {
        require_nonzero_int(op, b);
        if (std::is_signed<T>::value && b == T(-1)) return T(0);
        T m = static_cast<T>(a % b);
        return (m != 0 && ((m < 0) != (b < 0))) ? static_cast<T>(m + b) : m;
    } else {
        using M = math_t<T>;
        M x = static_cast<M>(a), y = static_cast<M>(b);
        M m = std::fmod(x, y);
        if (m != M(0) && ((m < 0) != (y < 0))) m += y;
        return static_cast<T>(m);
    }
}

template <class T>
inline T fmod_op(T a, T b) {
    if constexpr (std::is_integral<T>::value) {
        return b == T(0) ? T(0) : static_cast<T>(a % b);
    } else {
        return static_cast<T>(std::fmod(static_cast<math_t<T>>(a), static_cast<math_t<T>>(b)));
    }
}

template <class T>
inline T shl_op(T a, T b) {
    static_assert(std::is_integral<T>::value, "shift ops need integer tiles");
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) << (static_cast<unsigned>(b) & (sizeof(T) * 8 - 1)));
}

template <class T>
inline T shr_op(T a, T b) {
    static_assert(std::is_integral<T>::value, "shift ops need integer tiles");
    return static_cast<T>(a >> (static_cast<unsigned>(b) & (sizeof(T) * 8 - 1)));
}

template <class T>
inline T fmax_op(T a, T b) { return a > b ? a : b; }
template <class T>
inline T fmin_op(T a, T b) { return a < b ? a : b; }

template <class T>
constexpr void require_int_tile() {
    static_assert(std::is_integral<T>::value, "bitwise ops need integer tiles");
}

}  // namespace sim

#define PTO_SIM_BINARY(NAME, EXPR)                                                              \
    template <class TD, class TA, class TB,                                                     \
              std::enable_if_t<is_tile<TD>::value && is_tile<TA>::value && is_tile<TB>::value, int> = 0> \
    inline void NAME(TD& dst, const TA& a, const TB& b) {                                       \
        using T = typename TD::DType;                                                           \
        sim::ew_check(#NAME, dst, a, b);                                                        \
        sim::ew_apply(dst, [](T x, T y) -> T { return static_cast<T>(EXPR); }, a, b);            \
    }

PTO_SIM_BINARY(TADD, x + y)
PTO_SIM_BINARY(TSUB, x - y)
PTO_SIM_BINARY(TMUL, x * y)
PTO_SIM_BINARY(TDIV, sim::div_op("TDIV", x, y))
PTO_SIM_BINARY(TMAX, sim::fmax_op(x, y))
PTO_SIM_BINARY(TMIN, sim::fmin_op(x, y))
PTO_SIM_BINARY(TREM, sim::rem_op("TREM", x, y))
PTO_SIM_BINARY(TFMOD, sim::fmod_op(x, y))
PTO_SIM_BINARY(TAND, (sim::require_int_tile<T>(), x & y))
PTO_SIM_BINARY(TOR, (sim::require_int_tile<T>(), x | y))
PTO_SIM_BINARY(TXOR, (sim::require_int_tile<T>(), x ^ y))
PTO_SIM_BINARY(TSHL, sim::shl_op(x, y))
PTO_SIM_BINARY(TSHR, sim::shr_op(x, y))
PTO_SIM_BINARY(TPRELU, x > T(0) ? x : static_cast<T>(x * y))
PTO_SIM_BINARY(TPOW, std::pow(static_cast<sim::math_t<T>>(x), static_cast<sim::math_t<T>>(y)))
#undef PTO_SIM_BINARY

// Trailing scratch-tile forms (newer pto-isa signatures); the scratch is unused on the CPU.
template <class TD, class TA, class TB, class TT,
          std::enable_if_t<is_tile<TD>::value && is_tile<TA>::value && is_tile<TB>::value && is_tile<TT>::value, int> = 0>
inline void TXOR(TD& dst, const TA& a, const TB& b, const TT&) { TXOR(dst, a, b); }

#define PTO_SIM_TERNARY(NAME, EXPR)                                                             \
    template <class TD, class TA, class TB, class TC,                                           \
              std::enable_if_t<is_tile<TD>::value && is_tile<TA>::value && is_tile<TB>::value && \
                                   is_tile<TC>::value, int> = 0>                                \
    inline void NAME(TD& dst, const TA& a, const TB& b, const TC& c) {                          \
        using T = typename TD::DType;                                                           \
        sim::ew_check(#NAME, dst, a, b, c);                                                     \
        sim::ew_apply(dst, [](T x, T y, T z) -> T { return static_cast<T>(EXPR); }, a, b, c);    \
    }

PTO_SIM_TERNARY(TADDC, x + y + z)
PTO_SIM_TERNARY(TSUBC, x - y + z)
PTO_SIM_TERNARY(TFUSEDMULADD, x * y + z)
PTO_SIM_TERNARY(TFUSEDMULADDRELU, sim::fmax_op(static_cast<T>(x * y + z), T(0)))
#undef PTO_SIM_TERNARY

// dst = a OP b where extents may differ: where both are valid apply OP, else copy the valid one.
#define PTO_SIM_PART(NAME, EXPR)                                                                \
    template <class TD, class TA, class TB,                                                     \
              std::enable_if_t<is_tile<TD>::value && is_tile<TA>::value && is_tile<TB>::value, int> = 0> \
    inline void NAME(TD& dst, const TA& a, const TB& b) {                                       \
        using T = typename TD::DType;                                                           \
        sim::require_assigned(#NAME, dst);                                                      \
        const int ar = a.GetValidRow(), ac = a.GetValidCol(), br = b.GetValidRow(), bc = b.GetValidCol(); \
        for (int r = 0; r < dst.GetValidRow(); ++r) {                                           \
            for (int c = 0; c < dst.GetValidCol(); ++c) {                                       \
                const bool ina = r < ar && c < ac, inb = r < br && c < bc;                      \
                if (ina && inb) {                                                               \
                    T x = a.at(r, c), y = b.at(r, c);                                           \
                    dst.at(r, c) = static_cast<T>(EXPR);                                        \
                } else if (ina) {                                                               \
                    dst.at(r, c) = a.at(r, c);                                                  \
                } else if (inb) {                                                               \
                    dst.at(r, c) = b.at(r, c);                                                  \
                }                                                                               \
            }                                                                                   \
        }                                                                                       \
    }

PTO_SIM_PART(TPARTADD, x + y)
PTO_SIM_PART(TPARTMUL, x * y)
PTO_SIM_PART(TPARTMAX, sim::fmax_op(x, y))
PTO_SIM_PART(TPARTMIN, sim::fmin_op(x, y))
#undef PTO_SIM_PART

// Tile-scalar: the scalar is converted to the tile element type first.
#define PTO_SIM_SCALAR(NAME, EXPR)                                                              \
    template <class TD, class TA, class S,                                                      \
              std::enable_if_t<is_tile<TD>::value && is_tile<TA>::value && is_sim_scalar<S>::value, int> = 0> \
    inline void NAME(TD& dst, const TA& a, S scalar) {                                          \
        using T = typename TD::DType;                                                           \
        sim::ew_check(#NAME, dst, a);                                                           \
        const T y = static_cast<T>(scalar);                                                     \
        sim::ew_apply(dst, [y](T x) -> T { return static_cast<T>(EXPR); }, a);                  \
    }

PTO_SIM_SCALAR(TADDS, x + y)
PTO_SIM_SCALAR(TSUBS, x - y)
PTO_SIM_SCALAR(TMULS, x * y)
PTO_SIM_SCALAR(TDIVS, sim::div_op("TDIVS", x, y))
PTO_SIM_SCALAR(TMAXS, sim::fmax_op(x, y))
PTO_SIM_SCALAR(TMINS, sim::fmin_op(x, y))
PTO_SIM_SCALAR(TREMS, sim::rem_op("TREMS", x, y))
PTO_SIM_SCALAR(TFMODS, sim::fmod_op(x, y))
PTO_SIM_SCALAR(TANDS, (sim::require_int_tile<T>(), x & y))
PTO_SIM_SCALAR(TORS, (sim::require_int_tile<T>(), x | y))
PTO_SIM_SCALAR(TXORS, (sim::require_int_tile<T>(), x ^ y))
PTO_SIM_SCALAR(TSHLS, sim::shl_op(x, y))
PTO_SIM_SCALAR(TSHRS, sim::shr_op(x, y))
PTO_SIM_SCALAR(TLRELU, x > T(0) ? x : static_cast<T>(x * y))
PTO_SIM_SCALAR(TPOWS, std::pow(static_cast<sim::math_t<T>>(x), static_cast<sim::math_t<T>>(y)))
#undef PTO_SIM_SCALAR

// Scalar-lhs forms: dst = scalar OP tile.
#define PTO_SIM_SCALAR_LHS(NAME, EXPR)                                                          \
    template <class TD, class S, class TA,                                                      \
              std::enable_if_t<is_tile<TD>::value && is_sim_scalar<S>::value && is_tile<TA>::value, int> = 0> \
    inline void NAME(TD& dst, S scalar, const TA& a) {                                          \
        using T = typename TD::DType;                                                           \
        sim::ew_check(#NAME, dst, a);                                                           \
        const T y = static_cast<T>(scalar);                                                     \
        sim::ew_apply(dst, [y](T x) -> T { return static_cast<T>(EXPR); }, a);                  \
    }

PTO_SIM_SCALAR_LHS(TDIVS, sim::div_op("TDIVS", y, x))
PTO_SIM_SCALAR_LHS(TSUBS, y - x)
#undef PTO_SIM_SCALAR_LHS

// dst = a + s + b and dst = a - s + b.
#define PTO_SIM_SCALAR_TILE(NAME, EXPR)                                                         \
    template <class TD, class TA, class S, class TB,                                            \
              std::enable_if_t<is_tile<TD>::value && is_tile<TA>::value && is_sim_scalar<S>::value && \
                                   is_tile<TB>::value, int> = 0>                                \
    inline void NAME(TD& dst, const TA& a, S scalar, const TB& b) {                             \
        using T = typename TD::DType;                                                           \
        sim::ew_check(#NAME, dst, a, b);                                                        \
        const T s = static_cast<T>(scalar);                                                     \
        sim::ew_apply(dst, [s](T x, T y) -> T { return static_cast<T>(EXPR); }, a, b);          \
    }

PTO_SIM_SCALAR_TILE(TADDSC, x + s + y)
PTO_SIM_SCALAR_TILE(TSUBSC, x - s + y)
#undef PTO_SIM_SCALAR_TILE

template <class TD, class S, std::enable_if_t<is_tile<TD>::value && is_sim_scalar<S>::value, int> = 0>
inline void TEXPANDS(TD& dst, S scalar) {
    using T = typename TD::DType;
    sim::require_assigned("TEXPANDS", dst);
    const T v = static_cast<T>(scalar);
    sim::ew_apply(dst, [v]() -> T { return v; });
}

// dst(0, c) = start + c (Descending: start - c) over the valid columns of the first row (pto.tci).
template <class TD, class S, int Descending, std::enable_if_t<is_tile<TD>::value && is_sim_scalar<S>::value, int> = 0>
inline void TCI(TD& dst, S start) {
    using T = typename TD::DType;
    sim::require_assigned("TCI", dst);
    sim::require_int_tile<T>();
    for (int c = 0; c < dst.GetValidCol(); ++c) {
        dst.at(0, c) = static_cast<T>(Descending ? static_cast<int64_t>(start) - c : static_cast<int64_t>(start) + c);
    }
}

// Unary ops; transcendental functions are evaluated in float (double for double tiles).
#define PTO_SIM_UNARY(NAME, EXPR)                                                               \
    template <class TD, class TA, std::enable_if_t<is_tile<TD>::value && is_tile<TA>::value, int> = 0> \
    inline void NAME(TD& dst, const TA& a) {                                                    \
        using T = typename TD::DType;                                                           \
        using M = sim::math_t<T>;                                                               \
        sim::ew_check(#NAME, dst, a);                                                           \
        sim::ew_apply(dst, [](T x) -> T { (void)sizeof(M); return static_cast<T>(EXPR); }, a);  \
    }

PTO_SIM_UNARY(TLOG, std::log(static_cast<M>(x)))
PTO_SIM_UNARY(TSQRT, std::sqrt(static_cast<M>(x)))
PTO_SIM_UNARY(TRSQRT, M(1) / std::sqrt(static_cast<M>(x)))
PTO_SIM_UNARY(TRECIP, M(1) / static_cast<M>(x))
PTO_SIM_UNARY(TABS, x < T(0) ? static_cast<T>(T(0) - x) : x)
PTO_SIM_UNARY(TNEG, -x)
PTO_SIM_UNARY(TRELU, x > T(0) ? x : T(0))
PTO_SIM_UNARY(TNOT, (sim::require_int_tile<T>(), ~x))
#undef PTO_SIM_UNARY

// f32 through sim::expf_value (glibc's expf bits), rows of dense tiles through the vector loop.
template <class TD, class TA, std::enable_if_t<is_tile<TD>::value && is_tile<TA>::value, int> = 0>
inline void TEXP(TD& dst, const TA& a) {
    using T = typename TD::DType;
    sim::ew_check("TEXP", dst, a);
    if constexpr (std::is_same<T, float>::value && TD::kDenseRowMajor && TA::kDenseRowMajor) {
        for (int r = 0; r < dst.GetValidRow(); ++r) {
            sim::expf_span(dst.data() + static_cast<int64_t>(r) * TD::Cols, a.data() + static_cast<int64_t>(r) * TA::Cols,
                           dst.GetValidCol());
        }
    } else if constexpr (std::is_same<T, float>::value) {
        sim::ew_apply(dst, [](T x) -> T { return sim::expf_value(x); }, a);
    } else {
        using M = sim::math_t<T>;
        sim::ew_apply(dst, [](T x) -> T { return static_cast<T>(std::exp(static_cast<M>(x))); }, a);
    }
}

}  // namespace pto
