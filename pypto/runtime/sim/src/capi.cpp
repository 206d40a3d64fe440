// extern "C" entry points: workers, programs (dlopen'ed orchestration + kernels) and runs.
#include <dlfcn.h>

#include <cstdlib>
#include <cstring>

#include "sim_internal.h"
#include "sim_variant.h"

namespace ptosim {
namespace {

std::atomic<const Extras*> g_extras{nullptr};  // internal: each runtime library of the process has its own

int32_t set_err(char* err, size_t errlen, int32_t code, const std::string& msg) {
    if (err && errlen) {
        std::strncpy(err, msg.c_str(), errlen - 1);
        err[errlen - 1] = '\0';
    }
    return code;
}

void* open_so(const char* path, std::string& msg) {
    void* h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) msg = std::string("dlopen failed: ") + dlerror();
    return h;
}

PtoSimRunConfig normalized(const PtoSimRunConfig* cfg) {
    PtoSimRunConfig c{};
    if (cfg) c = *cfg;
    if (c.timeout_ms <= 0) c.timeout_ms = 30000;
    if (c.ring_task_window == 0) c.ring_task_window = 16384;
    return c;
}

void close_open_scopes(Run& r) {
    PTO2Runtime* rt = &r.rt;
    while (true) {
        {
            std::lock_guard<std::mutex> lk(static_cast<SimRuntime*>(rt)->worker->mu);
            if (r.scopes.empty()) return;
        }
        rt->ops->scope_end(rt);
    }
}

void orchestrate(Program& p, Run& r, const ChipTaskArgs& args) {
    p.bind(&r.rt);
    try {
        if (r.dfx) r.dfx->site = "<runtime root scope>";
        r.rt.ops->scope_begin(&r.rt, PTO2ScopeMode::AUTO);
        p.entry(args);
        close_open_scopes(r);
    } catch (const RunAborted&) {
        close_open_scopes(r);
    } catch (const std::exception& e) {
        close_open_scopes(r);
        std::lock_guard<std::mutex> lk(r.rt.worker->mu);
        r.fail(PTO_SIM_ORCH_ERROR, std::string("orchestration '") + p.orch_path + "' failed: " + e.what());
    } catch (...) {
        close_open_scopes(r);
        std::lock_guard<std::mutex> lk(r.rt.worker->mu);
        r.fail(PTO_SIM_ORCH_ERROR, "orchestration '" + p.orch_path + "' threw a non-standard exception");
    }
    p.bind(nullptr);
}

// Waits until every task has completed, the run failed and drained, or nothing progresses.
void drain(Worker& w, Run& r, std::unique_lock<std::mutex>& lk) {
    const auto timeout = std::chrono::milliseconds(r.cfg.timeout_ms);
    for (;;) {
        if (r.running_units == 0 && r.comm_inflight == 0 && (r.failed || r.completed == r.tasks.size())) return;
        bool idle = r.running_units == 0 && comm_idle(r);
        for (auto& q : r.ready) idle = idle && q.empty();
        if (idle && !r.failed) {
            r.fail(PTO_SIM_DEADLOCK, "deadlock: " + std::to_string(r.tasks.size() - r.completed) +
                                         " task(s) can never run:" + describe_pending(w, r, 16));
            return;
        }
        const uint64_t seen = r.events.load();
        if (spin_wait(w, lk, kWaitSpin, [&] { return r.events.load(std::memory_order_acquire) != seen; })) continue;
        if (r.cv.wait_until(lk, r.last_progress + timeout) == std::cv_status::timeout &&
            Clock::now() >= r.last_progress + timeout) {
            std::string pending = describe_pending(w, r, 16);
            r.fail(PTO_SIM_DEADLOCK, "deadlock: no task finished for " + std::to_string(r.cfg.timeout_ms) +
                                         " ms; pending tasks:" + pending);
            if (r.running_units > 0) {
                w.broken = "a kernel from an earlier run never returned (" + r.err.substr(0, 400) + ")";
                return;
            }
        }
    }
}

int32_t check_worker_free(Worker& w, char* err, size_t errlen) {
    if (!w.broken.empty()) {
        if (w.idle_running_units() > 0)
            return set_err(err, errlen, PTO_SIM_WORKER_BROKEN,
                           "this worker cannot run: " + w.broken + ". Close it and create a new ChipWorker.");
        w.broken.clear();
    }
    if (w.run != nullptr) return set_err(err, errlen, PTO_SIM_BAD_ARGUMENT, "worker is already running a program");
    return PTO_SIM_OK;
}

}  // namespace

const Extras* loaded_extras() { return g_extras.load(std::memory_order_acquire); }

}  // namespace ptosim

using namespace ptosim;

extern "C" {

int32_t pto_sim_capi_version(void) { return PTO_SIM_CAPI_VERSION; }
uint32_t pto_sim_chip_tensor_size(void) { return sizeof(ChipTensor); }

void* pto_sim_worker_create(int32_t num_clusters, char* err, size_t errlen) {
    if (num_clusters < 1 || num_clusters > 64) {
        set_err(err, errlen, PTO_SIM_BAD_ARGUMENT, "num_clusters must be in [1, 64]");
        return nullptr;
    }
    try {
        return new Worker(num_clusters);
    } catch (const std::exception& e) {
        set_err(err, errlen, PTO_SIM_BAD_ARGUMENT, std::string("cannot start core threads: ") + e.what());
        return nullptr;
    }
}

void pto_sim_worker_destroy(void* worker) {
    auto* w = static_cast<Worker*>(worker);
    if (!w) return;
    {
        std::lock_guard<std::mutex> lk(w->mu);
        if (w->idle_running_units() > 0) {  // a kernel never returned: leak rather than free memory it uses
            w->shutdown = true;
            for (auto& c : w->cores) c->cv.notify_one();
            for (auto& c : w->cores) c->thread.detach();
            w->comm_cv.notify_all();
            if (w->comm_thread.joinable()) w->comm_thread.detach();
            return;
        }
    }
    delete w;
}

int32_t pto_sim_worker_set_comm(void* worker, int32_t rank, int32_t nranks, uint64_t arena_base,
                                uint64_t region_bytes, int64_t wait_timeout_ms, uint64_t status_addr, char* err,
                                size_t errlen) {
    auto& w = *static_cast<Worker*>(worker);
    CommContext c;
    if (rank >= 0 && !loaded_extras())
        return set_err(err, errlen, PTO_SIM_BAD_ARGUMENT,
                       "comm context: comm tasks need the runtime extras library, which this runtime library has not "
                       "loaded (pto_sim_load_extras; ChipWorker.set_comm_context loads it)");
    if (rank >= 0) {
        if (nranks < 1 || rank >= nranks)
            return set_err(err, errlen, PTO_SIM_BAD_ARGUMENT,
                           "comm context: rank " + std::to_string(rank) + " is not in [0, " + std::to_string(nranks) + ")");
        if (arena_base == 0 || region_bytes == 0)
            return set_err(err, errlen, PTO_SIM_BAD_ARGUMENT, "comm context: arena_base and region_bytes must be non-zero");
        c.rank = rank;
        c.nranks = nranks;
        c.arena_base = arena_base;
        c.region_bytes = region_bytes;
        c.wait_timeout_ms = wait_timeout_ms > 0 ? wait_timeout_ms : 30000;
        c.status = reinterpret_cast<PtoSimCommStatus*>(status_addr);
    }
    std::lock_guard<std::mutex> lk(w.mu);
    if (w.run != nullptr) return set_err(err, errlen, PTO_SIM_BAD_ARGUMENT, "comm context: the worker is running a program");
    try {
        if (c.active()) w.start_comm_thread();
    } catch (const std::exception& e) {
        return set_err(err, errlen, PTO_SIM_BAD_ARGUMENT, std::string("comm context: cannot start the comm thread: ") + e.what());
    }
    w.comm = c;
    return PTO_SIM_OK;
}

int32_t pto_sim_load_extras(const char* path, char* err, size_t errlen) {
    if (loaded_extras()) return PTO_SIM_OK;
    std::string msg;
    void* h = open_so(path, msg);
    if (!h) return set_err(err, errlen, PTO_SIM_LOAD_ERROR, "runtime extras: " + msg);
    using EntryFn = const Extras* (*)(int32_t);
    auto entry = reinterpret_cast<EntryFn>(dlsym(h, "pto_sim_extras"));
    const Extras* x = entry ? entry(PTO_SIM_EXTRAS_VERSION) : nullptr;
    if (!x) {
        dlclose(h);
        return set_err(err, errlen, PTO_SIM_LOAD_ERROR,
                       std::string(path) + " is not a runtime extras library of version " +
                           std::to_string(PTO_SIM_EXTRAS_VERSION) + " (rebuild the cache)");
    }
    g_extras.store(x, std::memory_order_release);  // never unloaded: threads may run its code until exit
    return PTO_SIM_OK;
}

void* pto_sim_program_load(const char* orch_so, char* err, size_t errlen) {
    std::string msg;
    void* h = open_so(orch_so, msg);
    if (!h) {
        set_err(err, errlen, PTO_SIM_LOAD_ERROR, msg);
        return nullptr;
    }
    using AbiFn = int (*)();
    auto abi = reinterpret_cast<AbiFn>(dlsym(h, "pto_sim_orch_abi_version"));
    const int got = abi ? abi() : 0;
    if (got != PTO_SIM_ORCH_ABI_VERSION) {
        dlclose(h);
        set_err(err, errlen, PTO_SIM_LOAD_ERROR,
                std::string(orch_so) + " was built against orchestration ABI " +
                    (abi ? std::to_string(got) : std::string("1 or older (no pto_sim_orch_abi_version)")) +
                    " but this runtime needs ABI " + std::to_string(PTO_SIM_ORCH_ABI_VERSION) +
                    " (the runtime ops table changed); rebuild it against the current pto_orchestration_api.h");
        return nullptr;
    }
    auto p = std::make_unique<Program>();
    p->orch_path = orch_so;
    p->entry = reinterpret_cast<OrchEntryFn>(dlsym(h, "aicpu_orchestration_entry"));
    p->config = reinterpret_cast<OrchConfigFn>(dlsym(h, "aicpu_orchestration_config"));
    p->bind = reinterpret_cast<BindFn>(dlsym(h, "framework_bind_runtime"));
    if (!p->entry || !p->bind) {
        set_err(err, errlen, PTO_SIM_LOAD_ERROR,
                std::string(orch_so) + " does not export aicpu_orchestration_entry and framework_bind_runtime "
                                       "(does it include pto_orchestration_api.h and use extern \"C\"?)");
        return nullptr;
    }
    return p.release();
}

int32_t pto_sim_program_add_kernel(void* program, int32_t func_id, const char* name, int32_t core_type,
                                   const char* kernel_so, char* err, size_t errlen) {
    auto* p = static_cast<Program*>(program);
    if (p->kernels.count(func_id))
        return set_err(err, errlen, PTO_SIM_BAD_ARGUMENT, "duplicate func_id " + std::to_string(func_id));
    std::string msg;
    void* h = open_so(kernel_so, msg);
    if (!h) return set_err(err, errlen, PTO_SIM_LOAD_ERROR, msg);
    auto fn = reinterpret_cast<KernelFn>(dlsym(h, "kernel_entry"));
    if (!fn)
        return set_err(err, errlen, PTO_SIM_LOAD_ERROR,
                       std::string(kernel_so) + " (kernel '" + name + "') does not export kernel_entry");
    KernelInfo k;
    k.func_id = func_id;
    k.name = name;
    k.core = core_type == PTO_SIM_CORE_AIC ? CoreKind::AIC : CoreKind::AIV;
    k.fn = fn;
    k.set_ctx = reinterpret_cast<SetCoreContextFn>(dlsym(h, "pto_sim_set_core_context"));
    p->kernels[func_id] = k;
    return PTO_SIM_OK;
}

void pto_sim_program_free(void* program) { delete static_cast<Program*>(program); }

int32_t pto_sim_run(void* worker, void* program, const ChipTensor* tensors, uint32_t num_tensors,
                    const uint64_t* scalars, uint32_t num_scalars, const PtoSimRunConfig* cfg, PtoSimRunStats* stats,
                    char* err, size_t errlen) {
    auto& w = *static_cast<Worker*>(worker);
    auto& p = *static_cast<Program*>(program);
    auto run = std::make_unique<Run>();
    Run& r = *run;
    r.prog = &p;
    r.cfg = normalized(cfg);
    const uint64_t win = r.cfg.ring_task_window;
    if (win < 4 || (win & (win - 1)) != 0)
        return set_err(err, errlen, PTO_SIM_BAD_ARGUMENT,
                       "ring_task_window must be a power of 2 >= 4, got " + std::to_string(win));
    r.host_build_graph = kVariant.host_build_graph;
    r.arch_a5 = kVariant.arch_a5;
    r.hold_dispatch = kVariant.host_build_graph;
    r.rt.ops = runtime_ops();
    r.rt.pending_scope_mode = PTO2ScopeMode::AUTO;
    r.rt.worker = &w;
    r.rt.run = &r;
    std::vector<ChipTensor> aligned(num_tensors);  // callers (ctypes) only guarantee 16-byte alignment
    if (num_tensors) std::memcpy(static_cast<void*>(aligned.data()), tensors, num_tensors * sizeof(ChipTensor));
    const ChipTaskArgs args{aligned.data(), num_tensors, scalars, num_scalars};
    if (r.cfg.dfx && !loaded_extras())
        return set_err(err, errlen, PTO_SIM_BAD_ARGUMENT,
                       "DFX recording needs the runtime extras library, which this runtime library has not loaded "
                       "(pto_sim_load_extras; ChipWorker loads it for a run with DFX on)");
    if (p.config) {
        try {
            const uint32_t expected = p.config(args).expected_arg_count;
            if (num_tensors + num_scalars < expected)
                return set_err(err, errlen, PTO_SIM_BAD_ARGUMENT,
                               "arg_count " + std::to_string(num_tensors + num_scalars) + " < expected " +
                                   std::to_string(expected) + " (aicpu_orchestration_config)");
        } catch (const std::exception& e) {
            return set_err(err, errlen, PTO_SIM_ORCH_ERROR, std::string("aicpu_orchestration_config: ") + e.what());
        }
    }
    {
        std::lock_guard<std::mutex> lk(w.mu);
        if (int32_t rc = check_worker_free(w, err, errlen)) return rc;
        w.run = &r;
        r.last_progress = Clock::now();
        w.dfx_json.clear();
        w.dfx_bin.clear();
        r.comm = w.comm;
        if (r.cfg.dfx) r.dfx.reset(extras().dfx_new(r.cfg.dfx, w.cores.size()));
    }
    const auto t0 = Clock::now();
    orchestrate(p, r, args);
    const auto t1 = Clock::now();
    std::unique_lock<std::mutex> lk(w.mu);
    r.hold_dispatch = false;
    r.last_progress = Clock::now();
    try_dispatch(w, r);
    drain(w, r, lk);
    if (stats) {
        stats->num_tasks = r.tasks.size();
        stats->orch_ns = uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count());
        stats->device_ns = uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count());
    }
    if (r.dfx) {
        w.dfx_json = extras().dfx_json(r);
        w.dfx_bin.swap(r.dfx->bin);
    }
    w.run = nullptr;
    const int32_t rc = r.failed ? r.err_code : PTO_SIM_OK;
    if (rc) set_err(err, errlen, rc, r.err);
    if (r.running_units > 0) w.zombies.push_back(std::move(run));  // kernels still use its memory
    return rc;
}

void pto_sim_dfx_records(void* worker, const char** json, uint64_t* json_len, const char** bin, uint64_t* bin_len) {
    auto* w = static_cast<Worker*>(worker);
    *json = w->dfx_json.data();
    *json_len = w->dfx_json.size();
    *bin = w->dfx_bin.data();
    *bin_len = w->dfx_bin.size();
}

void* pto_sim_malloc(uint64_t nbytes) {
    void* p = nullptr;
    if (posix_memalign(&p, 1024, nbytes ? nbytes : 64) != 0) return nullptr;
    return p;
}

void pto_sim_free(void* ptr) { std::free(ptr); }

}  // extern "C"
