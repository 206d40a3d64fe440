// Pipes, events, sync primitives (no-ops or fences: each core runs its kernel in program order)
// and the per-thread core identity read by get_block_idx() and friends.
#pragma once

#include <atomic>
#include <cstdint>

enum pipe_t : int {
    PIPE_S = 0,
    PIPE_V = 1,
    PIPE_MTE1 = 2,
    PIPE_MTE2 = 3,
    PIPE_MTE3 = 4,
    PIPE_M = 5,
    PIPE_ALL = 6,
    PIPE_FIX = 7,
    PIPE_V2 = 8,
    PIPE_MTE4 = 9,
    PIPE_MTE5 = 10,
};

enum event_t : int {
    EVENT_ID0 = 0, EVENT_ID1, EVENT_ID2, EVENT_ID3, EVENT_ID4, EVENT_ID5, EVENT_ID6, EVENT_ID7,
    EVENT_ID8, EVENT_ID9, EVENT_ID10, EVENT_ID11, EVENT_ID12, EVENT_ID13, EVENT_ID14, EVENT_ID15,
};

inline void set_flag(pipe_t, pipe_t, event_t) {}
inline void set_flag(pipe_t, pipe_t, int) {}
inline void wait_flag(pipe_t, pipe_t, event_t) {}
inline void wait_flag(pipe_t, pipe_t, int) {}
inline void pipe_barrier(pipe_t) { std::atomic_thread_fence(std::memory_order_seq_cst); }
inline void set_mask_norm() {}
inline void set_mask_count() {}
inline void set_vector_mask(uint64_t, uint64_t) {}
inline void set_atomic_none() {}
inline void set_atomic_add() {}
inline void set_atomic_f32() {}
inline void set_atomic_f16() {}
inline void dsb(int = 0) { std::atomic_thread_fence(std::memory_order_seq_cst); }
inline void mem_bar(int = 0) { std::atomic_thread_fence(std::memory_order_seq_cst); }

namespace pto {
namespace sim {

// Identity of the simulated core running on this thread, per kernel .so (set per dispatch through
// pto_sim_set_core_context or pto::sim::set_core_context).
struct CoreContext {
    int64_t block_idx = 0;
    int64_t block_num = 1;
    int64_t subblock_idx = 0;
    int64_t subblock_num = 1;
};

__attribute__((visibility("hidden"))) inline CoreContext& core_context() {
    static thread_local CoreContext ctx;
    return ctx;
}

inline void set_core_context(int64_t block_idx, int64_t block_num, int64_t subblock_idx = 0,
                             int64_t subblock_num = 1) {
    core_context() = CoreContext{block_idx, block_num, subblock_idx, subblock_num};
}

}  // namespace sim

template <class... Events>
inline void TSYNC(Events...) {}

}  // namespace pto

inline int64_t get_block_idx() { return pto::sim::core_context().block_idx; }
inline int64_t get_block_num() { return pto::sim::core_context().block_num; }
inline int64_t get_subblockid() { return pto::sim::core_context().subblock_idx; }
inline int64_t get_subblockdim() { return pto::sim::core_context().subblock_num; }

// Exported so a runtime can set the core identity through dlsym on the core thread.
extern "C" __attribute__((weak, used, visibility("default"))) void pto_sim_set_core_context(
    int64_t block_idx, int64_t block_num, int64_t subblock_idx, int64_t subblock_num) {
    pto::sim::set_core_context(block_idx, block_num, subblock_idx, subblock_num);
}
