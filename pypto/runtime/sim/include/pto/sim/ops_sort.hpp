// TSORT32, TMRGSORT (single list, block form), TGATHER and TSCATTER (index forms), with the hardware's
// (value, index) pair layout: an f32 pair occupies two f32 slots, the value in the even slot and the
// 32-bit index bits in the odd slot. Sorting is descending; equal values keep ascending index order
// within a block, and a merge takes from the earlier run on ties (stable).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>
#include <vector>

#include "pto/sim/error.hpp"
#include "pto/sim/ops_mem.hpp"
#include "pto/sim/tile.hpp"

namespace pto {

namespace sim {

template <class TileT>
inline void require_sort_row(const char* op, const TileT& t) {
    require_assigned(op, t);
    static_assert(TileT::Loc == TileType::Vec && TileT::kDenseRowMajor, "sort ops take dense row-major Vec tiles");
}

using SortPair = std::pair<float, uint32_t>;

inline bool pair_before(const SortPair& a, const SortPair& b) {
    return a.first > b.first || (a.first == b.first && a.second < b.second);
}

template <class TileT>
inline void put_pair(TileT& t, int r, int slot, const SortPair& p) {
    t.at(r, 2 * slot) = p.first;
    std::memcpy(&t.at(r, 2 * slot + 1), &p.second, sizeof(uint32_t));
}

template <class TileT>
inline SortPair get_pair(const TileT& t, int r, int slot) {
    SortPair p{t.at(r, 2 * slot), 0u};
    std::memcpy(&p.second, &t.at(r, 2 * slot + 1), sizeof(uint32_t));
    return p;
}

}  // namespace sim

// dst(r, 2k), dst(r, 2k+1) = the k-th (value, idx) pair of row r, each block of 32 columns of src sorted
// descending; rows = dst's valid rows, blocks = src's valid columns / 32.
template <class TD, class TS, class TI,
          std::enable_if_t<is_tile<TD>::value && is_tile<TS>::value && is_tile<TI>::value, int> = 0>
inline void TSORT32(TD& dst, const TS& src, const TI& idx) {
    static_assert(std::is_same<typename TD::DType, float>::value && std::is_same<typename TS::DType, float>::value,
                  "TSORT32: the sim implements f32 values");
    static_assert(sizeof(typename TI::DType) == 4, "TSORT32: indices are 32-bit");
    sim::require_sort_row("TSORT32", dst);
    sim::require_sort_row("TSORT32", src);
    sim::require_sort_row("TSORT32", idx);
    const int rows = dst.GetValidRow(), cols = src.GetValidCol();
    if (cols % 32 != 0 || 2 * cols > TD::Cols || cols > idx.GetValidCol()) {
        sim::failf("pto sim: TSORT32 of %d columns needs a multiple of 32, %d index columns and %d destination "
                   "columns (have %d and %d)", cols, cols, 2 * cols, idx.GetValidCol(), TD::Cols);
    }
    std::vector<sim::SortPair> block(32);
    for (int r = 0; r < rows; ++r) {
        for (int b = 0; b < cols; b += 32) {
            for (int k = 0; k < 32; ++k) {
                uint32_t i;
                std::memcpy(&i, &idx.at(std::min(r, idx.GetValidRow() - 1), b + k), sizeof(uint32_t));
                block[k] = {src.at(r, b + k), i};
            }
            std::stable_sort(block.begin(), block.end(), sim::pair_before);
            for (int k = 0; k < 32; ++k) sim::put_pair(dst, r, b + k, block[k]);
        }
    }
}

// Every 4 consecutive sorted runs of blockLen slots (blockLen / 2 pairs) of src's first row merge into
// one run of 4 * blockLen slots in dst; src's valid columns must be a multiple of 4 * blockLen.
template <class TD, class TS, class L,
          std::enable_if_t<is_tile<TD>::value && is_tile<TS>::value && std::is_integral<L>::value, int> = 0>
inline void TMRGSORT(TD& dst, const TS& src, L blockLen) {
    static_assert(std::is_same<typename TD::DType, float>::value && std::is_same<typename TS::DType, float>::value,
                  "TMRGSORT: the sim implements f32 pairs");
    sim::require_sort_row("TMRGSORT", dst);
    sim::require_sort_row("TMRGSORT", src);
    const int cols = src.GetValidCol(), bl = static_cast<int>(blockLen);
    if (TS::Rows != 1 || TD::Rows != 1 || bl <= 0 || bl % 64 != 0 || cols % (4 * bl) != 0 || cols > TD::Cols ||
        cols / (4 * bl) > 255) {
        sim::failf("pto sim: TMRGSORT of a %dx%d tile with blockLen %d: needs one row, blockLen a multiple of 64 "
                   "and a row length that is a multiple of 4 * blockLen (at most 255 of them)", TS::Rows, cols, bl);
    }
    if (static_cast<const void*>(dst.data()) == static_cast<const void*>(src.data())) {
        sim::failf("pto sim: TMRGSORT cannot merge in place (dst and src share UB bytes)");
    }
    const int run = bl / 2;  // pairs per run
    std::vector<sim::SortPair> merged;
    for (int base = 0; base < cols / 2; base += 4 * run) {
        merged.clear();
        int pos[4] = {0, 0, 0, 0};
        for (int n = 0; n < 4 * run; ++n) {
            int best = -1;
            sim::SortPair bp{};
            for (int k = 0; k < 4; ++k) {
                if (pos[k] == run) continue;
                sim::SortPair p = sim::get_pair(src, 0, base + k * run + pos[k]);
                if (best < 0 || p.first > bp.first) {
                    best = k;
                    bp = p;
                }
            }
            ++pos[best];
            merged.push_back(bp);
        }
        for (int n = 0; n < 4 * run; ++n) sim::put_pair(dst, 0, base + n, merged[n]);
    }
}

// dst(r, c) = src element at flat row-major index idx(r, c) (0 when out of range), over dst's valid region.
template <class TD, class TS, class TI,
          std::enable_if_t<is_tile<TD>::value && is_tile<TS>::value && is_tile<TI>::value, int> = 0>
inline void TGATHER(TD& dst, const TS& src, const TI& idx) {
    static_assert(std::is_same<typename TD::DType, typename TS::DType>::value, "TGATHER: dst and src share a dtype");
    static_assert(sizeof(typename TI::DType) == 4, "TGATHER: indices are 32-bit");
    sim::require_sort_row("TGATHER", dst);
    sim::require_sort_row("TGATHER", src);
    sim::require_sort_row("TGATHER", idx);
    const int64_t n = static_cast<int64_t>(TS::Rows) * TS::Cols;
    for (int r = 0; r < dst.GetValidRow(); ++r) {
        for (int c = 0; c < dst.GetValidCol(); ++c) {
            const int64_t i = static_cast<int64_t>(idx.at(r, c));
            if (i < 0 || i >= n) {
                sim::failf("pto sim: TGATHER index %lld at (%d, %d) is outside the %dx%d source tile",
                           static_cast<long long>(i), r, c, TS::Rows, TS::Cols);
            }
            dst.at(r, c) = src.data()[i];
        }
    }
}

// dst element at flat row-major index idx(r, c) = src(r, c), over src's valid region; the rest of dst is kept.
template <class TD, class TS, class TI,
          std::enable_if_t<is_tile<TD>::value && is_tile<TS>::value && is_tile<TI>::value, int> = 0>
inline void TSCATTER(TD& dst, const TS& src, const TI& idx) {
    static_assert(std::is_same<typename TD::DType, typename TS::DType>::value, "TSCATTER: dst and src share a dtype");
    static_assert(sizeof(typename TI::DType) == 4 || sizeof(typename TI::DType) == 2,
                  "TSCATTER: indices are 16- or 32-bit");
    sim::require_sort_row("TSCATTER", dst);
    sim::require_sort_row("TSCATTER", src);
    sim::require_sort_row("TSCATTER", idx);
    const int64_t n = static_cast<int64_t>(TD::Rows) * TD::Cols;
    for (int r = 0; r < src.GetValidRow(); ++r) {
        for (int c = 0; c < src.GetValidCol(); ++c) {
            const int64_t i = static_cast<int64_t>(idx.at(r, c));
            if (i < 0 || i >= n) {
                sim::failf("pto sim: TSCATTER index %lld at (%d, %d) is outside the %dx%d destination tile",
                           static_cast<long long>(i), r, c, TD::Rows, TD::Cols);
            }
            dst.data()[i] = src.at(r, c);
        }
    }
}

}  // namespace pto
