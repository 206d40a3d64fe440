// Tile declaration, layout maps (NoneBox row/col-major and boxed Nz/Zn/Zz/Nn) and valid region.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <type_traits>

#include "pto/sim/config.hpp"
#include "pto/sim/error.hpp"
#include "pto/sim/memory.hpp"

namespace pto {

enum class TileType : int { Vec = 0, Mat, Left, Right, Acc, Bias, Scaling, ScaleLeft, ScaleRight, Ctrl };
enum class BLayout : int { RowMajor = 0, ColMajor = 1 };
enum class SLayout : int { NoneBox = 0, RowMajor = 1, ColMajor = 2 };
enum class PadValue : uint64_t { Null = 0, Zero = 1, Max = 2, Min = 3, CustomBase = 0x10 };
enum class CompactMode : int { Null = 0, Normal = 1 };

struct TileConfig {
    static constexpr int alignedSize = 32;
    static constexpr int fixedRowSize = 16;
    static constexpr int fixedColSize = 16;
    static constexpr int fractalABSize = 512;
    static constexpr int fractalCSize = 1024;
    static constexpr int fractalMxSize = 32;
};

namespace sim {

constexpr Region region_of(TileType t) {
    switch (t) {
        case TileType::Mat: return Region::L1;
        case TileType::Left: return Region::L0A;
        case TileType::Right: return Region::L0B;
        case TileType::Acc: return Region::L0C;
        case TileType::Bias: return Region::BIAS;
        case TileType::ScaleLeft: return Region::L0A_MX;
        case TileType::ScaleRight: return Region::L0B_MX;
        default: return Region::UB;
    }
}

constexpr const char* tile_type_name(TileType t) {
    constexpr const char* kNames[] = {"Vec", "Mat", "Left", "Right", "Acc", "Bias",
                                      "Scaling", "ScaleLeft", "ScaleRight", "Ctrl"};
    return kNames[static_cast<int>(t)];
}

template <class T>
struct is_float_like
    : std::integral_constant<bool, std::is_floating_point<T>::value || std::is_same<T, half>::value ||
                                       std::is_same<T, bfloat16_t>::value> {};

// Value stored by TLOAD outside the valid region (Null reads as zero on the CPU).
template <class T>
inline T pad_value(PadValue p) {
    const uint64_t v = static_cast<uint64_t>(p);
    if (v == 0 || v == 1) return T(0);
    if (v == 2 || v == 3) {
        if constexpr (is_float_like<T>::value) {
            float inf = std::numeric_limits<float>::infinity();
            return T(v == 2 ? inf : -inf);
        } else {
            return v == 2 ? std::numeric_limits<T>::max() : std::numeric_limits<T>::lowest();
        }
    }
    uint32_t bits = static_cast<uint32_t>(v >> 32);
    float f;
    std::memcpy(&f, &bits, 4);
    return T(f);
}

}  // namespace sim

template <TileType Loc_, class DType_, int Rows_, int Cols_, BLayout BL_ = BLayout::RowMajor,
          int RowValid_ = Rows_, int ColValid_ = Cols_, SLayout SL_ = SLayout::NoneBox, int SFractal_ = 512,
          PadValue Pad_ = PadValue::Null, CompactMode CM_ = CompactMode::Null>
class Tile {
   public:
    using DType = DType_;
    static constexpr bool kIsTile = true;
    static constexpr TileType Loc = Loc_;
    static constexpr int Rows = Rows_;
    static constexpr int Cols = Cols_;
    static constexpr BLayout BFractal = BL_;
    static constexpr SLayout SFractal = SL_;
    static constexpr int SFractalSize = SFractal_;
    static constexpr PadValue Pad = Pad_;
    static constexpr int ValidRow = RowValid_;
    static constexpr int ValidCol = ColValid_;
    static constexpr bool isRowMajor = BL_ == BLayout::RowMajor;
    static constexpr bool kBoxed = SL_ != SLayout::NoneBox;
    static constexpr bool kDenseRowMajor = !kBoxed && BL_ == BLayout::RowMajor;
    static constexpr bool kDenseColMajor = !kBoxed && BL_ == BLayout::ColMajor;
    static constexpr sim::Region kRegion = sim::region_of(Loc_);

   private:
    static constexpr int kBoxElems = SFractal_ / static_cast<int>(sizeof(DType_)) > 0
                                         ? SFractal_ / static_cast<int>(sizeof(DType_))
                                         : 1;
    static constexpr int kRowBoxIR = SFractal_ == 1024 ? 16 : (kBoxElems >= 16 ? 16 : kBoxElems);
    static constexpr int kRowBoxIC = SFractal_ == 1024 ? 16 : (kBoxElems >= 16 ? kBoxElems / 16 : 1);

   public:
    // Inner box (IR, IC): inner row-major as computed, inner col-major is its transpose.
    static constexpr int IR = !kBoxed ? 1 : (SL_ == SLayout::RowMajor ? kRowBoxIR : kRowBoxIC);
    static constexpr int IC = !kBoxed ? 1 : (SL_ == SLayout::RowMajor ? kRowBoxIC : kRowBoxIR);
    static constexpr int kStoreRows = (Rows_ + IR - 1) / IR * IR;
    static constexpr int kStoreCols = (Cols_ + IC - 1) / IC * IC;
    static constexpr int64_t kNumel = static_cast<int64_t>(kStoreRows) * kStoreCols;
    static constexpr int64_t kBytes = kNumel * static_cast<int64_t>(sizeof(DType_));

    static_assert(Rows_ > 0 && Cols_ > 0, "Tile rows and cols must be positive");
    static_assert(RowValid_ == -1 || (RowValid_ >= 0 && RowValid_ <= Rows_), "ValidRow must be <= Rows");
    static_assert(ColValid_ == -1 || (ColValid_ >= 0 && ColValid_ <= Cols_), "ValidCol must be <= Cols");

    Tile() = default;
    Tile(int64_t vr, int64_t vc) { SetValid(vr, vc); }
    // Single extent: sets whichever extent is dynamic (the row if both are).
    explicit Tile(int64_t v) {
        if constexpr (RowValid_ == -1) {
            SetValid(v, vc_);
        } else {
            SetValid(vr_, v);
        }
    }

    void SetValid(int64_t vr, int64_t vc) {
        if constexpr (RowValid_ == -1) vr_ = static_cast<int>(vr);
        if constexpr (ColValid_ == -1) vc_ = static_cast<int>(vc);
        if (vr_ < 0 || vr_ > Rows_ || vc_ < 0 || vc_ > Cols_) {
            sim::failf("pto sim: %s tile %dx%d given valid shape (%lld, %lld) outside its capacity",
                       sim::tile_type_name(Loc_), Rows_, Cols_, static_cast<long long>(vr),
                       static_cast<long long>(vc));
        }
    }

    int GetValidRow() const { return RowValid_ == -1 ? vr_ : RowValid_; }
    int GetValidCol() const { return ColValid_ == -1 ? vc_ : ColValid_; }

    DType* data() const { return data_; }
    void SetData(DType* p) { data_ = p; }

    // Element offset of logical (r, c) within the tile storage.
    static constexpr int64_t offset(int r, int c) {
        if constexpr (!kBoxed) {
            return isRowMajor ? static_cast<int64_t>(r) * Cols_ + c : static_cast<int64_t>(c) * Rows_ + r;
        } else {
            constexpr int64_t R = kStoreRows, C = kStoreCols, N = static_cast<int64_t>(IR) * IC;
            const int64_t br = r / IR, ir = r % IR, bc = c / IC, ic = c % IC;
            const int64_t inner = SL_ == SLayout::RowMajor ? ir * IC + ic : ic * IR + ir;
            return isRowMajor ? br * C * IR + bc * N + inner : bc * R * IC + br * N + inner;
        }
    }

    DType& at(int r, int c) const { return data_[offset(r, c)]; }

   private:
    DType* data_ = nullptr;
    int vr_ = RowValid_ == -1 ? Rows_ : RowValid_;
    int vc_ = ColValid_ == -1 ? Cols_ : ColValid_;
};

template <class T, int R, int C, int RV = R, int CV = C>
using TileLeft = Tile<TileType::Left, T, R, C, BLayout::ColMajor, RV, CV, SLayout::RowMajor, 512>;
template <class T, int R, int C, int RV = R, int CV = C>
using TileRight = Tile<TileType::Right, T, R, C, BLayout::RowMajor, RV, CV, SLayout::ColMajor, 512>;
template <class T, int R, int C, int RV = R, int CV = C>
using TileAcc = Tile<TileType::Acc, T, R, C, BLayout::ColMajor, RV, CV, SLayout::RowMajor, 1024>;

template <class T, class = void>
struct is_tile : std::false_type {};
template <class T>
struct is_tile<T, std::void_t<decltype(std::remove_reference_t<T>::kIsTile)>> : std::true_type {};

template <class T>
struct is_sim_scalar
    : std::integral_constant<bool, std::is_arithmetic<std::decay_t<T>>::value ||
                                       std::is_same<std::decay_t<T>, half>::value ||
                                       std::is_same<std::decay_t<T>, bfloat16_t>::value ||
                                       std::is_enum<std::decay_t<T>>::value> {};

namespace sim {

template <class TileT>
inline void require_assigned(const char* op, const TileT& t) {
    if (t.data() == nullptr) {
        failf("pto sim: %s on a %s tile %dx%d that was never TASSIGNed", op, tile_type_name(TileT::Loc),
              TileT::Rows, TileT::Cols);
    }
}

template <class A, class B>
inline void require_same_valid(const char* op, const A& a, const B& b) {
    require_assigned(op, a);
    require_assigned(op, b);
    if (a.GetValidRow() != b.GetValidRow() || a.GetValidCol() != b.GetValidCol()) {
        failf("pto sim: %s operands have different valid shapes (%d, %d) vs (%d, %d)", op, a.GetValidRow(),
              a.GetValidCol(), b.GetValidRow(), b.GetValidCol());
    }
}

// Storage runs of a tile: along columns (row-major, or boxes with row-major inner layout) or along
// rows, and how many consecutive elements a run holds before the next box or line starts.
template <class TileT>
struct StorageRuns {
    static constexpr bool kAlongCols = TileT::kBoxed ? TileT::SFractal == SLayout::RowMajor : TileT::isRowMajor;
    static constexpr int kLength = TileT::kBoxed ? (kAlongCols ? TileT::IC : TileT::IR)
                                                 : (kAlongCols ? TileT::Cols : TileT::Rows);
};

// fn(offset, r, c, n) for each storage run of the (vr x vc) window at (0, 0): n stored elements from
// offset on, logically (r, c), (r, c + 1), ... along columns, or (r, c), (r + 1, c), ... along rows.
template <class TileT, class F>
inline void for_each_run(int vr, int vc, F fn) {
    using R = StorageRuns<TileT>;
    const int lines = R::kAlongCols ? vr : vc, len = R::kAlongCols ? vc : vr;
    for (int l = 0; l < lines; ++l) {
        for (int i = 0; i < len; i += R::kLength) {
            const int n = len - i < R::kLength ? len - i : R::kLength;
            if (R::kAlongCols) {
                fn(TileT::offset(l, i), l, i, n);
            } else {
                fn(TileT::offset(i, l), i, l, n);
            }
        }
    }
}

// memcpy of n <= L elements; a whole run (n == L, the common case) is a fixed-size copy the compiler
// inlines instead of a library call per run.
template <int L, class T>
inline void copy_run(T* d, const T* s, int n) {
    if (n == L) {
        std::memcpy(d, s, sizeof(T) * L);
    } else {
        std::memcpy(d, s, sizeof(T) * static_cast<size_t>(n));
    }
}

// GM offset of row r of a view, remembered across the runs of one row (row_base divides by extents).
template <class G>
struct RowBase {
    const G& g;
    int row = -1;
    int64_t base = 0;
    int64_t operator()(int r) {
        if (r != row) {
            row = r;
            base = g.row_base(r);
        }
        return base;
    }
};

// Element offsets of a window's rows and columns: offset(r, c) == rows[r] + cols[c] for every tile and
// GM layout. Per-thread scratch, valid until the next call on the thread.
struct RowColOffsets {
    int64_t* rows;
    int64_t* cols;
};

struct OffsetScratch {
    int64_t* buf = nullptr;
    int cap = 0;
    ~OffsetScratch() { std::free(buf); }
};

__attribute__((visibility("hidden"))) inline RowColOffsets offset_scratch(int nr, int nc) {
    static thread_local OffsetScratch s;
    if (nr + nc > s.cap) {
        const int cap = nr + nc < 1024 ? 1024 : nr + nc;
        auto* p = static_cast<int64_t*>(std::malloc(sizeof(int64_t) * static_cast<size_t>(cap)));
        if (p == nullptr) fail("pto sim: out of memory for tile offsets");
        std::free(s.buf);
        s.buf = p;
        s.cap = cap;
    }
    return RowColOffsets{s.buf, s.buf + nr};
}

template <class TileT>
inline RowColOffsets tile_offsets(int r0, int c0, int nr, int nc) {
    RowColOffsets o = offset_scratch(nr, nc);
    for (int r = 0; r < nr; ++r) o.rows[r] = TileT::offset(r0 + r, 0);
    for (int c = 0; c < nc; ++c) o.cols[c] = TileT::offset(0, c0 + c);
    return o;
}

}  // namespace sim
}  // namespace pto
