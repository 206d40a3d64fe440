// TASSIGN, TLOAD, TSTORE and on-chip moves (TMOV, TEXTRACT, TINSERT, TFILLPAD, TRESHAPE).
#pragma once

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "pto/sim/global.hpp"
#include "pto/sim/gm_guard.hpp"
#include "pto/sim/tile.hpp"

namespace pto {

enum class AtomicType : int { AtomicNone = 0, AtomicAdd = 1 };
enum class ReluPreMode : int { NoRelu = 0, NormalRelu = 1 };

namespace sim {

template <class TileT>
inline void bind_offset(TileT& t, int64_t addr) {
    constexpr Region reg = TileT::kRegion;
    const int64_t cap = static_cast<int64_t>(region_capacity(reg));
    if (addr < 0 || addr + TileT::kBytes > cap) {
        failf("pto sim: TASSIGN of %s tile %dx%d (%lld B) at byte address %lld exceeds %s capacity %lld B (%s)",
              tile_type_name(TileT::Loc), TileT::Rows, TileT::Cols, static_cast<long long>(TileT::kBytes),
              static_cast<long long>(addr), region_name(reg), static_cast<long long>(cap), kArchName);
    }
    if (addr % static_cast<int64_t>(sizeof(typename TileT::DType)) != 0) {
        failf("pto sim: TASSIGN of %s tile at byte address %lld is not aligned to its %zu-byte element",
              tile_type_name(TileT::Loc), static_cast<long long>(addr), sizeof(typename TileT::DType));
    }
    t.SetData(reinterpret_cast<typename TileT::DType*>(core_memory().base(reg) + addr));
}

template <class TileT>
inline void bind_pointer(TileT& t, const void* p) {
    CoreMemory& mem = core_memory();
    Region reg = mem.find(p);
    if (reg == Region::kCount) {
        failf("pto sim: TASSIGN of %s tile to pointer %p, which is in no on-chip region of this core",
              tile_type_name(TileT::Loc), p);
    }
    const int64_t addr = static_cast<const unsigned char*>(p) - mem.base(reg);
    const int64_t cap = static_cast<int64_t>(region_capacity(reg));
    if (addr + TileT::kBytes > cap) {
        failf("pto sim: TASSIGN of %s tile %dx%d (%lld B) at %s byte address %lld exceeds capacity %lld B",
              tile_type_name(TileT::Loc), TileT::Rows, TileT::Cols, static_cast<long long>(TileT::kBytes),
              region_name(reg), static_cast<long long>(addr), static_cast<long long>(cap));
    }
    t.SetData(reinterpret_cast<typename TileT::DType*>(const_cast<void*>(p)));
}

template <class TileT, class G>
inline void check_gm_window(const char* op, const TileT& t, const G& g) {
    require_assigned(op, t);
    const int vr = t.GetValidRow(), vc = t.GetValidCol();
    if (vr == 0 || vc == 0) return;
    if (g.data() == nullptr) failf("pto sim: %s with a null GlobalTensor pointer", op);
    if (!g.well_formed() || vr > g.rows() || vc > g.cols()) {
        failf("pto sim: %s of valid region (%d, %d) does not fit the GlobalTensor view %lldx%lld "
              "(shape [%lld, %lld, %lld, %lld, %lld])",
              op, vr, vc, static_cast<long long>(g.rows()), static_cast<long long>(g.cols()),
              static_cast<long long>(g.GetShape(0)), static_cast<long long>(g.GetShape(1)),
              static_cast<long long>(g.GetShape(2)), static_cast<long long>(g.GetShape(3)),
              static_cast<long long>(g.GetShape(4)));
    }
    int64_t lo = 0, hi = 0;
    g.span(vr, vc, lo, hi);
    check_gm_span(op, g.data(), lo, hi, sizeof(typename G::DType), vr, vc);
}

// GM element offsets of a window's rows and columns (every layout's offset(r, c) is offset(r, 0) + offset(0, c)).
template <class G>
inline RowColOffsets gm_offsets(const G& g, int vr, int vc) {
    RowColOffsets o = offset_scratch(vr, vc);
    for (int r = 0; r < vr; ++r) o.rows[r] = g.offset(r, 0);
    for (int c = 0; c < vc; ++c) o.cols[c] = g.offset(0, c);
    return o;
}

template <class T>
inline void atomic_add(T* p, T v) {
    using Bits = std::conditional_t<sizeof(T) == 8, uint64_t,
                                    std::conditional_t<sizeof(T) == 4, uint32_t,
                                                       std::conditional_t<sizeof(T) == 2, uint16_t, uint8_t>>>;
    static_assert(sizeof(Bits) == sizeof(T), "atomic add on an unsupported element size");
    Bits* addr = reinterpret_cast<Bits*>(p);
    Bits expected = __atomic_load_n(addr, __ATOMIC_RELAXED);
    for (;;) {
        T cur;
        std::memcpy(&cur, &expected, sizeof(T));
        T next = static_cast<T>(cur + v);
        Bits desired;
        std::memcpy(&desired, &next, sizeof(T));
        if (__atomic_compare_exchange_n(addr, &expected, desired, false, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) return;
    }
}

}  // namespace sim

template <class TileT, class A, std::enable_if_t<is_tile<TileT>::value && std::is_integral<A>::value, int> = 0>
inline void TASSIGN(TileT& t, A addr) {
    sim::bind_offset(t, static_cast<int64_t>(addr));
}

template <class TileT, class P, std::enable_if_t<is_tile<TileT>::value, int> = 0>
inline void TASSIGN(TileT& t, P* p) {
    sim::bind_pointer(t, static_cast<const void*>(p));
}

template <class G, class P, std::enable_if_t<is_global_tensor<G>::value, int> = 0>
inline void TASSIGN(G& g, P* p) {
    g.SetAddr(reinterpret_cast<typename G::DType*>(p));
}

template <class TileT, class G, std::enable_if_t<is_tile<TileT>::value && is_global_tensor<G>::value, int> = 0>
inline void TLOAD(TileT& t, const G& g) {
    using T = typename TileT::DType;
    using S = typename G::DType;
    static_assert(sizeof(T) == sizeof(S), "TLOAD does not convert: GM and tile element sizes must match");
    sim::check_gm_window("TLOAD", t, g);
    const int vr = t.GetValidRow(), vc = t.GetValidCol();
    T* dst = t.data();
    if (vr < TileT::Rows || vc < TileT::Cols) {
        const T pad = sim::pad_value<T>(TileT::Pad);
        std::fill(dst, dst + TileT::kNumel, pad);
    }
    const S* src = g.data();
    if constexpr (sim::StorageRuns<TileT>::kAlongCols && G::kLayout == Layout::ND) {
        if (g.col_stride() == 1) {  // runs of the tile are pieces of GM rows
            sim::RowBase<G> row{g};
            sim::for_each_run<TileT>(vr, vc, [&](int64_t o, int r, int c, int n) {
                sim::copy_run<sim::StorageRuns<TileT>::kLength>(dst + o, reinterpret_cast<const T*>(src + row(r) + c), n);
            });
            return;
        }
    }
    const sim::RowColOffsets go = sim::gm_offsets(g, vr, vc);
    sim::for_each_run<TileT>(vr, vc, [&](int64_t o, int r, int c, int n) {
        for (int k = 0; k < n; ++k) {
            const int64_t at = sim::StorageRuns<TileT>::kAlongCols ? go.rows[r] + go.cols[c + k] : go.rows[r + k] + go.cols[c];
            std::memcpy(&dst[o + k], &src[at], sizeof(T));
        }
    });
}

template <AtomicType Atomic = AtomicType::AtomicNone, class G, class TileT,
          std::enable_if_t<is_tile<TileT>::value && is_global_tensor<G>::value, int> = 0>
inline void TSTORE(G& g, const TileT& t) {
    using T = typename TileT::DType;
    using D = typename G::DType;
    sim::check_gm_window("TSTORE", t, g);
    const int vr = t.GetValidRow(), vc = t.GetValidCol();
    const T* src = t.data();
    D* dst = g.data();
    if constexpr (Atomic == AtomicType::AtomicAdd) {
        for (int r = 0; r < vr; ++r) {
            for (int c = 0; c < vc; ++c) {
                sim::atomic_add(&dst[g.offset(r, c)], static_cast<D>(src[TileT::offset(r, c)]));
            }
        }
        return;
    } else {
        if constexpr (sim::StorageRuns<TileT>::kAlongCols && G::kLayout == Layout::ND) {
            if (g.col_stride() == 1) {  // runs of the tile are pieces of GM rows
                sim::RowBase<G> row{g};
                sim::for_each_run<TileT>(vr, vc, [&](int64_t o, int r, int c, int n) {
                    D* d = dst + row(r) + c;
                    if constexpr (std::is_same<D, T>::value) {
                        sim::copy_run<sim::StorageRuns<TileT>::kLength>(d, src + o, n);
                    } else {
                        for (int k = 0; k < n; ++k) d[k] = static_cast<D>(src[o + k]);
                    }
                });
                return;
            }
        }
        const sim::RowColOffsets go = sim::gm_offsets(g, vr, vc);
        sim::for_each_run<TileT>(vr, vc, [&](int64_t o, int r, int c, int n) {
            for (int k = 0; k < n; ++k) {
                const int64_t at = sim::StorageRuns<TileT>::kAlongCols ? go.rows[r] + go.cols[c + k] : go.rows[r + k] + go.cols[c];
                dst[at] = static_cast<D>(src[o + k]);
            }
        });
    }
}

template <class G, class TileT, std::enable_if_t<is_tile<TileT>::value && is_global_tensor<G>::value, int> = 0>
inline void TSTORE(G& g, const TileT& t, AtomicType atomic) {
    if (atomic == AtomicType::AtomicAdd) {
        TSTORE<AtomicType::AtomicAdd>(g, t);
    } else {
        TSTORE<AtomicType::AtomicNone>(g, t);
    }
}

namespace sim {

struct Identity {
    template <class T>
    T operator()(T v) const { return v; }
};

// dst(r, c) = f(src(r + ro, c + co)) over dst's valid region; when both tiles store the window's
// lines in the same direction, in chunks that stay inside one run of each.
template <class TD, class TS, class F>
inline void copy_window(TD& dst, const TS& src, int ro, int co, int vr, int vc, F f) {
    using D = typename TD::DType;
    using RD = StorageRuns<TD>;
    using RS = StorageRuns<TS>;
    if constexpr (RD::kAlongCols == RS::kAlongCols) {
        constexpr bool cols = RD::kAlongCols;
        const int lines = cols ? vr : vc, len = cols ? vc : vr, lo = cols ? ro : co, so = cols ? co : ro;
        for (int l = 0; l < lines; ++l) {
            for (int i = 0; i < len;) {
                const int ds = i % RD::kLength, ss = (i + so) % RS::kLength;
                int n = RD::kLength - ds < RS::kLength - ss ? RD::kLength - ds : RS::kLength - ss;
                n = n < len - i ? n : len - i;
                D* d = dst.data() + (cols ? TD::offset(l, i) : TD::offset(i, l));
                const auto* p = src.data() + (cols ? TS::offset(l + lo, i + so) : TS::offset(i + so, l + lo));
                if constexpr (std::is_same<F, Identity>::value && std::is_same<D, std::decay_t<decltype(*p)>>::value) {
                    copy_run<(RD::kLength < RS::kLength ? RD::kLength : RS::kLength)>(d, p, n);
                } else {
                    for (int k = 0; k < n; ++k) d[k] = static_cast<D>(f(p[k]));
                }
                i += n;
            }
        }
    } else {  // a transpose of the storage order: dst's runs, src's offsets from its row and column parts
        const RowColOffsets so = tile_offsets<TS>(ro, co, vr, vc);
        auto* d = dst.data();
        const auto* p = src.data();
        for_each_run<TD>(vr, vc, [&](int64_t o, int r, int c, int n) {
            for (int k = 0; k < n; ++k) d[o + k] = static_cast<D>(f(p[so.rows[r + (RD::kAlongCols ? 0 : k)] +
                                                                  so.cols[c + (RD::kAlongCols ? k : 0)]]));
        });
    }
}

}  // namespace sim

template <class TD, class TS, std::enable_if_t<is_tile<TD>::value && is_tile<TS>::value, int> = 0>
inline void TMOV(TD& dst, const TS& src, ReluPreMode relu = ReluPreMode::NoRelu) {
    sim::require_same_valid("TMOV", dst, src);
    using S = typename TS::DType;
    if (relu == ReluPreMode::NormalRelu) {
        sim::copy_window(dst, src, 0, 0, dst.GetValidRow(), dst.GetValidCol(),
                         [](S v) { return v > S(0) ? v : S(0); });
    } else {
        sim::copy_window(dst, src, 0, 0, dst.GetValidRow(), dst.GetValidCol(), sim::Identity{});
    }
}

template <class TD, class TS, std::enable_if_t<is_tile<TD>::value && is_tile<TS>::value, int> = 0>
inline void TEXTRACT(TD& dst, const TS& src, int64_t row_off, int64_t col_off) {
    sim::require_assigned("TEXTRACT", dst);
    sim::require_assigned("TEXTRACT", src);
    const int vr = dst.GetValidRow(), vc = dst.GetValidCol();
    if (row_off < 0 || col_off < 0 || row_off + vr > src.GetValidRow() || col_off + vc > src.GetValidCol()) {
        sim::failf("pto sim: TEXTRACT window (%lld, %lld) + (%d, %d) exceeds the source valid region (%d, %d)",
                   static_cast<long long>(row_off), static_cast<long long>(col_off), vr, vc, src.GetValidRow(),
                   src.GetValidCol());
    }
    using S = typename TS::DType;
    sim::copy_window(dst, src, static_cast<int>(row_off), static_cast<int>(col_off), vr, vc,
                     sim::Identity{});
}

template <class TD, class TS, std::enable_if_t<is_tile<TD>::value && is_tile<TS>::value, int> = 0>
inline void TINSERT(TD& dst, const TS& src, int64_t row_off, int64_t col_off) {
    sim::require_assigned("TINSERT", dst);
    sim::require_assigned("TINSERT", src);
    const int vr = src.GetValidRow(), vc = src.GetValidCol();
    if (row_off < 0 || col_off < 0 || row_off + vr > TD::Rows || col_off + vc > TD::Cols) {
        sim::failf("pto sim: TINSERT of (%d, %d) at (%lld, %lld) exceeds the destination %dx%d", vr, vc,
                   static_cast<long long>(row_off), static_cast<long long>(col_off), TD::Rows, TD::Cols);
    }
    using D = typename TD::DType;
    for (int r = 0; r < vr; ++r) {
        for (int c = 0; c < vc; ++c) dst.at(r + static_cast<int>(row_off), c + static_cast<int>(col_off)) =
            static_cast<D>(src.at(r, c));
    }
}

// dst = src on src's valid region, dst's pad value on the rest of dst's capacity.
template <class TD, class TS, std::enable_if_t<is_tile<TD>::value && is_tile<TS>::value, int> = 0>
inline void TFILLPAD(TD& dst, const TS& src) {
    sim::require_assigned("TFILLPAD", dst);
    sim::require_assigned("TFILLPAD", src);
    using D = typename TD::DType;
    const D pad = sim::pad_value<D>(TD::Pad);
    const int vr = std::min(src.GetValidRow(), TD::Rows), vc = std::min(src.GetValidCol(), TD::Cols);
    for (int r = 0; r < TD::Rows; ++r) {
        for (int c = 0; c < TD::Cols; ++c) {
            dst.at(r, c) = (r < vr && c < vc) ? static_cast<D>(src.at(r, c)) : pad;
        }
    }
}

// View src's bytes through dst's type (metadata only).
template <class TD, class TS, std::enable_if_t<is_tile<TD>::value && is_tile<TS>::value, int> = 0>
inline void TRESHAPE(TD& dst, const TS& src) {
    sim::require_assigned("TRESHAPE", src);
    if (TD::kBytes > TS::kBytes) {
        sim::failf("pto sim: TRESHAPE to %lld bytes from a %lld-byte tile", static_cast<long long>(TD::kBytes),
                   static_cast<long long>(TS::kBytes));
    }
    dst.SetData(reinterpret_cast<typename TD::DType*>(src.data()));
}

template <class G>
inline void TPREFETCH(const G&) {}

}  // namespace pto

namespace pto {

// dst(c, r) = src(r, c) over src's valid region; the optional scratch tile is unused.
template <class TD, class TS, std::enable_if_t<is_tile<TD>::value && is_tile<TS>::value, int> = 0>
inline void TTRANS(TD& dst, const TS& src) {
    sim::require_assigned("TTRANS", dst);
    sim::require_assigned("TTRANS", src);
    const int vr = src.GetValidRow(), vc = src.GetValidCol();
    if (vc > TD::Rows || vr > TD::Cols) {
        sim::failf("pto sim: TTRANS of (%d, %d) into a %dx%d destination", vr, vc, TD::Rows, TD::Cols);
    }
    using D = typename TD::DType;
    for (int r = 0; r < vr; ++r) {
        for (int c = 0; c < vc; ++c) dst.at(c, r) = static_cast<D>(src.at(r, c));
    }
}

template <class TD, class TS, class TT,
          std::enable_if_t<is_tile<TD>::value && is_tile<TS>::value && is_tile<TT>::value, int> = 0>
inline void TTRANS(TD& dst, const TS& src, const TT&) {
    TTRANS(dst, src);
}

}  // namespace pto
