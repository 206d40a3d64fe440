// Global-memory views: Shape, Stride, GlobalTensor and the tile (r, c) -> GM offset map.
#pragma once

#include <cstdint>
#include <type_traits>

#include "pto/sim/error.hpp"

namespace pto {

enum class Layout : int { ND = 0, DN = 1, NZ = 2 };

namespace sim {

// Static extents with -1 (DYNAMIC) slots filled at construction. Constructor arguments give
// either every dynamic extent in order, or every extent.
template <int... Ds>
struct Extents {
    static constexpr int rank = sizeof...(Ds);
    static_assert(rank >= 1 && rank <= 5, "Shape/Stride rank must be 1..5");
    static constexpr int kStatic[rank] = {Ds...};
    static constexpr int kDynamicCount = ((Ds == -1 ? 1 : 0) + ...);
    int64_t v[rank] = {Ds...};

    Extents() = default;

    template <class... I, class = std::enable_if_t<(sizeof...(I) > 0) && (std::is_integral<I>::value && ...)>>
    explicit Extents(I... vals) {
        const int64_t given[] = {static_cast<int64_t>(vals)...};
        constexpr int n = sizeof...(I);
        if (n == rank && n != kDynamicCount) {
            for (int i = 0; i < rank; ++i) v[i] = given[i];
        } else if (n == kDynamicCount) {
            int k = 0;
            for (int i = 0; i < rank; ++i) {
                if (kStatic[i] == -1) v[i] = given[k++];
            }
        } else {
            failf("pto sim: Shape/Stride of rank %d with %d dynamic extents constructed from %d values", rank,
                  kDynamicCount, n);
        }
    }

    int64_t operator[](int i) const { return v[i]; }
    // Extent i of the rank-5 form, padded on the left with `fill`.
    int64_t dim5(int i, int64_t fill) const { return i < 5 - rank ? fill : v[i - (5 - rank)]; }
};

}  // namespace sim

template <int... Ds>
struct Shape : sim::Extents<Ds...> {
    using sim::Extents<Ds...>::Extents;
};

template <int... Ds>
struct Stride : sim::Extents<Ds...> {
    using sim::Extents<Ds...>::Extents;
};

template <class T, class ShapeT, class StrideT, Layout L = Layout::ND>
class GlobalTensor {
   public:
    using DType = T;
    using ShapeType = ShapeT;
    using StrideType = StrideT;
    static constexpr Layout kLayout = L;
    static constexpr bool kIsGlobal = true;

    GlobalTensor() = default;
    GlobalTensor(T* ptr, ShapeT shape = ShapeT(), StrideT stride = StrideT())  // NOLINT
        : ptr_(ptr), shape_(shape), stride_(stride) {
        normalize();
    }

    T* data() const { return ptr_; }
    void SetAddr(T* p) { ptr_ = p; }
    int64_t GetShape(int i) const { return shape5_[i]; }
    int64_t GetStride(int i) const { return stride5_[i]; }

    bool well_formed() const {
        for (int64_t d : shape5_) {
            if (d <= 0) return false;
        }
        return true;
    }

    // Logical tile extent this view can serve: rows x cols.
    int64_t rows() const {
        if (L == Layout::DN) return shape5_[3];
        if (L == Layout::NZ) return shape5_[2] * shape5_[3];
        return shape5_[0] * shape5_[1] * shape5_[2] * shape5_[3];
    }
    int64_t cols() const {
        if (L == Layout::DN) return shape5_[0] * shape5_[1] * shape5_[2] * shape5_[4];
        if (L == Layout::NZ) return shape5_[0] * shape5_[1] * shape5_[4];
        return shape5_[4];
    }

    // Element offset of tile position (r, c), per the layout's index decomposition.
    int64_t offset(int64_t r, int64_t c) const {
        const int64_t* d = shape5_;
        const int64_t* s = stride5_;
        if (L == Layout::ND) return row_base(r) + c * s[4];
        if (L == Layout::DN) {
            const int64_t i4 = c % d[4], q = c / d[4];
            const int64_t i2 = q % d[2], q2 = q / d[2];
            const int64_t i1 = q2 % d[1], i0 = q2 / d[1];
            return i0 * s[0] + i1 * s[1] + i2 * s[2] + r * s[3] + i4 * s[4];
        }
        const int64_t i2 = r / d[3], i3 = r % d[3];
        const int64_t cb = c / d[4];
        const int64_t i0 = cb / d[1], i1 = cb % d[1], i4 = c % d[4];
        return i0 * s[0] + i1 * s[1] + i2 * s[2] + i3 * s[3] + i4 * s[4];
    }

    // ND only: offset of (r, 0); columns then advance by col_stride().
    int64_t row_base(int64_t r) const {
        const int64_t* d = shape5_;
        const int64_t* s = stride5_;
        const int64_t i3 = r % d[3], q = r / d[3];
        const int64_t i2 = q % d[2], q2 = q / d[2];
        const int64_t i1 = q2 % d[1], i0 = q2 / d[1];
        return i0 * s[0] + i1 * s[1] + i2 * s[2] + i3 * s[3];
    }
    int64_t col_stride() const { return stride5_[4]; }

    // Smallest and largest element offset a vr x vc tile window touches (vr, vc >= 1). Every layout's
    // offset(r, c) is offset(r, 0) + offset(0, c); a part that is linear in r or c costs O(1), the others
    // one walk over the rows or columns (never O(vr * vc)).
    void span(int vr, int vc, int64_t& lo, int64_t& hi) const {
        int64_t rlo = 0, rhi = 0, clo = 0, chi = 0;
        const bool rows_linear = L == Layout::DN || (L == Layout::ND && vr <= shape5_[3]);
        const bool cols_linear = L == Layout::ND;
        if (rows_linear) {
            const int64_t e = static_cast<int64_t>(vr - 1) * stride5_[3];
            (e < 0 ? rlo : rhi) = e;
        } else {
            for (int r = 1; r < vr; ++r) extend(offset(r, 0), rlo, rhi);
        }
        if (cols_linear) {
            const int64_t e = static_cast<int64_t>(vc - 1) * stride5_[4];
            (e < 0 ? clo : chi) = e;
        } else {
            for (int c = 1; c < vc; ++c) extend(offset(0, c), clo, chi);
        }
        lo = rlo + clo;
        hi = rhi + chi;
    }

   private:
    static void extend(int64_t o, int64_t& lo, int64_t& hi) {
        lo = o < lo ? o : lo;
        hi = o > hi ? o : hi;
    }

    void normalize() {
        for (int i = 0; i < 5; ++i) {
            shape5_[i] = shape_.dim5(i, 1);
            stride5_[i] = stride_.dim5(i, 0);
        }
    }

    T* ptr_ = nullptr;
    ShapeT shape_;
    StrideT stride_;
    int64_t shape5_[5] = {1, 1, 1, 1, 1};
    int64_t stride5_[5] = {0, 0, 0, 0, 0};
};

template <class T, class = void>
struct is_global_tensor : std::false_type {};
template <class T>
struct is_global_tensor<T, std::void_t<decltype(std::remove_reference_t<T>::kIsGlobal)>> : std::true_type {};

}  // namespace pto
