// Row/column reductions, broadcasts and fused broadcast ops.
#pragma once

#include <cmath>
#include <type_traits>
#include <utility>
#include <vector>

#include "pto/sim/ops_elem.hpp"
#include "pto/sim/tile.hpp"

namespace pto {
namespace sim {

template <class T>
inline constexpr bool is_float_like_v =
    std::is_floating_point<T>::value || std::is_same<T, half>::value || std::is_same<T, bfloat16_t>::value;

// Accumulator type of a row reduction: half/bf16 max/min/prod in f32, everything else in its own type.
template <class T>
using row_acc_t = std::conditional_t<std::is_same<T, half>::value || std::is_same<T, bfloat16_t>::value, float, T>;

struct SumOp;

// A row sum of floating values accumulates in double and rounds once into the destination. The vector unit reduces
// a row through adder trees, which stay within a few ulps of that sum; a left-to-right f32 sum (the reference CPU
// simulator's) drifts about sqrt(n) ulps from it over a long row, enough to tip a later bf16 rounding away from
// what torch's own reductions give.
template <class Op, class T>
using row_reduce_acc_t =
    std::conditional_t<std::is_same<Op, SumOp>::value && is_float_like_v<T>, double, row_acc_t<T>>;

struct SumOp {
    template <class A>
    static A init(A first) { return first; }
    template <class A>
    static A apply(A acc, A v) { return acc + v; }
};
struct MaxOp {
    template <class A>
    static A apply(A acc, A v) { return v > acc ? v : acc; }
};
struct MinOp {
    template <class A>
    static A apply(A acc, A v) { return v < acc ? v : acc; }
};
struct ProdOp {
    template <class A>
    static A apply(A acc, A v) { return acc * v; }
};

template <class Op, class TD, class TS>
inline void row_reduce(const char* op, TD& dst, const TS& src) {
    require_assigned(op, dst);
    require_assigned(op, src);
    using A = row_reduce_acc_t<Op, typename TS::DType>;
    using D = typename TD::DType;
    const int vr = src.GetValidRow(), vc = src.GetValidCol();
    if (vr > TD::Rows || vc == 0) failf("pto sim: %s of %d rows x %d cols into a %dx%d destination", op, vr, vc,
                                        TD::Rows, TD::Cols);
    for (int r = 0; r < vr; ++r) {
        A acc = static_cast<A>(src.at(r, 0));
        if constexpr (TS::kDenseRowMajor) {
            const typename TS::DType* row = src.data() + static_cast<int64_t>(r) * TS::Cols;
            for (int c = 1; c < vc; ++c) acc = Op::apply(acc, static_cast<A>(row[c]));
        } else {
            for (int c = 1; c < vc; ++c) acc = Op::apply(acc, static_cast<A>(src.at(r, c)));
        }
        dst.at(r, 0) = static_cast<D>(acc);
    }
}

// The valid rows and columns a column reduction of ``src`` into ``dst`` reads (checked).
template <class TD, class TS>
inline std::pair<int, int> col_reduce_extent(const char* op, const TD& dst, const TS& src) {
    require_assigned(op, dst);
    require_assigned(op, src);
    const int vr = src.GetValidRow(), vc = src.GetValidCol();
    if (vc > TD::Cols || vr == 0) failf("pto sim: %s of %d rows x %d cols into a %dx%d destination", op, vr, vc,
                                        TD::Rows, TD::Cols);
    return {vr, vc};
}

// Column reductions accumulate in the destination type, top to bottom.
template <class Op, class TD, class TS>
inline void col_reduce(const char* op, TD& dst, const TS& src) {
    using D = typename TD::DType;
    const auto [vr, vc] = col_reduce_extent(op, dst, src);
    if constexpr (TS::kDenseRowMajor && TD::kDenseRowMajor) {
        D* out = dst.data();
        const typename TS::DType* s = src.data();
        for (int c = 0; c < vc; ++c) out[c] = static_cast<D>(s[c]);
        for (int r = 1; r < vr; ++r) {
            const typename TS::DType* row = s + static_cast<int64_t>(r) * TS::Cols;
            for (int c = 0; c < vc; ++c) out[c] = Op::apply(out[c], static_cast<D>(row[c]));
        }
    } else {
        for (int c = 0; c < vc; ++c) {
            D acc = static_cast<D>(src.at(0, c));
            for (int r = 1; r < vr; ++r) acc = Op::apply(acc, static_cast<D>(src.at(r, c)));
            dst.at(0, c) = acc;
        }
    }
}

// The binary-tree form (TCOLSUM's isBinary): rows are combined pairwise, row 2i with row 2i + 1, level by
// level in the destination type; an odd row left over at a level is folded into row 0.
template <class Op, class TD, class TS>
inline void col_reduce_tree(const char* op, TD& dst, const TS& src) {
    using D = typename TD::DType;
    const auto [vr, vc] = col_reduce_extent(op, dst, src);
    std::vector<D> buf(static_cast<size_t>(vr) * vc);
    for (int r = 0; r < vr; ++r)
        for (int c = 0; c < vc; ++c) buf[static_cast<size_t>(r) * vc + c] = static_cast<D>(src.at(r, c));
    for (int cnt = vr; cnt > 1;) {
        const int half = cnt / 2;
        for (int r = 0; r < half; ++r)
            for (int c = 0; c < vc; ++c)
                buf[static_cast<size_t>(r) * vc + c] = Op::apply(buf[static_cast<size_t>(2 * r) * vc + c],
                                                                 buf[static_cast<size_t>(2 * r + 1) * vc + c]);
        if (cnt % 2 == 1)
            for (int c = 0; c < vc; ++c)
                buf[c] = Op::apply(buf[c], buf[static_cast<size_t>(cnt - 1) * vc + c]);
        cnt = half;
    }
    for (int c = 0; c < vc; ++c) dst.at(0, c) = buf[c];
}

template <class TD, class TA, class TB, class F>
inline void expand_apply(const char* op, TD& dst, const TA& a, const TB& b, bool by_row, F f) {
    require_same_valid(op, dst, a);
    require_assigned(op, b);
    const int vr = dst.GetValidRow(), vc = dst.GetValidCol();
    if ((by_row && b.GetValidRow() < vr) || (!by_row && b.GetValidCol() < vc)) {
        failf("pto sim: %s broadcast operand valid shape (%d, %d) is smaller than the destination (%d, %d)", op,
              b.GetValidRow(), b.GetValidCol(), vr, vc);
    }
    using T = typename TD::DType;
    for (int r = 0; r < vr; ++r) {
        if constexpr (TD::kDenseRowMajor && TA::kDenseRowMajor) {
            T* d = dst.data() + static_cast<int64_t>(r) * TD::Cols;
            const typename TA::DType* s = a.data() + static_cast<int64_t>(r) * TA::Cols;
            if (by_row) {
                const T v = static_cast<T>(b.at(r, 0));
                for (int c = 0; c < vc; ++c) d[c] = f(static_cast<T>(s[c]), v);
            } else {
                for (int c = 0; c < vc; ++c) d[c] = f(static_cast<T>(s[c]), static_cast<T>(b.at(0, c)));
            }
        } else {
            for (int c = 0; c < vc; ++c) {
                const T v = static_cast<T>(by_row ? b.at(r, 0) : b.at(0, c));
                dst.at(r, c) = f(static_cast<T>(a.at(r, c)), v);
            }
        }
    }
}

}  // namespace sim

#define PTO_SIM_ROWRED(NAME, OP)                                                                \
    template <class TD, class TS, std::enable_if_t<is_tile<TD>::value && is_tile<TS>::value, int> = 0> \
    inline void NAME(TD& dst, const TS& src) { sim::row_reduce<OP>(#NAME, dst, src); }         \
    template <class TD, class TS, class TT,                                                     \
              std::enable_if_t<is_tile<TD>::value && is_tile<TS>::value && is_tile<TT>::value, int> = 0> \
    inline void NAME(TD& dst, const TS& src, const TT&) { sim::row_reduce<OP>(#NAME, dst, src); }

PTO_SIM_ROWRED(TROWSUM, sim::SumOp)
PTO_SIM_ROWRED(TROWMAX, sim::MaxOp)
PTO_SIM_ROWRED(TROWMIN, sim::MinOp)
PTO_SIM_ROWRED(TROWPROD, sim::ProdOp)
#undef PTO_SIM_ROWRED

#define PTO_SIM_COLRED(NAME, OP)                                                                \
    template <class TD, class TS, std::enable_if_t<is_tile<TD>::value && is_tile<TS>::value, int> = 0> \
    inline void NAME(TD& dst, const TS& src) { sim::col_reduce<OP>(#NAME, dst, src); }         \
    template <class TD, class TS, class TT,                                                     \
              std::enable_if_t<is_tile<TD>::value && is_tile<TS>::value && is_tile<TT>::value, int> = 0> \
    inline void NAME(TD& dst, const TS& src, const TT&, bool is_binary = false) {               \
        if (is_binary) sim::col_reduce_tree<OP>(#NAME, dst, src);                               \
        else sim::col_reduce<OP>(#NAME, dst, src);                                              \
    }

PTO_SIM_COLRED(TCOLSUM, sim::SumOp)
PTO_SIM_COLRED(TCOLMAX, sim::MaxOp)
PTO_SIM_COLRED(TCOLMIN, sim::MinOp)
PTO_SIM_COLRED(TCOLPROD, sim::ProdOp)
#undef PTO_SIM_COLRED

// dst(r, c) = src(r, 0) over dst's valid region.
template <class TD, class TS, std::enable_if_t<is_tile<TD>::value && is_tile<TS>::value, int> = 0>
inline void TROWEXPAND(TD& dst, const TS& src) {
    sim::require_assigned("TROWEXPAND", dst);
    sim::require_assigned("TROWEXPAND", src);
    using T = typename TD::DType;
    const int vr = dst.GetValidRow(), vc = dst.GetValidCol();
    if (src.GetValidRow() < vr) sim::failf("pto sim: TROWEXPAND source has %d valid rows, destination %d",
                                           src.GetValidRow(), vr);
    for (int r = 0; r < vr; ++r) {
        const T v = static_cast<T>(src.at(r, 0));
        for (int c = 0; c < vc; ++c) dst.at(r, c) = v;
    }
}

// dst(r, c) = src(0, c) over dst's valid region.
template <class TD, class TS, std::enable_if_t<is_tile<TD>::value && is_tile<TS>::value, int> = 0>
inline void TCOLEXPAND(TD& dst, const TS& src) {
    sim::require_assigned("TCOLEXPAND", dst);
    sim::require_assigned("TCOLEXPAND", src);
    using T = typename TD::DType;
    const int vr = dst.GetValidRow(), vc = dst.GetValidCol();
    if (src.GetValidCol() < vc) sim::failf("pto sim: TCOLEXPAND source has %d valid cols, destination %d",
                                           src.GetValidCol(), vc);
    for (int r = 0; r < vr; ++r) {
        for (int c = 0; c < vc; ++c) dst.at(r, c) = static_cast<T>(src.at(0, c));
    }
}

#define PTO_SIM_EXPAND_OP(NAME, BY_ROW, EXPR)                                                   \
    template <class TD, class TA, class TB,                                                     \
              std::enable_if_t<is_tile<TD>::value && is_tile<TA>::value && is_tile<TB>::value, int> = 0> \
    inline void NAME(TD& dst, const TA& a, const TB& b) {                                       \
        using T = typename TD::DType;                                                           \
        using M = sim::math_t<T>;                                                               \
        sim::expand_apply(#NAME, dst, a, b, BY_ROW, [](T x, T y) -> T {                         \
            (void)sizeof(M);                                                                    \
            return static_cast<T>(EXPR);                                                        \
        });                                                                                     \
    }

PTO_SIM_EXPAND_OP(TROWEXPANDADD, true, x + y)
PTO_SIM_EXPAND_OP(TROWEXPANDSUB, true, x - y)
PTO_SIM_EXPAND_OP(TROWEXPANDMUL, true, x * y)
PTO_SIM_EXPAND_OP(TROWEXPANDDIV, true, sim::div_op("TROWEXPANDDIV", x, y))
PTO_SIM_EXPAND_OP(TROWEXPANDMAX, true, sim::fmax_op(x, y))
PTO_SIM_EXPAND_OP(TROWEXPANDMIN, true, sim::fmin_op(x, y))
PTO_SIM_EXPAND_OP(TROWEXPANDEXPDIF, true, std::exp(static_cast<M>(x) - static_cast<M>(y)))
PTO_SIM_EXPAND_OP(TCOLEXPANDADD, false, x + y)
PTO_SIM_EXPAND_OP(TCOLEXPANDSUB, false, x - y)
PTO_SIM_EXPAND_OP(TCOLEXPANDMUL, false, x * y)
PTO_SIM_EXPAND_OP(TCOLEXPANDDIV, false, sim::div_op("TCOLEXPANDDIV", x, y))
PTO_SIM_EXPAND_OP(TCOLEXPANDMAX, false, sim::fmax_op(x, y))
PTO_SIM_EXPAND_OP(TCOLEXPANDMIN, false, sim::fmin_op(x, y))
PTO_SIM_EXPAND_OP(TCOLEXPANDEXPDIF, false, std::exp(static_cast<M>(x) - static_cast<M>(y)))
#undef PTO_SIM_EXPAND_OP

}  // namespace pto
