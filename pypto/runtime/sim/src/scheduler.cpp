// Core threads, ready queues, dispatch and completion. Every function here runs with Worker::mu held,
// except the kernel call itself inside Worker::core_loop.
#include <sched.h>

#include <algorithm>
#include <cstdlib>
#include <sstream>

#include "sim_internal.h"

namespace ptosim {

namespace {

thread_local Core* tl_core = nullptr;

const char* kCoreNames[] = {"AIC", "AIV"};

bool predicate_holds(Task& t) {
    const ChipTensor& x = t.predicate_tensor;
    uint64_t off = x.start_offset;
    for (uint32_t i = 0; i < t.predicate.operand.ndims; ++i) off += uint64_t(t.predicate.operand.indices[i]) * x.strides[i];
    const char* p = reinterpret_cast<const char*>(x.buffer.addr) + off * x.element_size();
    double v = 0;
    switch (x.data_type()) {
        case DataType::FLOAT32: v = *reinterpret_cast<const float*>(p); break;
        case DataType::INT32: v = *reinterpret_cast<const int32_t*>(p); break;
        case DataType::INT64: v = double(*reinterpret_cast<const int64_t*>(p)); break;
        case DataType::UINT32: v = *reinterpret_cast<const uint32_t*>(p); break;
        case DataType::UINT64: v = double(*reinterpret_cast<const uint64_t*>(p)); break;
        case DataType::INT16: v = *reinterpret_cast<const int16_t*>(p); break;
        case DataType::UINT16: v = *reinterpret_cast<const uint16_t*>(p); break;
        case DataType::INT8: v = *reinterpret_cast<const int8_t*>(p); break;
        default: v = *reinterpret_cast<const uint8_t*>(p); break;
    }
    const double k = double(t.predicate.target);
    switch (t.predicate.op) {
        case PredicateOp::EQ: return v == k;
        case PredicateOp::NE: return v != k;
        case PredicateOp::LT: return v < k;
        case PredicateOp::LE: return v <= k;
        case PredicateOp::GT: return v > k;
        case PredicateOp::GE: return v >= k;
    }
    return true;
}

bool runs_inline(Task& t) { return t.dummy || (t.has_predicate && !predicate_holds(t)); }

void enqueue(Run& r, Task& t) {
    t.state = TaskState::READY;
    if (t.comm) {
        r.comm_ready.push_back(t.index);
        r.rt.worker->comm_cv.notify_one();
        return;
    }
    r.ready[static_cast<int>(t.shape)].push_back(t.index);
}

Core* aic(Worker& w, int cluster) { return w.cores[cluster].get(); }
Core* aiv(Worker& w, int cluster, int sub) { return w.cores[w.clusters + 2 * cluster + sub].get(); }

// Cores (and kernel slots) for one block of t, or false if they are not all idle now.
bool find_cores(Worker& w, const Task& t, std::vector<std::pair<Core*, int>>& out) {
    out.clear();
    if (t.shape == Shape::AIC) {
        for (int c = 0; c < w.clusters; ++c)
            if (!aic(w, c)->busy) return out.emplace_back(aic(w, c), 0), true;
        return false;
    }
    if (t.shape == Shape::AIV) {
        const int slot = t.kernel[1] != INVALID_KERNEL_ID ? 1 : 2;
        for (int i = 0; i < 2 * w.clusters; ++i) {
            Core* c = w.cores[w.clusters + i].get();
            if (!c->busy) return out.emplace_back(c, slot), true;
        }
        return false;
    }
    for (int c = 0; c < w.clusters; ++c) {
        Core* need[3] = {aic(w, c), aiv(w, c, 0), aiv(w, c, 1)};
        bool ok = true;
        for (int s = 0; s < 3; ++s)
            if (t.kernel[s] != INVALID_KERNEL_ID && need[s]->busy) ok = false;
        if (!ok) continue;
        for (int s = 0; s < 3; ++s)
            if (t.kernel[s] != INVALID_KERNEL_ID) out.emplace_back(need[s], s);
        return true;
    }
    return false;
}

int free_capacity(Worker& w, const Task& t) {
    int n = 0;
    for (int c = 0; c < w.clusters; ++c) {
        if (t.shape == Shape::AIC) n += !aic(w, c)->busy;
        else if (t.shape == Shape::AIV) n += !aiv(w, c, 0)->busy + !aiv(w, c, 1)->busy;
        else {
            Core* need[3] = {aic(w, c), aiv(w, c, 0), aiv(w, c, 1)};
            bool ok = true;
            for (int s = 0; s < 3; ++s)
                if (t.kernel[s] != INVALID_KERNEL_ID && need[s]->busy) ok = false;
            n += ok;
        }
    }
    return n;
}

// Places as many blocks of t as idle cores allow; true once every block is placed.
bool dispatch_blocks(Worker& w, Run& r, Task& t) {
    if (t.sync_start && t.blocks_dispatched == 0 && free_capacity(w, t) < t.block_num) return false;
    std::vector<std::pair<Core*, int>> cores;
    while (t.blocks_dispatched < t.block_num) {
        if (!find_cores(w, t, cores)) return false;
        const int16_t block = t.blocks_dispatched++;
        if (r.dfx && block == 0) extras().dfx_dump(r, t, false);  // inputs as the first block starts
        for (auto& [core, slot] : cores) {
            core->job = Job{&r, t.index, &t, block, slot, &r.prog->kernels.at(t.kernel[slot])};
            if (r.dfx) core->job.dispatch_ns = r.dfx->ns(Clock::now());
            core->busy = true;
            core->has_job = true;
            ++r.running_units;
            core->cv.notify_one();
        }
        t.state = TaskState::RUNNING;
        r.last_progress = Clock::now();
    }
    return true;
}

void unit_done(Worker& w, Run& r, const Job& j, Core& core, bool faulted, const std::string& what) {
    Task& t = r.task(j.task);
    if (faulted) {
        const KernelInfo& k = *j.kernel;
        std::ostringstream os;
        os << "kernel fault in task " << t.index << " (kernel '" << k.name << "', func_id " << k.func_id << ") on "
           << kCoreNames[static_cast<int>(core.kind)] << " core " << core.id << " (cluster " << core.cluster
           << ", sub-block " << core.subblock << "), block " << j.block << "/" << t.block_num << ": " << what;
        r.fail(PTO_SIM_KERNEL_FAULT, os.str());
        return;
    }
    if (--t.units_left[j.block] == 0 && ++t.blocks_done == t.block_num) complete_task(w, r, t.index);
    try_dispatch(w, r);
}

int usable_cpus() {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) == 0) return CPU_COUNT(&set);
    return std::max(1u, std::thread::hardware_concurrency());
}

}  // namespace

Worker::Worker(int num_clusters) : clusters(num_clusters), cpus(usable_cpus()) {
    const int total = 3 * clusters;
    for (int i = 0; i < total; ++i) {
        auto c = std::make_unique<Core>();
        c->id = i;
        c->kind = i < clusters ? CoreKind::AIC : CoreKind::AIV;
        c->cluster = i < clusters ? i : (i - clusters) / 2;
        c->subblock = i < clusters ? 0 : (i - clusters) % 2;
        c->gctx.sub_block_id = c->subblock;
        c->gctx.cluster_id = c->cluster;
        cores.push_back(std::move(c));
    }
    for (auto& c : cores) {
        Core* cp = c.get();
        cp->thread = std::thread([this, cp] { core_loop(*cp); });
    }
}

void Worker::start_comm_thread() {
    static const CoreHooks hooks{complete_task, try_dispatch};
    if (comm_thread.joinable()) return;
    const Extras* x = loaded_extras();
    comm_thread = std::thread([this, x] { x->comm_loop(*this, hooks); });
}

Worker::~Worker() {
    {
        std::lock_guard<std::mutex> lk(mu);
        shutdown = true;
        for (auto& c : cores) c->cv.notify_one();
        comm_cv.notify_all();
    }
    for (auto& c : cores) c->thread.join();
    if (comm_thread.joinable()) comm_thread.join();
}

int Worker::cpus_in_use() const {
    int n = spinners.load();
    for (auto& c : cores) n += c->busy || c->spinning.load(std::memory_order_relaxed);
    return n;
}

int Worker::idle_running_units() const {
    int n = 0;
    for (auto& c : cores) n += c->busy;
    return n;
}

void Worker::core_loop(Core& c) {
    tl_core = &c;
    std::unique_lock<std::mutex> lk(mu);
    const auto woken = [&] { return c.has_job.load(std::memory_order_acquire) || shutdown.load(); };
    for (;;) {
        // A job found while polling is picked up without the lock: the dispatcher wrote it (and the task
        // was complete) before publishing has_job, and nothing changes them until this core finishes.
        const auto now = Clock::now();
        const bool polled = !woken() && c.spin_until > now && spin_unlocked(*this, lk, c.spin_until - now, woken, &c);
        if (!polled) c.cv.wait(lk, woken);
        if (!c.has_job) return;
        const Job j = c.job;
        Run& r = *j.run;
        Task& t = *j.task_ptr;
        const size_t nt = t.tensors.size();
        for (size_t i = 0; i < nt; ++i) c.args[i] = reinterpret_cast<int64_t>(&t.tensors[i]);
        for (size_t i = 0; i < t.scalars.size(); ++i) c.args[nt + i] = static_cast<int64_t>(t.scalars[i]);
        c.lctx.block_idx = j.block;
        c.lctx.block_num = t.block_num;
        // Lanes of a mixed task are its AIV slots; a plain AIV task is a lane of its own.
        const int lanes = t.shape == Shape::MIX ? (t.kernel[1] != INVALID_KERNEL_ID) + (t.kernel[2] != INVALID_KERNEL_ID) : 1;
        const int lane = t.shape == Shape::MIX && j.slot == 2 && lanes == 2 ? 1 : 0;
        c.gctx.sub_block_id = lane;
        c.args[PTO_ARG_LOCAL_CONTEXT_SLOT] = reinterpret_cast<int64_t>(&c.lctx);
        c.args[PTO_ARG_GLOBAL_CONTEXT_SLOT] = reinterpret_cast<int64_t>(&c.gctx);
        if (lk.owns_lock()) lk.unlock();
        bool faulted = false;
        std::string what;
        const bool timed = r.dfx && r.dfx->units;  // DFX: one branch per unit when off
        const int64_t start_ns = timed ? r.dfx->ns(Clock::now()) : 0;
        try {
            if (j.kernel->set_ctx) j.kernel->set_ctx(j.block, t.block_num, lane, lanes);
            j.kernel->fn(c.args);
        } catch (const std::exception& e) {
            faulted = true;
            what = e.what();
        } catch (...) {
            faulted = true;
            what = "unknown C++ exception";
        }
        const int64_t end_ns = timed ? r.dfx->ns(Clock::now()) : 0;
        lock_spinning(lk);
        if (timed) extras().dfx_unit(r, c, j, start_ns, end_ns);
        c.has_job = false;
        c.busy = false;
        --r.running_units;
        r.last_progress = Clock::now();
        c.spin_until = r.last_progress + kCoreSpin;
        unit_done(*this, r, j, c, faulted, what);
        r.signal();
    }
}

Run::~Run() {
    for (void* p : allocations) std::free(p);
}

void maybe_retire(Run& r, Task& t) {
    if (t.state == TaskState::COMPLETED && t.refs <= 0 && !t.retired) {
        t.retired = true;
        --r.live[t.ring];
        if (r.dfx) ++r.dfx->released[size_t(t.ring)];
    }
}

void complete_task(Worker& w, Run& r, uint32_t first) {
    (void)w;
    std::vector<uint32_t> work{first};
    while (!work.empty()) {
        Task& t = r.task(work.back());
        work.pop_back();
        t.state = TaskState::COMPLETED;
        ++r.completed;
        if (r.dfx) extras().dfx_dump(r, t, true);
        for (uint32_t c : t.fanout) {
            Task& consumer = r.task(c);
            if (--consumer.fanin_pending == 0) {
                if (runs_inline(consumer)) work.push_back(c);
                else enqueue(r, consumer);
            }
        }
        for (uint32_t p : t.fanin) {
            --r.task(p).refs;
            maybe_retire(r, r.task(p));
        }
        maybe_retire(r, t);
    }
    r.last_progress = Clock::now();
    r.signal();
}

void make_ready(Worker& w, Run& r, uint32_t idx) {
    Task& t = r.task(idx);
    if (runs_inline(t)) complete_task(w, r, idx);
    else enqueue(r, t);
}

void try_dispatch(Worker& w, Run& r) {
    if (r.hold_dispatch || r.failed) return;
    if (!r.comm_ready.empty()) w.comm_cv.notify_one();
    for (Shape s : {Shape::MIX, Shape::AIC, Shape::AIV}) {
        auto& q = r.ready[static_cast<int>(s)];
        while (!q.empty() && dispatch_blocks(w, r, r.task(q.front()))) q.pop_front();
    }
}

std::string task_label(Run& r, const Task& t) {
    std::ostringstream os;
    os << "task " << t.index;
    if (t.dummy) return os.str() + " (dependency-only)";
    if (t.comm) return os.str() + " (" + extras().comm_label(r, t) + ")";  // comm tasks need the extras
    os << " (";
    const char* slots[] = {"aic", "aiv0", "aiv1"};
    bool first = true;
    for (int s = 0; s < 3; ++s) {
        if (t.kernel[s] == INVALID_KERNEL_ID) continue;
        auto it = r.prog->kernels.find(t.kernel[s]);
        os << (first ? "" : ", ") << slots[s] << " kernel '" << (it != r.prog->kernels.end() ? it->second.name : "?")
           << "' func_id " << t.kernel[s];
        first = false;
    }
    return os.str() + ")";
}

std::string describe_pending(Worker& w, Run& r, size_t limit) {
    std::ostringstream os;
    size_t shown = 0, pending = 0;
    for (auto& tp : r.tasks) {
        Task& t = *tp;
        if (t.state == TaskState::COMPLETED) continue;
        if (++pending > limit) continue;
        ++shown;
        os << "\n  " << task_label(r, t) << ": ";
        if (t.state == TaskState::PENDING) {
            os << "waiting for";
            for (uint32_t p : t.fanin)
                if (r.task(p).state != TaskState::COMPLETED) os << " task " << p;
        } else if (t.comm) {
            os << (t.state == TaskState::READY ? "ready for the comm thread" : "in flight on the comm thread");
        } else if (t.state == TaskState::READY) {
            os << "ready, no idle core of its type";
        } else {
            os << "running on";
            for (auto& c : w.cores)
                if (c->busy && c->job.run == &r && c->job.task == t.index)
                    os << " " << kCoreNames[static_cast<int>(c->kind)] << " core " << c->id << " (block " << c->job.block
                       << ")";
        }
    }
    if (pending > shown) os << "\n  ... and " << (pending - shown) << " more";
    return os.str();
}

}  // namespace ptosim

extern "C" {
int32_t pto_sim_get_block_idx(void) { return ptosim::tl_core ? ptosim::tl_core->lctx.block_idx : -1; }
int32_t pto_sim_get_block_num(void) { return ptosim::tl_core ? ptosim::tl_core->lctx.block_num : -1; }
int32_t pto_sim_get_subblock_id(void) { return ptosim::tl_core ? ptosim::tl_core->gctx.sub_block_id : -1; }
int32_t pto_sim_get_cluster_id(void) { return ptosim::tl_core ? ptosim::tl_core->cluster : -1; }
int32_t pto_sim_get_core_id(void) { return ptosim::tl_core ? ptosim::tl_core->id : -1; }
}
