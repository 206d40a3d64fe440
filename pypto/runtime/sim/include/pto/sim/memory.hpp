// Per-core on-chip buffers: one zero-initialised byte array per region, simulated core thread and
// kernel .so.
#pragma once

#include <cstdlib>
#include <cstring>

#include "pto/sim/config.hpp"
#include "pto/sim/error.hpp"

namespace pto {
namespace sim {

enum class Region : int { UB = 0, L1, L0A, L0B, L0C, BIAS, L0A_MX, L0B_MX, kCount };

constexpr const char* region_name(Region r) {
    constexpr const char* kNames[] = {"UB", "L1", "L0A", "L0B", "L0C", "BIAS", "L0A_MX", "L0B_MX"};
    return kNames[static_cast<int>(r)];
}

constexpr std::size_t region_capacity(Region r) {
    const std::size_t kCaps[] = {
        static_cast<std::size_t>(PTO_SIM_UB_BYTES),   static_cast<std::size_t>(PTO_SIM_L1_BYTES),
        static_cast<std::size_t>(PTO_SIM_L0A_BYTES),  static_cast<std::size_t>(PTO_SIM_L0B_BYTES),
        static_cast<std::size_t>(PTO_SIM_L0C_BYTES),  static_cast<std::size_t>(PTO_SIM_BIAS_BYTES),
        static_cast<std::size_t>(PTO_SIM_SCALE_BYTES), static_cast<std::size_t>(PTO_SIM_SCALE_BYTES),
    };
    return kCaps[static_cast<int>(r)];
}

// Lazily allocated on first use by each thread; freed when the thread exits.
class CoreMemory {
   public:
    CoreMemory() = default;
    CoreMemory(const CoreMemory&) = delete;
    CoreMemory& operator=(const CoreMemory&) = delete;
    ~CoreMemory() {
        for (unsigned char* p : base_) std::free(p);
    }

    unsigned char* base(Region r) {
        unsigned char*& p = base_[static_cast<int>(r)];
        if (p == nullptr) {
            std::size_t cap = region_capacity(r);
            // calloc: large zeroed blocks come from fresh pages, touched only where tiles are used.
            p = static_cast<unsigned char*>(std::calloc(cap == 0 ? 1 : cap, 1));
            if (p == nullptr) failf("pto sim: cannot allocate %zu bytes for region %s", cap, region_name(r));
        }
        return p;
    }

    // Zero every allocated region (e.g. at the start of a run when threads are reused).
    void reset() {
        for (int i = 0; i < static_cast<int>(Region::kCount); ++i) {
            if (base_[i] != nullptr) std::memset(base_[i], 0, region_capacity(static_cast<Region>(i)));
        }
    }

    // Region containing [p, p + bytes), or kCount when p is in no allocated region.
    Region find(const void* p) const {
        auto* c = static_cast<const unsigned char*>(p);
        for (int i = 0; i < static_cast<int>(Region::kCount); ++i) {
            const unsigned char* b = base_[i];
            if (b != nullptr && c >= b && c < b + region_capacity(static_cast<Region>(i))) {
                return static_cast<Region>(i);
            }
        }
        return Region::kCount;
    }

   private:
    unsigned char* base_[static_cast<int>(Region::kCount)] = {};
};

// Hidden: each kernel .so owns its per-thread buffers (no GNU-unique sharing across .so files
// built from different header versions or platforms).
__attribute__((visibility("hidden"))) inline CoreMemory& core_memory() {
    static thread_local CoreMemory mem;
    return mem;
}

inline void reset_core_memory() { core_memory().reset(); }

}  // namespace sim
}  // namespace pto
