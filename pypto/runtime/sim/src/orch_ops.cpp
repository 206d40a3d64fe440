// The PTO2RuntimeOps table: what orchestration code calls (submit, scopes, allocation, element access).
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "sim_internal.h"

namespace ptosim {

namespace {

struct Ctx {
    Worker& w;
    Run& r;
};

Ctx ctx(PTO2Runtime* rt) {
    auto* s = static_cast<SimRuntime*>(rt);
    return Ctx{*s->worker, *s->run};
}

void check_alive(Run& r) {
    if (r.failed) throw RunAborted(r.err);
}

bool no_progress_possible(Run& r) {
    if (r.running_units > 0 || r.hold_dispatch || !comm_idle(r)) return false;
    for (auto& q : r.ready)
        if (!q.empty()) return false;
    return true;
}

// Waits (lock held) until done() or the run fails / stops making progress.
template <typename Done>
void wait_for(Worker& w, Run& r, std::unique_lock<std::mutex>& lk, Done done, const char* what) {
    (void)w;
    const auto timeout = std::chrono::milliseconds(r.cfg.timeout_ms);
    while (!done()) {
        check_alive(r);
        if (no_progress_possible(r)) {
            r.fail(PTO_SIM_DEADLOCK, std::string(what) + ": nothing is running or ready, so it can never happen." +
                                         describe_pending(w, r, 16));
            throw RunAborted(r.err);
        }
        if (r.cv.wait_until(lk, r.last_progress + timeout) == std::cv_status::timeout &&
            Clock::now() >= r.last_progress + timeout && !done()) {
            r.fail(PTO_SIM_DEADLOCK, std::string(what) + ": no progress for " + std::to_string(r.cfg.timeout_ms) +
                                         " ms." + describe_pending(w, r, 16));
            throw RunAborted(r.err);
        }
    }
}

void* alloc_buffer(Run& r, ChipTensor& t, bool has_init, uint64_t init) {
    const size_t es = t.element_size();
    const size_t bytes = t.numel() * es;
    void* p = nullptr;
    if (posix_memalign(&p, 1024, bytes ? bytes : 64) != 0) throw std::bad_alloc();
    if (has_init && es > 0) {
        for (size_t i = 0; i < t.numel(); ++i) std::memcpy(static_cast<char*>(p) + i * es, &init, es);
    } else {
        std::memset(p, 0, bytes);
    }
    r.allocations.push_back(p);
    if (r.dfx) r.dfx->heap += bytes;
    t.buffer.addr = reinterpret_cast<uint64_t>(p);
    t.buffer.size = bytes;
    t.start_offset = 0;
    return p;
}

int current_ring(Run& r) { return std::min<int>(int(r.scopes.size()) - 1, kMaxRings - 1); }

// Creates the task record and waits for ring space (lock held).
Task& new_task(Worker& w, Run& r, std::unique_lock<std::mutex>& lk) {
    check_alive(r);
    if (r.scopes.empty()) throw std::logic_error("task submitted outside any scope");
    const int ring = std::max(0, current_ring(r));
    const uint64_t cap = r.cfg.ring_task_window - 1;
    if (r.live[ring] >= cap) {
        if (r.host_build_graph)
            throw std::runtime_error("host_build_graph: the graph needs more than " + std::to_string(cap) +
                                     " live task slots in ring " + std::to_string(ring) +
                                     "; raise RunConfig.ring_task_window");
        wait_for(w, r, lk, [&] { return r.live[ring] < cap; },
                 ("Flow Control Deadlock Detected! ring " + std::to_string(ring) + " is full (" +
                  std::to_string(cap) + " live tasks; a scope holds more tasks than ring_task_window allows)")
                     .c_str());
    }
    auto t = std::make_unique<Task>();
    t->index = uint32_t(r.tasks.size());
    t->ring = ring;
    t->id = PTO2TaskId{(uint64_t(ring) << 32) | t->index};
    r.tasks.push_back(std::move(t));
    ++r.live[ring];
    if (r.dfx) ++r.dfx->allocated[size_t(ring)];
    return *r.tasks.back();
}

void add_edge(Run& r, Task& consumer, uint32_t producer) {
    if (producer == consumer.index) return;
    Task& p = r.task(producer);
    if (p.state == TaskState::COMPLETED) return;
    for (uint32_t f : consumer.fanin)
        if (f == producer) return;
    consumer.fanin.push_back(producer);
    p.fanout.push_back(consumer.index);
    ++p.refs;
    ++consumer.fanin_pending;
}

void creator_edge(Run& r, Task& consumer, const ChipTensor& t, int32_t arg) {
    if (t.owner_task_id == CHIP_TENSOR_NO_OWNER) return;
    const uint32_t idx = uint32_t(t.owner_task_id);
    if (idx < r.tasks.size() && r.task(idx).id.raw == t.owner_task_id) {
        if (r.dfx) extras().dfx_edge(r, idx, consumer.index, arg, EdgeSource::CREATOR, 0, nullptr);
        add_edge(r, consumer, idx);
    }
}

// DFX: tensormap edges before lookup() drops the entries of producers that already finished.
void record_tensormap_edges(Run& r, const Task& task, const ChipTensor& t, int32_t arg) {
    std::vector<std::pair<const TensorMapEntry*, Overlap>> hits;
    r.tmap.lookup_all(t, hits);
    const Extras& x = extras();
    for (auto& [e, o] : hits)
        x.dfx_edge(r, e->producer, task.index, arg, EdgeSource::TENSORMAP, o == Overlap::COVERED ? 1 : 2, &e->view);
}

void compute_fanin(Run& r, Task& task, const CoreTaskArgs& args, bool manual) {
    std::vector<uint32_t> producers;
    for (uint32_t i = 0; i < args.tensor_count; ++i) {
        const ChipTensor& t = task.tensors[i];
        const TensorArgType kind = args.kinds[i];
        if (kind == TensorArgType::OUTPUT) continue;
        if (!manual) creator_edge(r, task, t, int32_t(i));
        if (t.manual_dep) continue;
        if (!manual && (kind == TensorArgType::INPUT || kind == TensorArgType::INOUT)) {
            if (r.dfx && r.dfx->deps) record_tensormap_edges(r, task, t, int32_t(i));
            producers.clear();
            r.tmap.lookup(t, r.tasks, producers);
            for (uint32_t p : producers) add_edge(r, task, p);
        }
        if (kind == TensorArgType::INOUT) r.tmap.remove_covered(t);
        if (kind == TensorArgType::INOUT || kind == TensorArgType::OUTPUT_EXISTING) r.tmap.insert(t, task.index);
    }
    for (uint32_t i = 0; i < args.dep_count; ++i) {
        const PTO2TaskId id = args.deps[i];
        if (!id.is_valid()) continue;
        if (id.local_id() >= r.tasks.size() || r.task(id.local_id()).id.raw != id.raw)
            throw std::invalid_argument("set_dependencies: task id " + std::to_string(id.raw) +
                                        " does not name a task of this run");
        if (r.dfx) extras().dfx_edge(r, uint32_t(id.local_id()), task.index, -1, EdgeSource::EXPLICIT, 0, nullptr);
        add_edge(r, task, id.local_id());
    }
}

void check_kernels(Run& r, const MixedKernels& mk) {
    const int32_t ids[3] = {mk.aic_kernel_id, mk.aiv0_kernel_id, mk.aiv1_kernel_id};
    const char* slots[3] = {"AIC", "AIV0", "AIV1"};
    int active = 0;
    for (int s = 0; s < 3; ++s) {
        if (ids[s] == INVALID_KERNEL_ID) continue;
        ++active;
        auto it = r.prog->kernels.find(ids[s]);
        if (it == r.prog->kernels.end()) {
            std::ostringstream os;
            os << "submit: func_id " << ids[s] << " (" << slots[s] << " slot) is not a kernel of this program; known:";
            for (auto& [id, k] : r.prog->kernels) os << " " << id << "=" << k.name;
            throw std::invalid_argument(os.str());
        }
        const CoreKind want = s == 0 ? CoreKind::AIC : CoreKind::AIV;
        if (it->second.core != want)
            throw std::invalid_argument("submit: kernel '" + it->second.name + "' (func_id " + std::to_string(ids[s]) +
                                        ") is an " + (want == CoreKind::AIC ? "aiv" : "aic") +
                                        " kernel but was submitted to the " + slots[s] + " slot");
    }
    if (active == 0) throw std::invalid_argument("submit: MixedKernels has no active kernel slot");
}

Shape shape_of(const MixedKernels& mk, int16_t& units) {
    const bool c = mk.aic_kernel_id != INVALID_KERNEL_ID;
    const int v = (mk.aiv0_kernel_id != INVALID_KERNEL_ID) + (mk.aiv1_kernel_id != INVALID_KERNEL_ID);
    units = int16_t(c + v);
    if (c && v == 0) return Shape::AIC;
    if (!c && v == 1) return Shape::AIV;
    return Shape::MIX;
}

void copy_args(Run& r, Task& t, const CoreTaskArgs& args) {
    t.tensors.assign(args.tensors, args.tensors + args.tensor_count);
    t.scalars.assign(args.scalars, args.scalars + args.scalar_count);
    for (uint32_t i = 0; i < args.tensor_count; ++i) {
        if (args.kinds[i] != TensorArgType::OUTPUT) continue;
        ChipTensor& out = t.tensors[i];
        alloc_buffer(r, out, args.has_initial[i], args.initial_values[i]);
        out.owner_task_id = t.id.raw;
        t.created.push_back(out);
    }
}

void finish_submit(Worker& w, Run& r, Task& t) {
    r.scopes.back().tasks.push_back(t.index);
    ++t.refs;
    if (t.fanin_pending == 0) make_ready(w, r, t.index);
    try_dispatch(w, r);
}

std::unique_lock<std::mutex> lock(Worker& w) {
    std::unique_lock<std::mutex> lk(w.mu, std::defer_lock);
    lock_spinning(lk);
    return lk;
}

// DFX level 4: the span of one orchestrator call (lock held when it is recorded).
void record_orch(Run& r, const char* kind, const Task& t, Clock::time_point start) {
    if (r.dfx && r.dfx->level >= 4) r.dfx->orch.push_back(DfxOrch{kind, t.index, r.dfx->ns(start), r.dfx->ns(Clock::now())});
}

// The rest of every submit that carries task args: their DFX record, the fan-in through the TensorMap
// (explicit deps in a manual scope), then the task joins its scope and may be dispatched.
void submit_with_args(Worker& w, Run& r, Task& t, const CoreTaskArgs& args, const char* what, Clock::time_point t0) {
    const bool manual = r.scopes.back().mode == PTO2ScopeMode::MANUAL;
    if (r.dfx)
        extras().dfx_task_args(r, t, reinterpret_cast<const uint8_t*>(args.kinds), args.tensor_count, manual,
                               args.dump_mask);
    compute_fanin(r, t, args, manual);
    finish_submit(w, r, t);
    if (r.dfx) record_orch(r, what, t, t0);
}

TaskOutputTensors op_submit_task(PTO2Runtime* rt, const MixedKernels& mk, const CoreTaskArgs& args) {
    auto [w, r] = ctx(rt);
    const auto t0 = r.dfx ? Clock::now() : Clock::time_point{};
    auto lk = lock(w);
    check_kernels(r, mk);
    int16_t units = 1;
    const Shape shape = shape_of(mk, units);
    const int16_t blocks = args.launch_spec.block_num;
    Task& t = new_task(w, r, lk);
    t.kernel[0] = mk.aic_kernel_id;
    t.kernel[1] = mk.aiv0_kernel_id;
    t.kernel[2] = mk.aiv1_kernel_id;
    t.shape = shape;
    t.units_per_block = units;
    t.block_num = blocks;
    t.units_left.assign(size_t(blocks), units);
    t.sync_start = args.launch_spec.require_sync_start;
    const int cap = shape == Shape::AIV ? 2 * w.clusters : w.clusters;
    if (t.sync_start && blocks > cap)
        throw std::invalid_argument("submit: require_sync_start with block_num " + std::to_string(blocks) +
                                    " exceeds the " + std::to_string(cap) + " cores that can start together");
    copy_args(r, t, args);
    if (args.has_predicate) {
        if (args.predicate.operand.tensor == nullptr) throw std::invalid_argument("set_predicate: operand.tensor is null");
        t.has_predicate = true;
        t.predicate = args.predicate;
        t.predicate_tensor = *args.predicate.operand.tensor;
    }
    submit_with_args(w, r, t, args, "submit_task", t0);
    return TaskOutputTensors{t.id, t.created.data(), uint32_t(t.created.size())};
}

PTO2TaskId op_submit_dummy(PTO2Runtime* rt, const CoreTaskArgs& args) {
    auto [w, r] = ctx(rt);
    const auto t0 = r.dfx ? Clock::now() : Clock::time_point{};
    auto lk = lock(w);
    Task& t = new_task(w, r, lk);
    t.dummy = true;
    copy_args(r, t, args);
    submit_with_args(w, r, t, args, "submit_dummy", t0);
    return t.id;
}

TaskOutputTensors op_alloc_tensors(PTO2Runtime* rt, const TensorCreateInfo* infos, uint32_t n) {
    auto [w, r] = ctx(rt);
    const auto t0 = r.dfx ? Clock::now() : Clock::time_point{};
    auto lk = lock(w);
    Task& t = new_task(w, r, lk);
    t.dummy = true;
    for (uint32_t i = 0; i < n; ++i) {
        const uint32_t one = 1;
        ChipTensor out = ChipTensor::make(nullptr, infos[i].ndims ? infos[i].shapes : &one,
                                          infos[i].ndims ? infos[i].ndims : 1, infos[i].dtype);
        alloc_buffer(r, out, infos[i].has_initial_value, infos[i].initial_value);
        out.owner_task_id = t.id.raw;
        t.created.push_back(out);
    }
    finish_submit(w, r, t);
    if (r.dfx) record_orch(r, "alloc_tensors", t, t0);
    return TaskOutputTensors{t.id, t.created.data(), uint32_t(t.created.size())};
}

void op_scope_begin(PTO2Runtime* rt, PTO2ScopeMode mode) {
    auto [w, r] = ctx(rt);
    auto lk = lock(w);
    check_alive(r);
    if (r.scopes.size() >= size_t(kMaxScopeDepth))
        throw std::logic_error("PTO2_SCOPE: nesting deeper than " + std::to_string(kMaxScopeDepth));
    if (mode == PTO2ScopeMode::AUTO && !r.scopes.empty() && r.scopes.back().mode == PTO2ScopeMode::MANUAL)
        throw std::logic_error("PTO2_SCOPE(): an AUTO scope cannot be nested inside a MANUAL scope");
    r.scopes.push_back(Scope{mode, {}});
    if (r.dfx) extras().dfx_scope(r, true, r.tmap.size());
}

void op_scope_end(PTO2Runtime* rt) {
    auto [w, r] = ctx(rt);
    auto lk = lock(w);
    if (r.scopes.empty()) {
        r.fail(PTO_SIM_ORCH_ERROR, "scope_end without a matching scope_begin");
        return;
    }
    for (uint32_t idx : r.scopes.back().tasks) {
        Task& t = r.task(idx);
        --t.refs;
        maybe_retire(r, t);
    }
    if (r.dfx) extras().dfx_scope(r, false, r.tmap.size());
    r.scopes.pop_back();
    r.signal();
}

void op_orchestration_done(PTO2Runtime*) {}

bool op_is_fatal(PTO2Runtime* rt) {
    auto [w, r] = ctx(rt);
    auto lk = lock(w);
    return r.failed;
}

void op_report_fatal(PTO2Runtime* rt, int32_t code, const char* msg) {
    auto [w, r] = ctx(rt);
    auto lk = lock(w);
    r.fail(PTO_SIM_ORCH_ERROR, "orchestration reported fatal error " + std::to_string(code) + ": " + msg);
}

void emit(PTO2Runtime* rt, int level, const char* tag, const char* msg) {
    auto [w, r] = ctx(rt);
    if (level > r.cfg.log_level) return;
    std::lock_guard<std::mutex> lk(w.mu);
    fprintf(stderr, "[pto-sim] %s: %s\n", tag, msg);
}

void op_log_error(PTO2Runtime* rt, const char* m) { emit(rt, 0, "ERROR", m); }
void op_log_warn(PTO2Runtime* rt, const char* m) { emit(rt, 1, "WARN", m); }
void op_log_info(PTO2Runtime* rt, const char* m) { emit(rt, 2, "INFO", m); }
void op_log_timing(PTO2Runtime* rt, const char* m) { emit(rt, 2, "TIMING", m); }
void op_log_debug(PTO2Runtime* rt, const char* m) { emit(rt, 3, "DEBUG", m); }

char* element_ptr(const ChipTensor& t, uint32_t ndims, const uint32_t idx[]) {
    if (ndims != t.ndims)
        throw std::invalid_argument("tensor element access: " + std::to_string(ndims) + " indices for a " +
                                    std::to_string(t.ndims) + "-d tensor");
    uint64_t off = t.start_offset;
    for (uint32_t i = 0; i < ndims; ++i) {
        if (idx[i] >= t.shapes[i])
            throw std::out_of_range("tensor element access: index " + std::to_string(idx[i]) + " out of range on dim " +
                                    std::to_string(i) + " (size " + std::to_string(t.shapes[i]) + ")");
        off += uint64_t(idx[i]) * t.strides[i];
    }
    if (off >= t.buffer.size / t.element_size())
        throw std::out_of_range("tensor element access: element " + std::to_string(off) + " lies past the end of the "
                                "tensor's buffer (" + std::to_string(t.buffer.size / t.element_size()) +
                                " elements): the view reaches beyond the tensor it was sliced from");
    return reinterpret_cast<char*>(t.buffer.addr) + off * t.element_size();
}

// Waits for every unfinished task that names t's buffer (producers, and for writes also readers).
void wait_buffer_quiet(Worker& w, Run& r, std::unique_lock<std::mutex>& lk, const ChipTensor& t, const char* what) {
    auto quiet = [&] {
        for (auto& tp : r.tasks) {
            if (tp->state == TaskState::COMPLETED) continue;
            for (auto& a : tp->tensors)
                if (a.buffer.addr == t.buffer.addr) return false;
        }
        return true;
    };
    if (r.host_build_graph && !quiet())
        throw std::runtime_error(std::string(what) +
                                 " on a tensor that tasks of the graph use is not supported by host_build_graph");
    wait_for(w, r, lk, quiet, what);
}

void op_get_tensor_data(PTO2Runtime* rt, const ChipTensor& t, uint32_t ndims, const uint32_t idx[], void* out) {
    auto [w, r] = ctx(rt);
    auto lk = lock(w);
    char* p = element_ptr(t, ndims, idx);
    wait_buffer_quiet(w, r, lk, t, "get_tensor_data");
    std::memcpy(out, p, t.element_size());
}

void op_set_tensor_data(PTO2Runtime* rt, const ChipTensor& t, uint32_t ndims, const uint32_t idx[], const void* in) {
    auto [w, r] = ctx(rt);
    auto lk = lock(w);
    char* p = element_ptr(t, ndims, idx);
    wait_buffer_quiet(w, r, lk, t, "set_tensor_data");
    std::memcpy(p, in, t.element_size());
}

int32_t op_cluster_count(PTO2Runtime* rt) { return ctx(rt).w.clusters; }
int32_t op_aiv_count(PTO2Runtime* rt) { return 2 * ctx(rt).w.clusters; }
void op_scope_set_site(PTO2Runtime* rt, const char* file, int32_t line) {
    auto [w, r] = ctx(rt);
    if (!r.dfx || !file) return;
    auto lk = lock(w);
    std::string f(file);
    const size_t slash = f.find_last_of('/');
    r.dfx->site = (slash == std::string::npos ? f : f.substr(slash + 1)) + ":" + std::to_string(line);
}

bool op_comm_info(PTO2Runtime* rt, PTO2CommInfo* out) {
    const CommContext& c = ctx(rt).r.comm;
    if (!c.active()) return false;
    *out = PTO2CommInfo{c.rank, c.nranks, c.arena_base, c.region_bytes};
    return true;
}

PTO2TaskId op_submit_comm_task(PTO2Runtime* rt, const CommTaskDesc& desc, const CoreTaskArgs& args) {
    auto [w, r] = ctx(rt);
    const auto t0 = r.dfx ? Clock::now() : Clock::time_point{};
    // the comm context and the args do not change during the run; a comm context implies the extras
    if (!r.comm.active())
        throw std::invalid_argument(std::string("rt_submit_comm_task (") + comm_kind_name(desc.kind) +
                                    "): this program runs without a comm context; distributed programs run in rank "
                                    "processes (pypto.runtime.distributed.run_ranks) on a ChipWorker given a "
                                    "CommContext");
    extras().check_comm_task(r, desc, args);
    auto lk = lock(w);
    Task& t = new_task(w, r, lk);
    t.comm = true;
    t.cdesc = desc;
    copy_args(r, t, args);
    submit_with_args(w, r, t, args, "submit_comm_task", t0);
    return t.id;
}

const PTO2RuntimeOps kOps = {
    op_submit_task,   op_scope_begin,   op_scope_end,      op_orchestration_done, op_is_fatal,
    op_report_fatal,  op_log_error,     op_log_warn,       op_log_timing,         op_log_info,
    op_log_debug,     op_get_tensor_data, op_set_tensor_data, op_alloc_tensors,    op_submit_dummy,
    op_cluster_count, op_aiv_count,     op_scope_set_site, op_comm_info,        op_submit_comm_task,
};

}  // namespace

const PTO2RuntimeOps* runtime_ops() { return &kOps; }

}  // namespace ptosim
