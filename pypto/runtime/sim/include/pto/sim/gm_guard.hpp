// GM bounds guard: the tensors a kernel invocation may touch, and the one range check per tile
// transfer (TLOAD/TSTORE) against them.
//
// A kernel wrapper registers its task's tensors for the duration of one call (GmScope); every
// GlobalTensor transfer then checks that the span of GM elements it reads or writes lies inside one
// of them. Out-of-bounds windows end in pto_sim_fail (a SimError the runtime reports as a kernel
// fault naming task, kernel and core), never in a stray read or heap corruption. With no scope
// registered (stand-alone ISA tests), transfers are not checked.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

#include "pto/sim/error.hpp"

namespace pto {
namespace sim {

struct GmExtent {
    const void* base;  // first byte of the tensor's view
    uint64_t bytes;    // one past the last byte any element of the view occupies
    const char* name;  // user-visible tensor name (may be empty)
};

struct GmTable {
    const GmExtent* items = nullptr;
    int count = 0;
};

__attribute__((visibility("hidden"))) inline GmTable& gm_table() {
    static thread_local GmTable table;
    return table;
}

// Registers `n` tensor extents for the lifetime of the scope (restores the previous table on exit,
// also when a fault unwinds the kernel).
class GmScope {
   public:
    GmScope(const GmExtent* items, int n) : saved_(gm_table()) { gm_table() = GmTable{items, n}; }
    ~GmScope() { gm_table() = saved_; }
    GmScope(const GmScope&) = delete;
    GmScope& operator=(const GmScope&) = delete;

   private:
    GmTable saved_;
};

inline std::string gm_label(const GmExtent& e, int index) {
    char buf[96];
    if (e.name != nullptr && e.name[0] != '\0') {
        std::snprintf(buf, sizeof buf, "'%s' (argument %d)", e.name, index);
    } else {
        std::snprintf(buf, sizeof buf, "argument %d", index);
    }
    return buf;
}

// The tensor the window most plausibly belongs to: the one containing its first byte, else the one
// whose view starts closest below it.
inline int gm_owner(const GmTable& t, uintptr_t lo) {
    int best = -1;
    uintptr_t best_base = 0;
    for (int i = 0; i < t.count; ++i) {
        const uintptr_t b = reinterpret_cast<uintptr_t>(t.items[i].base);
        if (lo >= b && lo < b + t.items[i].bytes) return i;
        if (b <= lo && (best < 0 || b > best_base)) {
            best = i;
            best_base = b;
        }
    }
    return best;
}

// One range check: GM elements [lo, hi] (inclusive, in units of `esize` bytes from `ptr`) must lie in
// one registered tensor. `what` describes the transfer (op, tile shape) for the message.
[[gnu::cold, gnu::noinline]] inline void gm_out_of_bounds(const char* op, const void* ptr, int64_t lo, int64_t hi,
                                                          size_t esize, int vr, int vc) {
    const GmTable& t = gm_table();
    const uintptr_t first = reinterpret_cast<uintptr_t>(ptr) + static_cast<uintptr_t>(lo * static_cast<int64_t>(esize));
    const int owner = gm_owner(t, first);
    char buf[640];
    if (owner < 0) {
        std::snprintf(buf, sizeof buf,
                      "pto sim: %s of a %dx%d window: GM out of bounds: the window starts below every tensor of "
                      "this task (%d tensors)",
                      op, vr, vc, t.count);
        fail(buf);
    }
    const GmExtent& e = t.items[owner];
    const uintptr_t base = reinterpret_cast<uintptr_t>(e.base);
    const int64_t start = static_cast<int64_t>(first - base) / static_cast<int64_t>(esize);
    const int64_t end = start + (hi - lo);  // inclusive, elements from the tensor's first element
    const int64_t numel = static_cast<int64_t>(e.bytes / esize);
    std::snprintf(buf, sizeof buf,
                  "pto sim: %s of a %dx%d window: GM out of bounds: tensor %s has %lld elements "
                  "(%llu bytes), the window touches elements [%lld, %lld] of it",
                  op, vr, vc, gm_label(e, owner).c_str(), static_cast<long long>(numel),
                  static_cast<unsigned long long>(e.bytes), static_cast<long long>(start), static_cast<long long>(end));
    fail(buf);
}

inline void check_gm_span(const char* op, const void* ptr, int64_t lo, int64_t hi, size_t esize, int vr, int vc) {
    const GmTable& t = gm_table();
    if (t.count == 0) return;
    const uintptr_t p = reinterpret_cast<uintptr_t>(ptr);
    const uintptr_t first = p + static_cast<uintptr_t>(lo * static_cast<int64_t>(esize));
    const uintptr_t last = p + static_cast<uintptr_t>((hi + 1) * static_cast<int64_t>(esize));  // one past
    if (first < last) {
        for (int i = 0; i < t.count; ++i) {
            const uintptr_t b = reinterpret_cast<uintptr_t>(t.items[i].base);
            if (first >= b && last <= b + t.items[i].bytes) return;
        }
    }
    gm_out_of_bounds(op, ptr, lo, hi, esize, vr, vc);
}

}  // namespace sim
}  // namespace pto
