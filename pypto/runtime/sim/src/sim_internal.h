// Internal data structures of the CPU simulation runtime (not part of any ABI).
#pragma once

#include <sched.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "dfx.h"
#include "intrinsic.h"
#include "pto_orchestration_api.h"
#include "sim_capi.h"
#include "sim_extras.h"

namespace ptosim {

using Clock = std::chrono::steady_clock;
using KernelFn = void (*)(int64_t*);
using OrchEntryFn = void (*)(const ChipTaskArgs&);
using OrchConfigFn = PTO2OrchestrationConfig (*)(const ChipTaskArgs&);
using BindFn = void (*)(PTO2Runtime*);
using SetCoreContextFn = void (*)(int64_t, int64_t, int64_t, int64_t);

constexpr int kMaxRings = 4;
constexpr int kMaxScopeDepth = 64;

enum class CoreKind : uint8_t { AIC = 0, AIV = 1 };
enum class Shape : uint8_t { AIC = 0, AIV = 1, MIX = 2 };
enum class TaskState : uint8_t { PENDING, READY, RUNNING, COMPLETED };

// Thrown to unwind orchestration code once the run has already failed.
struct RunAborted : std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct KernelInfo {
    int32_t func_id = -1;
    std::string name;
    CoreKind core = CoreKind::AIV;
    KernelFn fn = nullptr;
    SetCoreContextFn set_ctx = nullptr;  // the tile-ISA layer's per-thread core identity, if exported
};

struct Program {
    std::string orch_path;
    OrchEntryFn entry = nullptr;
    OrchConfigFn config = nullptr;
    BindFn bind = nullptr;
    std::unordered_map<int32_t, KernelInfo> kernels;
};

struct Task {
    uint32_t index = 0;
    PTO2TaskId id{};
    int32_t kernel[3] = {INVALID_KERNEL_ID, INVALID_KERNEL_ID, INVALID_KERNEL_ID};  // aic, aiv0, aiv1
    Shape shape = Shape::AIV;
    bool dummy = false;
    int ring = 0;
    TaskState state = TaskState::PENDING;
    std::vector<ChipTensor> tensors;
    std::vector<uint64_t> scalars;
    std::vector<ChipTensor> created;  // runtime-allocated outputs, in argument order
    std::vector<uint32_t> fanin;      // producers this task waited for
    std::vector<uint32_t> fanout;     // consumers waiting for this task
    int32_t fanin_pending = 0;
    int32_t refs = 0;  // pending consumers + the enclosing scope
    bool retired = false;
    int16_t block_num = 1;
    int16_t blocks_dispatched = 0;
    int16_t blocks_done = 0;
    int16_t units_per_block = 1;
    std::vector<int16_t> units_left;  // per block
    bool sync_start = false;
    bool has_predicate = false;
    CoreTaskPredicate predicate;
    ChipTensor predicate_tensor{};
    std::vector<uint8_t> kinds;  // TensorArgType per tensor argument (recorded only with DFX on)
    bool manual = false;         // submitted inside a MANUAL scope (DFX only)
    uint32_t dump_mask = 0;      // slots marked by CoreTaskArgs::dump (DFX only)
    bool comm = false;           // a built-in comm task (comm.cpp), run by the worker's comm thread
    CommTaskDesc cdesc{};
};

struct Run;

// The comm context of a rank of a distributed run (pto_sim_worker_set_comm); rank < 0: none.
struct CommContext {
    int32_t rank = -1;
    int32_t nranks = 0;
    uint64_t arena_base = 0;
    uint64_t region_bytes = 0;
    int64_t wait_timeout_ms = 30000;
    PtoSimCommStatus* status = nullptr;
    bool active() const { return rank >= 0; }
};

struct Job {
    Run* run = nullptr;
    uint32_t task = 0;
    Task* task_ptr = nullptr;  // stable (tasks are heap objects); read by the core without Worker::mu
    int16_t block = 0;
    int slot = 0;  // 0 aic, 1 aiv0, 2 aiv1
    const KernelInfo* kernel = nullptr;
    int64_t dispatch_ns = 0;  // DFX: when the scheduler placed it (ns since the run started)
};

struct Core {
    int id = 0;
    CoreKind kind = CoreKind::AIV;
    int cluster = 0;
    int subblock = 0;
    bool busy = false;
    std::atomic<bool> has_job{false};  // written under Worker::mu; read without it while spinning
    std::atomic<bool> spinning{false};  // polling for its next job (one CPU, counted once with busy)
    Clock::time_point spin_until{};    // after a job: poll for the next one until then, then sleep
    Job job;
    std::condition_variable cv;
    std::thread thread;
    LocalContext lctx{};
    GlobalContext gctx{};
    int64_t args[64] = {};
};

enum class Overlap { NONE, COVERED, OTHER };

struct TensorMapEntry {
    uint32_t producer;
    ChipTensor view;
};

class TensorMap {
public:
    // Producers (task indices) whose registered region may overlap t.
    void lookup(const ChipTensor& t, const std::vector<std::unique_ptr<Task>>& tasks, std::vector<uint32_t>& out);
    void insert(const ChipTensor& t, uint32_t producer);
    void remove_covered(const ChipTensor& t);
    void clear() { buckets_.clear(); }
    size_t size() const {
        size_t n = 0;
        for (auto& b : buckets_) n += b.second.size();
        return n;
    }
    // DFX: every registered producer overlapping t, finished ones included, with the overlap kind.
    void lookup_all(const ChipTensor& t, std::vector<std::pair<const TensorMapEntry*, Overlap>>& out) const;

private:
    std::unordered_map<uint64_t, std::vector<TensorMapEntry>> buckets_;
};

Overlap overlap(const ChipTensor& newer, const ChipTensor& older);

struct Scope {
    PTO2ScopeMode mode;
    std::vector<uint32_t> tasks;
};

struct Worker;

struct SimRuntime : PTO2Runtime {
    Worker* worker = nullptr;
    Run* run = nullptr;
};

struct Run {
    Program* prog = nullptr;
    PtoSimRunConfig cfg{};
    bool host_build_graph = false;
    bool arch_a5 = false;  // a5sim (platform rules of comm tasks)
    bool hold_dispatch = false;
    std::vector<std::unique_ptr<Task>> tasks;
    std::deque<uint32_t> ready[3];
    std::deque<uint32_t> comm_ready;  // comm tasks whose inputs are ready, for the comm thread
    int comm_inflight = 0;            // comm tasks the comm thread has taken and not finished
    uint64_t completed = 0;
    int running_units = 0;
    uint64_t live[kMaxRings] = {};
    TensorMap tmap;
    std::vector<Scope> scopes;
    std::vector<void*> allocations;
    bool failed = false;
    int err_code = 0;
    std::string err;
    Clock::time_point last_progress;
    std::condition_variable cv;
    std::atomic<uint64_t> events{0};  // bumped with every cv notification (for waiters that spin)
    SimRuntime rt;
    std::vector<std::string> log;
    std::unique_ptr<Dfx> dfx;  // null unless PtoSimRunConfig::dfx asked for records
    CommContext comm;          // the worker's comm context when the run started

    ~Run();
    Task& task(uint32_t i) { return *tasks[i]; }
    void signal() {  // Worker::mu held
        events.fetch_add(1, std::memory_order_release);
        cv.notify_all();
    }
    void fail(int code, const std::string& msg) {  // Worker::mu held; the first failure wins
        if (!failed) {
            failed = true;
            err_code = code;
            err = msg;
        }
        signal();
    }
};

struct Worker {
    std::mutex mu;
    std::vector<std::unique_ptr<Core>> cores;  // 0..C-1 AIC, then AIV pairs
    int clusters = 8;
    std::atomic<bool> shutdown{false};
    std::atomic<int> spinners{0};  // threads other than core threads polling instead of sleeping (spin_wait)
    int cpus = 1;                  // CPUs this process may run on
    std::string broken;  // non-empty: a kernel never returned; runs are refused until it does
    std::vector<std::unique_ptr<Run>> zombies;
    Run* run = nullptr;
    std::string dfx_json, dfx_bin;  // DFX records of the last run (empty when it had none)
    CommContext comm;               // copied into each run when it starts
    std::condition_variable comm_cv;  // wakes the comm thread (ready comm tasks, shutdown)
    std::thread comm_thread;          // started with the first comm context (the extras' comm_loop)

    explicit Worker(int num_clusters);
    ~Worker();
    void core_loop(Core& core);
    void start_comm_thread();  // once, with Worker::mu held; needs the extras
    int idle_running_units() const;
    int cpus_in_use() const;  // cores busy or polling (a core given a job while polling counts once) + spinners
};

// Spin-before-sleep: waking an idle CPU costs tens of microseconds, more than a small kernel runs, so a
// thread about to block first polls ready() (lock released) for up to `budget`, if a CPU is free for it
// (Worker::cpus_in_use() < cpus). Returns ready(), evaluated with the lock held again.
constexpr auto kCoreSpin = std::chrono::microseconds(200);  // a core thread after finishing a job
constexpr auto kWaitSpin = std::chrono::microseconds(200);  // the caller waiting for a run to finish

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
}

// Locks Worker::mu, polling briefly first: holders keep it for microseconds, a futex sleep costs more.
inline void lock_spinning(std::unique_lock<std::mutex>& lk) {
    for (int i = 0; i < 2048; ++i) {
        if (lk.try_lock()) return;
        cpu_relax();
    }
    lk.lock();
}

// Polls ready() with the lock released; true (lock NOT held) once it holds, false (lock held) when the
// budget ran out or no CPU is free for polling.
// `self`: the core thread that polls (its spinning flag is set instead of counting a spinner).
template <typename Ready>
bool spin_unlocked(Worker& w, std::unique_lock<std::mutex>& lk, Clock::duration budget, Ready ready,
                   Core* self = nullptr) {
    if (budget <= Clock::duration::zero() || w.cpus_in_use() + 1 > w.cpus) return false;
    if (self) {
        self->spinning.store(true);
    } else {
        w.spinners.fetch_add(1);
    }
    lk.unlock();
    const auto end = Clock::now() + budget;
    bool hit = false;
    for (unsigned i = 1; !(hit = ready()); ++i) {
        cpu_relax();
        if ((i & 15) == 0) {
            if (Clock::now() >= end) break;
            sched_yield();  // a thread woken onto this CPU (often the one we wait for) runs first
        }
    }
    if (self) {
        self->spinning.store(false);
    } else {
        w.spinners.fetch_sub(1);
    }
    if (!hit) lock_spinning(lk);
    return hit;
}

// spin_unlocked, then ready() evaluated with the lock held again.
template <typename Ready>
bool spin_wait(Worker& w, std::unique_lock<std::mutex>& lk, Clock::duration budget, Ready ready) {
    if (spin_unlocked(w, lk, budget, ready)) lock_spinning(lk);
    return ready();
}

// scheduler.cpp (all with Worker::mu held)
void make_ready(Worker& w, Run& r, uint32_t t);
void try_dispatch(Worker& w, Run& r);
void complete_task(Worker& w, Run& r, uint32_t t);
void maybe_retire(Run& r, Task& t);
std::string describe_pending(Worker& w, Run& r, size_t limit);
std::string task_label(Run& r, const Task& t);

// orch_ops.cpp
const PTO2RuntimeOps* runtime_ops();

// comm tasks (the checks and the comm thread are in the extras, sim_extras.h)
inline bool comm_idle(const Run& r) { return r.comm_inflight == 0 && r.comm_ready.empty(); }
inline const char* comm_kind_name(CommKind k) {
    switch (k) {
        case CommKind::NOTIFY: return "NOTIFY";
        case CommKind::WAIT: return "WAIT";
        case CommKind::COPY: return "COPY";
        case CommKind::BARRIER: return "BARRIER";
    }
    return "?";
}

}  // namespace ptosim
