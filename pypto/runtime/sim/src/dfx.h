// Run-time diagnostics (DFX) of the simulation runtime: what the scheduler, the orchestrator ops and the
// tensor map record while PtoSimRunConfig::dfx asks for it. The recording code is in the extras library
// (sim_extras.h); every hook is behind `if (r.dfx)`, so a run with the flags off pays one branch per
// task / unit. Python (pypto/runtime/dfx/) turns the records into
// the on-disk formats; this layer only measures (host steady clock, ns since the run started).
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "tensor.h"

namespace ptosim {

struct Run;
struct Task;
struct Core;
struct Job;

// Bits of PtoSimRunConfig::dfx (mirrored in pypto/runtime/native.py).
constexpr int32_t kDfxSwimlaneMask = 0x7;  // chip swimlane level 0-4
constexpr int32_t kDfxDeps = 1 << 3;       // dependency edges (explicit / creator / tensormap)
constexpr int32_t kDfxArgs = 1 << 4;       // argument dump, every tensor argument (level 2)
constexpr int32_t kDfxTasks = 1 << 5;      // per-unit core placement even at swimlane level 0 (PMU rows)
constexpr int32_t kDfxScopes = 1 << 6;     // scope statistics
constexpr int32_t kDfxArgsTagged = 1 << 7; // argument dump, only slots marked by CoreTaskArgs::dump (level 1)

enum class EdgeSource : uint8_t { EXPLICIT = 0, CREATOR = 1, TENSORMAP = 2 };

struct DfxUnit {
    int core;
    uint32_t task;
    int block;
    int slot;
    uint64_t seq;  // per-core sequence number (reg_task_id)
    int64_t dispatch, start, end, finish;
};

struct DfxOrch {
    const char* kind;  // "submit_task" | "alloc_tensors" | "submit_dummy"
    uint32_t task;
    int64_t start, end;
};

struct DfxEdge {
    uint32_t pred, succ;
    int32_t arg;  // consumer argument index, -1 for explicit dependencies
    EdgeSource source;
    uint8_t overlap;  // tensormap: 1 covered, 2 other
    ChipTensor producer;  // tensormap: the producer's registered view
};

struct DfxScope {
    std::string site;
    bool begin;
    int depth;
    int ring;
    std::array<uint64_t, 4> allocated, released;
    uint64_t heap;
    uint64_t tensormap;
};

struct DfxDump {
    uint32_t task;
    int arg;
    bool after;  // false: before_dispatch, true: after_completion
    uint64_t offset, size;
};

struct Dfx {
    int level = 0;
    bool deps = false, args = false, args_tagged = false, units = false, scopes = false;
    std::chrono::steady_clock::time_point t0;
    std::vector<DfxUnit> unit_log;
    std::vector<DfxOrch> orch;
    std::vector<DfxEdge> edges;
    std::vector<DfxScope> scope_log;
    std::vector<DfxDump> dumps;
    std::string bin;
    std::vector<uint64_t> core_seq;
    std::string site;  // set by scope_set_site, consumed by the next scope_begin
    std::array<uint64_t, 4> allocated{}, released{};
    uint64_t heap = 0;

    Dfx(int32_t flags, size_t num_cores);
    int64_t ns(std::chrono::steady_clock::time_point t) const {
        return std::chrono::duration_cast<std::chrono::nanoseconds>(t - t0).count();
    }
};

// The hooks that fill it are in the extras library (sim_extras.h), called only when Run::dfx is set.

}  // namespace ptosim
