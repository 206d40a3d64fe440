// TMATMUL family: operands upcast to the accumulator type, summed over k ascending.
#pragma once

#include <type_traits>
#include <vector>

#include "pto/sim/tile.hpp"

namespace pto {
namespace sim {

template <class A>
struct MatmulScratch {
    std::vector<A> lhs, rhs, out;
};

template <class A>
__attribute__((visibility("hidden"))) inline MatmulScratch<A>& matmul_scratch() {
    static thread_local MatmulScratch<A> s;
    return s;
}

enum class AccInit { Zero, Acc, Bias };

// acc(i, j) = init(i, j) + sum_k L(i, k) * R(k, j) with M = L.vr, K = L.vc, N = R.vc.
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
    s.lhs.resize(static_cast<size_t>(M) * K);
    s.rhs.resize(static_cast<size_t>(K) * N);
    s.out.resize(static_cast<size_t>(M) * N);
    for (int i = 0; i < M; ++i)
        for (int k = 0; k < K; ++k) s.lhs[static_cast<size_t>(i) * K + k] = static_cast<A>(lhs.at(i, k));
    for (int k = 0; k < K; ++k)
        for (int j = 0; j < N; ++j) s.rhs[static_cast<size_t>(k) * N + j] = static_cast<A>(rhs.at(k, j));
    for (int i = 0; i < M; ++i) {
        A* o = s.out.data() + static_cast<size_t>(i) * N;
        for (int j = 0; j < N; ++j) {
            if (mode == AccInit::Acc) {
                o[j] = static_cast<A>(init->at(i, j));
            } else if (mode == AccInit::Bias) {
                o[j] = static_cast<A>(init->at(0, j));
            } else {
                o[j] = A(0);
            }
        }
        const A* a = s.lhs.data() + static_cast<size_t>(i) * K;
        for (int k = 0; k < K; ++k) {
            const A av = a[k];
            const A* b = s.rhs.data() + static_cast<size_t>(k) * N;
            for (int j = 0; j < N; ++j) o[j] += av * b[j];
        }
    }
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) acc.at(i, j) = s.out[static_cast<size_t>(i) * N + j];
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
