// extern "C" API of the simulation runtime library, called from Python through ctypes.
//
// Every call that can fail returns a PtoSimStatus and writes a message into (err, errlen).
#pragma once

#include <cstddef>
#include <cstdint>

#include "tensor.h"

#define PTO_SIM_CAPI_VERSION 4

enum PtoSimStatus : int32_t {
    PTO_SIM_OK = 0,
    PTO_SIM_BAD_ARGUMENT = 1,  // bad call: unknown kernel, arg count, config
    PTO_SIM_ORCH_ERROR = 2,    // orchestration code threw or reported a fatal error
    PTO_SIM_KERNEL_FAULT = 3,  // a kernel threw (e.g. pto::SimError)
    PTO_SIM_DEADLOCK = 4,      // no progress within timeout_ms, or flow-control deadlock
    PTO_SIM_WORKER_BROKEN = 5, // a kernel from an earlier run still has not returned
    PTO_SIM_LOAD_ERROR = 6,    // dlopen/dlsym failed, or an orchestration built for another ABI
    PTO_SIM_COMM_TIMEOUT = 7,  // a comm WAIT/BARRIER did not see its value within its timeout
};

enum PtoSimCoreType : int32_t { PTO_SIM_CORE_AIC = 0, PTO_SIM_CORE_AIV = 1 };

struct PtoSimRunConfig {
    int64_t timeout_ms;         // no-progress limit before a deadlock is reported (<= 0: 30000)
    uint64_t ring_task_window;  // live tasks per ring (0: 16384); must be a power of 2 >= 4
    int32_t log_level;          // 0 error, 1 warn, 2 info, 3 debug
    int32_t dfx;                // diagnostics to record (bits in src/dfx.h; 0: none, no cost)
};

struct PtoSimRunStats {
    uint64_t num_tasks;
    uint64_t orch_ns;    // time spent in aicpu_orchestration_entry
    uint64_t device_ns;  // from the start of orchestration until the last task completed
};

// What a rank is waiting for (written by the rank's comm thread, read by anyone mapping it).
struct PtoSimCommStatus {
    int32_t waiting;      // 1 while a WAIT/BARRIER polls, else 0
    int32_t cmp;          // CommWaitCmp of the wait (BARRIER: GE)
    int32_t expected;
    int32_t last_seen;
    uint64_t cell_offset;  // byte offset of the cell inside the rank's region
    uint32_t task;         // task index in the rank's run
    int32_t kind;          // CommKind
};

// The only symbols a runtime library exports: it is built with -fvisibility=hidden, so its internals
// never bind to another runtime library loaded into the process (ctypes loads them RTLD_GLOBAL).
#pragma GCC visibility push(default)
extern "C" {
int32_t pto_sim_capi_version(void);
const char* pto_sim_identity(void);  // "<platform>/<runtime>"
uint32_t pto_sim_chip_tensor_size(void);

void* pto_sim_worker_create(int32_t num_clusters, char* err, size_t errlen);
void pto_sim_worker_destroy(void* worker);

// The comm context of the runs that follow on this worker (a rank of a distributed run); rank < 0 clears it.
// Window tensors of comm tasks must lie in [arena_base, arena_base + nranks * region_bytes). status_addr
// (0: none) is a PtoSimCommStatus in shared memory that the runtime keeps up to date while a comm task
// waits, so the parent process can say what a rank that timed out was waiting for.
int32_t pto_sim_worker_set_comm(void* worker, int32_t rank, int32_t nranks, uint64_t arena_base,
                                uint64_t region_bytes, int64_t wait_timeout_ms, uint64_t status_addr, char* err,
                                size_t errlen);

// Load the extras library (comm tasks, DFX recording; src/sim_extras.h) into this runtime library: needed
// before a comm context or a run with DFX flags, which fail with PTO_SIM_BAD_ARGUMENT without it. Idempotent.
int32_t pto_sim_load_extras(const char* extras_so, char* err, size_t errlen);

void* pto_sim_program_load(const char* orch_so, char* err, size_t errlen);
int32_t pto_sim_program_add_kernel(void* program, int32_t func_id, const char* name, int32_t core_type,
                                   const char* kernel_so, char* err, size_t errlen);
void pto_sim_program_free(void* program);

int32_t pto_sim_run(void* worker, void* program, const ChipTensor* tensors, uint32_t num_tensors,
                    const uint64_t* scalars, uint32_t num_scalars, const PtoSimRunConfig* cfg,
                    PtoSimRunStats* stats, char* err, size_t errlen);

// DFX records of the worker's last run (JSON text and argument-dump bytes); valid until its next run.
void pto_sim_dfx_records(void* worker, const char** json, uint64_t* json_len, const char** bin, uint64_t* bin_len);

void* pto_sim_malloc(uint64_t nbytes);
void pto_sim_free(void* ptr);

// Identity of the core thread calling (for the tile-ISA layer): -1 outside a core thread.
int32_t pto_sim_get_block_idx(void);
int32_t pto_sim_get_block_num(void);
int32_t pto_sim_get_subblock_id(void);
int32_t pto_sim_get_cluster_id(void);
int32_t pto_sim_get_core_id(void);
}
#pragma GCC visibility pop
