// Per-dispatch context a kernel reads from its argument array (kernel ABI slots 48 and 49).
#pragma once

#include <cstdint>

#ifndef __gm__
#define __gm__
#endif

constexpr int PTO_ARG_LOCAL_CONTEXT_SLOT = 48;
constexpr int PTO_ARG_GLOBAL_CONTEXT_SLOT = 49;
constexpr int PTO_KERNEL_ARG_SLOTS = 50;
constexpr int PTO_DMA_WORKSPACE_KINDS = 4;

// Per dispatched block.
struct LocalContext {
    int32_t block_idx;
    int32_t block_num;
};

// Per core.
struct GlobalContext {
    int32_t sub_block_id;
    int32_t cluster_id;
    uint64_t dma_workspace[PTO_DMA_WORKSPACE_KINDS];
};

inline int32_t get_block_idx(__gm__ int64_t* args) {
    return reinterpret_cast<const LocalContext*>(args[PTO_ARG_LOCAL_CONTEXT_SLOT])->block_idx;
}

inline int32_t get_block_num(__gm__ int64_t* args) {
    return reinterpret_cast<const LocalContext*>(args[PTO_ARG_LOCAL_CONTEXT_SLOT])->block_num;
}

inline int32_t get_sub_block_id(__gm__ int64_t* args) {
    return reinterpret_cast<const GlobalContext*>(args[PTO_ARG_GLOBAL_CONTEXT_SLOT])->sub_block_id;
}

inline int32_t get_cluster_id(__gm__ int64_t* args) {
    return reinterpret_cast<const GlobalContext*>(args[PTO_ARG_GLOBAL_CONTEXT_SLOT])->cluster_id;
}

inline uint64_t get_dma_workspace(__gm__ int64_t* args, int kind) {
    return reinterpret_cast<const GlobalContext*>(args[PTO_ARG_GLOBAL_CONTEXT_SLOT])->dma_workspace[kind];
}

// Data-cache maintenance (hand-written kernels call it after scalar GM writes). The simulator's cores
// share host memory, so there is nothing to flush or invalidate.
#ifndef SINGLE_CACHE_LINE
#define SINGLE_CACHE_LINE 0
#endif
#ifndef ENTIRE_DATA_CACHE
#define ENTIRE_DATA_CACHE 1
#endif
#ifndef CACHELINE_OUT
#define CACHELINE_OUT 0
#endif
template <typename... Args>
inline void dcci(Args...) {}
