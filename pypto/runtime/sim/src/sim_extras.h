// The runtime's extras: comm tasks (comm.cpp, comm_combine.cpp) and DFX recording (dfx.cpp), built as a
// library of their own (libpto_sim_extras_*.so, one for all four runtime libraries) that a plain
// single-chip run never builds or loads. Python has a runtime library dlopen it
// (pto_sim_load_extras) before the first run with DFX flags or the first comm context; the core then
// reaches it only through this table. Like the core, the extras library is built with hidden
// visibility; it imports nothing from the core (what it needs is passed in CoreHooks), so it binds to
// no runtime library of the process.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "dfx.h"
#include "pto_task_args.h"

#define PTO_SIM_EXTRAS_VERSION 1

namespace ptosim {

struct Worker;

// Core functions the comm thread calls (Worker::mu held): those of the runtime library that started it.
struct CoreHooks {
    void (*complete_task)(Worker& w, Run& r, uint32_t t);
    void (*try_dispatch)(Worker& w, Run& r);
};

struct Extras {
    int32_t version;  // PTO_SIM_EXTRAS_VERSION
    // DFX hooks (Worker::mu held unless noted)
    Dfx* (*dfx_new)(int32_t flags, size_t num_cores);
    void (*dfx_task_args)(Run& r, Task& t, const uint8_t* kinds, uint32_t n, bool manual, uint32_t dump_mask);
    void (*dfx_edge)(Run& r, uint32_t pred, uint32_t succ, int32_t arg, EdgeSource src, uint8_t overlap,
                     const ChipTensor* producer);
    void (*dfx_dump)(Run& r, const Task& t, bool after);
    void (*dfx_unit)(Run& r, const Core& c, const Job& j, int64_t start, int64_t end);
    void (*dfx_scope)(Run& r, bool begin, uint64_t tensormap_entries);
    std::string (*dfx_json)(Run& r);
    // comm tasks (the run has a comm context)
    void (*check_comm_task)(const Run& r, const CommTaskDesc& d, const CoreTaskArgs& args);  // throws on bad input
    std::string (*comm_label)(const Run& r, const Task& t);
    void (*comm_loop)(Worker& w, const CoreHooks& hooks);  // the worker's comm thread, until shutdown
};

// Core side (capi.cpp): the extras this runtime library loaded, or null.
const Extras* loaded_extras() __attribute__((visibility("hidden")));
// Only where an extras call is known to be possible: a DFX record exists or the run has a comm context.
inline const Extras& extras() { return *loaded_extras(); }

// Extras side: the implementations behind the table (comm.cpp, comm_combine.cpp, dfx.cpp).
Dfx* dfx_new(int32_t flags, size_t num_cores);
void dfx_task_args(Run& r, Task& t, const uint8_t* kinds, uint32_t n, bool manual, uint32_t dump_mask);
void dfx_edge(Run& r, uint32_t pred, uint32_t succ, int32_t arg, EdgeSource src, uint8_t overlap,
              const ChipTensor* producer);
void dfx_dump(Run& r, const Task& t, bool after);
void dfx_unit(Run& r, const Core& c, const Job& j, int64_t start, int64_t end);
void dfx_scope(Run& r, bool begin, uint64_t tensormap_entries);
std::string dfx_json(Run& r);
void check_comm_task(const Run& r, const CommTaskDesc& d, const CoreTaskArgs& args);
std::string comm_label(const Run& r, const Task& t);
void comm_loop(Worker& w, const CoreHooks& hooks);
void comm_combine(DataType t, int32_t op, void* dst, const void* src);

}  // namespace ptosim

extern "C" {
// The extras' table if it was built for `version` (PTO_SIM_EXTRAS_VERSION), else null.
__attribute__((visibility("default"))) const ptosim::Extras* pto_sim_extras(int32_t version);
}
