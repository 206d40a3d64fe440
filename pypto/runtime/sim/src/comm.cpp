// Built-in comm tasks (pto_comm_api.h): checked at submission, executed by the worker's comm thread
// (part of the extras library, sim_extras.h: started with the worker's first comm context).
//
// The comm thread takes every ready comm task of the current run. NOTIFY and COPY run at once; WAIT and
// BARRIER are polled together (none blocks another), each with its own deadline, so a wait never holds a
// core and a notify submitted after an unrelated wait still runs. Completion goes through complete_task
// like a kernel's, so consumers are released by the TensorMap edges as usual.
#include <cmath>
#include <cstring>
#include <sstream>

#include "sim_internal.h"

namespace ptosim {

namespace {

[[noreturn]] void bad(const CommTaskDesc& d, const std::string& msg) {
    throw std::invalid_argument(std::string("rt_submit_comm_task (") + comm_kind_name(d.kind) + "): " + msg);
}

// Byte range [lo, hi) a view touches.
void byte_range(const ChipTensor& t, uint64_t& lo, uint64_t& hi) {
    lo = t.buffer.addr + t.start_offset * t.element_size();
    hi = lo + t.extent() * t.element_size();
}

void check_in_region(const Run& r, const CommTaskDesc& d, const ChipTensor& t, const char* what) {
    uint64_t lo, hi;
    byte_range(t, lo, hi);
    const uint64_t start = r.comm.arena_base + uint64_t(r.comm.rank) * r.comm.region_bytes;
    if (lo < start || hi > start + r.comm.region_bytes) {
        std::ostringstream os;
        os << what << " must be a window tensor in this rank's region of the arena ([" << std::hex << "0x" << start
           << ", 0x" << start + r.comm.region_bytes << ") for rank " << std::dec << r.comm.rank << "), but it covers [0x"
           << std::hex << lo << ", 0x" << hi << ")";
        bad(d, os.str());
    }
}

void check_rank(const Run& r, const CommTaskDesc& d, int32_t rank, const char* what, bool local_ok) {
    if ((local_ok && rank == COMM_LOCAL) || (rank >= 0 && rank < r.comm.nranks)) return;
    bad(d, std::string(what) + " " + std::to_string(rank) + " is not a rank of this run (0.." +
               std::to_string(r.comm.nranks - 1) + (local_ok ? ", or COMM_LOCAL" : "") + ")");
}

void check_signal(const Run& r, const CommTaskDesc& d, const ChipTensor& s, bool cell) {
    if (s.data_type() != DataType::INT32)
        bad(d, std::string("the signal must be an INT32 window tensor, got ") + get_dtype_name(s.data_type()));
    check_in_region(r, d, s, "the signal");
    if (!cell) return;
    if (d.ndims != s.ndims)
        bad(d, std::to_string(d.ndims) + " offsets for a " + std::to_string(s.ndims) + "-d signal");
    for (uint32_t i = 0; i < s.ndims; ++i)
        if (d.offsets[i] >= s.shapes[i])
            bad(d, "offset " + std::to_string(d.offsets[i]) + " is out of range on dim " + std::to_string(i) +
                       " (size " + std::to_string(s.shapes[i]) + ")");
}

bool add_supported(DataType t) {
    return t == DataType::FLOAT32 || t == DataType::FLOAT16 || t == DataType::BFLOAT16 || t == DataType::INT32 ||
           t == DataType::INT16 || t == DataType::INT8;
}

void check_copy(const Run& r, const CommTaskDesc& d, const ChipTensor& dst, const ChipTensor& src) {
    check_rank(r, d, d.dst_rank, "dst_rank", true);
    check_rank(r, d, d.src_rank, "src_rank", true);
    if (dst.data_type() != src.data_type())
        bad(d, std::string("dst is ") + get_dtype_name(dst.data_type()) + " but src is " + get_dtype_name(src.data_type()));
    if (dst.numel() != src.numel())
        bad(d, "dst has " + std::to_string(dst.numel()) + " elements but src has " + std::to_string(src.numel()));
    if (d.dst_rank != COMM_LOCAL) check_in_region(r, d, dst, "dst (addressed on a rank)");
    if (d.src_rank != COMM_LOCAL) check_in_region(r, d, src, "src (addressed on a rank)");
    if (d.op < int32_t(CommAtomic::NONE) || d.op > int32_t(CommAtomic::MUL))
        bad(d, "atomic must be CommAtomic::NONE, ADD, MAX, MIN or MUL, got " + std::to_string(d.op));
    if (d.op != int32_t(CommAtomic::NONE) && !add_supported(dst.data_type()))
        bad(d, std::string("an atomic combine needs an FP32/FP16/BF16/INT32/INT16/INT8 destination, got ") +
                   get_dtype_name(dst.data_type()));
    if (d.op != int32_t(CommAtomic::NONE) && dst.data_type() == DataType::BFLOAT16 && r.arch_a5)
        bad(d, "an atomic combine into a BF16 destination needs the Ascend910B (a2a3sim) profile; a5sim has none "
               "(use FP32 or FP16)");
}

// Element offset (in elements from buffer.addr) of the flat index i of a view, row-major.
uint64_t elem_offset(const ChipTensor& t, uint64_t i) {
    uint64_t off = t.start_offset;
    for (int k = int(t.ndims) - 1; k >= 0; --k) {
        const uint64_t n = t.shapes[k] ? t.shapes[k] : 1;
        off += (i % n) * t.strides[k];
        i /= n;
    }
    return off;
}

int64_t shift(const Run& r, int32_t rank) {
    return rank == COMM_LOCAL ? 0 : (int64_t(rank) - r.comm.rank) * int64_t(r.comm.region_bytes);
}

int32_t* cell_ptr(const Run& r, const ChipTensor& s, const uint32_t offsets[], int32_t rank) {
    uint64_t off = s.start_offset;
    for (uint32_t i = 0; i < s.ndims; ++i) off += uint64_t(offsets[i]) * s.strides[i];
    return reinterpret_cast<int32_t*>(s.buffer.addr + off * 4 + shift(r, rank));
}

int32_t* flat_cell(const Run& r, const ChipTensor& s, uint64_t i, int32_t rank) {
    return reinterpret_cast<int32_t*>(s.buffer.addr + elem_offset(s, i) * 4 + shift(r, rank));
}

void run_copy(const Run& r, const Task& t) {
    const CommTaskDesc& d = t.cdesc;
    const ChipTensor& dst = t.tensors[0];
    const ChipTensor& src = t.tensors[1];
    const size_t es = dst.element_size();
    char* dbase = reinterpret_cast<char*>(dst.buffer.addr + shift(r, d.dst_rank));
    const char* sbase = reinterpret_cast<const char*>(src.buffer.addr + shift(r, d.src_rank));
    const uint64_t n = dst.numel();
    const bool add = d.op != int32_t(CommAtomic::NONE);
    if (!add && dst.is_contiguous && src.is_contiguous) {
        std::memmove(dbase + dst.start_offset * es, sbase + src.start_offset * es, n * es);
    } else {
        for (uint64_t i = 0; i < n; ++i) {
            char* dp = dbase + elem_offset(dst, i) * es;
            const char* sp = sbase + elem_offset(src, i) * es;
            if (add) comm_combine(dst.data_type(), d.op, dp, sp);
            else std::memcpy(dp, sp, es);
        }
    }
    __atomic_thread_fence(__ATOMIC_RELEASE);
}

void run_notify(const Run& r, const Task& t) {
    const CommTaskDesc& d = t.cdesc;
    int32_t* p = cell_ptr(r, t.tensors[0], d.offsets, d.peer);
    if (d.op == int32_t(CommNotifyOp::ATOMIC_ADD)) __atomic_fetch_add(p, d.value, __ATOMIC_SEQ_CST);
    else __atomic_store_n(p, d.value, __ATOMIC_SEQ_CST);
}

// A WAIT or BARRIER being polled.
struct Pending {
    Run* run;
    uint32_t task;
    Clock::time_point deadline;
    int32_t expected = 0;  // WAIT: the value; BARRIER: this rank's generation
    int32_t last = 0;      // WAIT: last value seen; BARRIER: index of the first cell not there yet
};

bool satisfied(Pending& p) {
    const Run& r = *p.run;
    const Task& t = *r.tasks[p.task];
    const ChipTensor& s = t.tensors[0];
    if (t.cdesc.kind == CommKind::WAIT) {
        p.last = __atomic_load_n(cell_ptr(r, s, t.cdesc.offsets, r.comm.rank), __ATOMIC_ACQUIRE);
        return t.cdesc.op == int32_t(CommWaitCmp::EQ) ? p.last == p.expected : p.last >= p.expected;
    }
    for (int32_t i = 0; i < r.comm.nranks; ++i) {
        if (__atomic_load_n(flat_cell(r, s, uint64_t(i), r.comm.rank), __ATOMIC_ACQUIRE) < p.expected) {
            p.last = i;
            return false;
        }
    }
    return true;
}

// BARRIER arrival: +1 on row `rank` of every rank's signal; returns this rank's generation.
int32_t barrier_arrive(const Run& r, const Task& t) {
    const ChipTensor& s = t.tensors[0];
    int32_t gen = 0;
    for (int32_t p = 0; p < r.comm.nranks; ++p) {
        const int32_t before = __atomic_fetch_add(flat_cell(r, s, uint64_t(r.comm.rank), p), 1, __ATOMIC_SEQ_CST);
        if (p == r.comm.rank) gen = before + 1;
    }
    return gen;
}

int64_t timeout_of(const Run& r, const Task& t) {
    return t.cdesc.timeout_ms > 0 ? t.cdesc.timeout_ms : r.comm.wait_timeout_ms;
}

uint64_t region_offset(const Run& r, const void* p) {
    return uint64_t(reinterpret_cast<uintptr_t>(p)) - r.comm.arena_base - uint64_t(r.comm.rank) * r.comm.region_bytes;
}

std::string cell_text(const CommTaskDesc& d) {
    std::ostringstream os;
    os << "[";
    for (uint32_t i = 0; i < d.ndims; ++i) os << (i ? ", " : "") << d.offsets[i];
    return os.str() + "]";
}

std::string timeout_message(Pending& p) {
    const Run& r = *p.run;
    const Task& t = *r.tasks[p.task];
    const ChipTensor& s = t.tensors[0];
    std::ostringstream os;
    os << "comm " << comm_kind_name(t.cdesc.kind) << " (task " << t.index << ") on rank " << r.comm.rank
       << " timed out after " << timeout_of(r, t) << " ms: ";
    if (t.cdesc.kind == CommKind::WAIT) {
        const int32_t* c = cell_ptr(r, s, t.cdesc.offsets, r.comm.rank);
        os << "signal cell " << cell_text(t.cdesc) << " (byte offset " << region_offset(r, c)
           << " in the rank's window region) expected " << (t.cdesc.op == int32_t(CommWaitCmp::EQ) ? "== " : ">= ")
           << p.expected << ", last seen " << p.last;
    } else {
        os << "generation " << p.expected << "; ranks not arrived:";
        for (int32_t i = 0; i < r.comm.nranks; ++i)
            if (__atomic_load_n(flat_cell(r, s, uint64_t(i), r.comm.rank), __ATOMIC_ACQUIRE) < p.expected)
                os << " " << i;
        os << " (cells seen:";
        for (int32_t i = 0; i < r.comm.nranks; ++i) os << " " << *flat_cell(r, s, uint64_t(i), r.comm.rank);
        os << ")";
    }
    return os.str();
}

void publish_status(const std::vector<Pending>& pending) {
    if (pending.empty()) return;
    const Run& r = *pending.front().run;
    PtoSimCommStatus* st = r.comm.status;
    if (!st) return;
    const Pending& p = pending.front();
    const Task& t = *r.tasks[p.task];
    const void* cell = t.cdesc.kind == CommKind::WAIT ? static_cast<const void*>(cell_ptr(r, t.tensors[0], t.cdesc.offsets, r.comm.rank))
                                                      : static_cast<const void*>(flat_cell(r, t.tensors[0], uint64_t(p.last), r.comm.rank));
    st->cmp = t.cdesc.kind == CommKind::WAIT ? t.cdesc.op : int32_t(CommWaitCmp::GE);
    st->expected = p.expected;
    st->last_seen = t.cdesc.kind == CommKind::WAIT ? p.last : *static_cast<const int32_t*>(cell);
    st->cell_offset = region_offset(r, cell);
    st->task = t.index;
    st->kind = int32_t(t.cdesc.kind);
    __atomic_store_n(&st->waiting, 1, __ATOMIC_RELEASE);
}

void clear_status(Run* r) {
    if (r && r->comm.status) __atomic_store_n(&r->comm.status->waiting, 0, __ATOMIC_RELEASE);
}

// Starts one comm task (lock NOT held). True: finished; false: now pending in `pending`.
bool start(Run& r, uint32_t idx, std::vector<Pending>& pending) {
    const Task& t = *r.tasks[idx];
    switch (t.cdesc.kind) {
        case CommKind::NOTIFY: run_notify(r, t); return true;
        case CommKind::COPY: run_copy(r, t); return true;
        case CommKind::WAIT:
        case CommKind::BARRIER: {
            Pending p{&r, idx, Clock::now() + std::chrono::milliseconds(timeout_of(r, t))};
            p.expected = t.cdesc.kind == CommKind::WAIT ? t.cdesc.value : barrier_arrive(r, t);
            if (satisfied(p)) return true;
            pending.push_back(p);
            return false;
        }
    }
    return true;
}

}  // namespace

void check_comm_task(const Run& r, const CommTaskDesc& d, const CoreTaskArgs& args) {
    const uint32_t need = d.kind == CommKind::COPY ? 2 : 1;
    if (d.kind != CommKind::NOTIFY && d.kind != CommKind::WAIT && d.kind != CommKind::COPY && d.kind != CommKind::BARRIER)
        bad(d, "unknown comm task kind " + std::to_string(int32_t(d.kind)));
    if (args.tensor_count < need)
        bad(d, "needs " + std::to_string(need) + " operand tensor(s) first in CoreTaskArgs, got " +
                   std::to_string(args.tensor_count));
    for (uint32_t i = 0; i < args.tensor_count; ++i)
        if (args.kinds[i] == TensorArgType::OUTPUT)
            bad(d, "tensor " + std::to_string(i) + " is a runtime-allocated OUTPUT; comm tasks take existing tensors");
    if (args.has_predicate) bad(d, "comm tasks take no predicate");
    switch (d.kind) {
        case CommKind::NOTIFY:
            check_rank(r, d, d.peer, "peer", false);
            if (d.op != int32_t(CommNotifyOp::SET) && d.op != int32_t(CommNotifyOp::ATOMIC_ADD))
                bad(d, "op must be CommNotifyOp::SET or ATOMIC_ADD, got " + std::to_string(d.op));
            check_signal(r, d, args.tensors[0], true);
            break;
        case CommKind::WAIT:
            if (d.op != int32_t(CommWaitCmp::EQ) && d.op != int32_t(CommWaitCmp::GE))
                bad(d, "cmp must be CommWaitCmp::EQ or GE, got " + std::to_string(d.op));
            check_signal(r, d, args.tensors[0], true);
            break;
        case CommKind::BARRIER:
            check_signal(r, d, args.tensors[0], false);
            if (args.tensors[0].numel() != uint64_t(r.comm.nranks))
                bad(d, "the signal must have one INT32 cell per rank (" + std::to_string(r.comm.nranks) + "), got " +
                           std::to_string(args.tensors[0].numel()));
            break;
        case CommKind::COPY: check_copy(r, d, args.tensors[0], args.tensors[1]); break;
    }
}

std::string comm_label(const Run& r, const Task& t) {
    (void)r;
    std::ostringstream os;
    const CommTaskDesc& d = t.cdesc;
    os << "comm " << comm_kind_name(d.kind);
    if (d.kind == CommKind::NOTIFY)
        os << " peer " << d.peer << " cell " << cell_text(d) << (d.op ? " += " : " = ") << d.value;
    else if (d.kind == CommKind::WAIT)
        os << " cell " << cell_text(d) << (d.op == int32_t(CommWaitCmp::EQ) ? " == " : " >= ") << d.value;
    else if (d.kind == CommKind::COPY)
        os << " dst rank " << d.dst_rank << " <- src rank " << d.src_rank
           << (d.op == 1 ? " (atomic add)" : d.op == 2 ? " (atomic max)" : d.op == 3 ? " (atomic min)" : d.op == 4 ? " (atomic mul)" : "");
    return os.str();
}

namespace {

// Drops the waits of a run that failed (lock held).
void drop_failed(std::vector<Pending>& pending) {
    if (pending.empty() || !pending.front().run->failed) return;
    Run* r = pending.front().run;
    r->comm_inflight = 0;
    clear_status(r);
    pending.clear();
    r->signal();
}

// Moves the run's ready comm tasks into `todo` (lock held).
void take_ready(Run* r, std::vector<uint32_t>& todo) {
    todo.clear();
    if (!r || r->hold_dispatch || r->failed) return;
    for (uint32_t idx : r->comm_ready) {
        r->task(idx).state = TaskState::RUNNING;
        todo.push_back(idx);
    }
    r->comm_inflight += int(todo.size());
    r->comm_ready.clear();
}

// Starts `todo` and polls `pending` (lock NOT held); finished tasks go to `done`. Returns a status code
// (0, PTO_SIM_COMM_TIMEOUT, PTO_SIM_ORCH_ERROR) with its message in `error`.
int step(Run& r, const std::vector<uint32_t>& todo, std::vector<Pending>& pending, std::vector<uint32_t>& done,
         std::string& error) {
    done.clear();
    try {
        for (uint32_t idx : todo)
            if (start(r, idx, pending)) done.push_back(idx);
        for (size_t i = 0; i < pending.size();) {
            if (satisfied(pending[i])) {
                done.push_back(pending[i].task);
                pending.erase(pending.begin() + long(i));
            } else if (Clock::now() >= pending[i].deadline) {
                error = timeout_message(pending[i]);
                return PTO_SIM_COMM_TIMEOUT;
            } else {
                ++i;
            }
        }
    } catch (const std::exception& e) {
        error = std::string("comm task failed: ") + e.what();
        return PTO_SIM_ORCH_ERROR;
    }
    return 0;
}

}  // namespace

void comm_loop(Worker& w, const CoreHooks& hooks) {
    std::vector<Pending> pending;
    std::vector<uint32_t> todo, done;
    std::unique_lock<std::mutex> lk(w.mu);
    while (!w.shutdown.load()) {
        drop_failed(pending);
        Run* r = pending.empty() ? w.run : pending.front().run;  // a run cannot end while its comm tasks fly
        take_ready(r, todo);
        if (todo.empty() && pending.empty()) {
            w.comm_cv.wait(lk);
            continue;
        }
        lk.unlock();
        std::string error;
        const int code = step(*r, todo, pending, done, error);
        if (pending.empty()) clear_status(r);
        else publish_status(pending);
        lock_spinning(lk);
        // a polled wait is governed by its own timeout, not by the run's no-progress limit
        if (!pending.empty()) r->last_progress = Clock::now();
        r->comm_inflight = int(pending.size());  // the rest of todo finished (or the run fails below)
        for (uint32_t idx : done) hooks.complete_task(w, *r, idx);
        if (code) r->fail(code, error);
        hooks.try_dispatch(w, *r);
        r->signal();
        if (!pending.empty() && done.empty() && !code)  // nothing moved: back off briefly before polling again
            w.comm_cv.wait_for(lk, std::chrono::microseconds(200));
    }
}

}  // namespace ptosim
