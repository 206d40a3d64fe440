// Communication API of the simulation runtime: built-in comm tasks between the ranks of a distributed run.
//
// A distributed program runs one OS process per rank. Every rank's window buffers live in one shared arena
// (mapped before the ranks were forked, so at the same address in every rank): `nranks` equal regions of
// `region_bytes`, rank r's copy of a window buffer at `arena_base + r * region_bytes + offset(buffer)`.
// An orchestration sees its window tensors as ordinary ChipTensors on its own rank's copy; a comm task
// names a peer by rank and the runtime moves the address by `(peer - rank) * region_bytes`.
//
// Comm tasks are executed by the runtime itself (a comm thread of the chip, not a core), and are ordered
// through the TensorMap exactly like a kernel task with the same tensor arguments and directions, plus any
// explicit dependencies (CoreTaskArgs::set_dependencies). Operand tensors come first in CoreTaskArgs:
//
//   kind     operands (in order, direction the helpers use)        desc fields used
//   NOTIFY   signal (INOUT, INT32 window tensor)                    peer, offsets, value, op (CommNotifyOp)
//   WAIT     signal (INOUT, INT32 window tensor)                    offsets, value (expected), op (CommWaitCmp)
//   COPY     dst (INOUT or OUTPUT_EXISTING), src (INPUT)           dst_rank, src_rank, op (CommAtomic)
//   BARRIER  signal (INOUT, INT32 window tensor of shape [nranks, 1] or [nranks])
//
// Any further tensors are ordering-only (the task reads / writes nothing of them): pass a payload window as
// INOUT to a WAIT so the kernels that read the payload afterwards depend on the wait, or as INPUT to a
// NOTIFY so the notify waits for the kernel that wrote it.
//
// Semantics:
// - NOTIFY writes `value` into the cell at `offsets` of rank `peer`'s copy of the signal: a release store
//   (Set) or an atomic fetch-add (AtomicAdd). Everything the tasks it depends on wrote is visible to a rank
//   that observes the cell (release/acquire), so "store payload, notify; wait, load payload" is correct.
// - WAIT polls the cell at `offsets` of this rank's copy (acquire loads) until it is == (Eq) or >= (Ge)
//   `value`. Waiting does not occupy a core. After `timeout_ms` (0: the comm context's wait timeout) the
//   run fails with PTO_SIM_COMM_TIMEOUT naming the rank, the task, the cell, the expected and the last value.
// - COPY copies src to dst element by element in row-major order of the two views (same dtype and element
//   count, any strides). `dst_rank` / `src_rank` = COMM_LOCAL (-1) uses the tensor as given; a rank number
//   addresses that rank's copy (the tensor must then lie in this rank's region of the arena). With
//   CommAtomic::ADD / MAX / MIN / MUL each destination element is atomically combined (f32, f16, bf16, i32,
//   i16, i8; f16/bf16 are computed in f32 and rounded to nearest even).
// - BARRIER: every rank atomically adds 1 to row `rank` of every rank's signal, then waits until every row
//   of its own copy is >= its own row. The counters only grow, so one signal serves any number of
//   barriers (generation counting) as long as every rank passes every barrier; zero it only between runs.
//
// Program order: a kernel split at its comm ops keeps its order when every segment (kernel or comm task)
// depends on the one before it: CommOrder::deps for comm tasks, CoreTaskArgs::set_dependencies (or
// CoreTaskArgsWithDeps::add_dep) for kernel segments, with the task ids the submissions return.
//
// Collectives (rt_comm_allreduce, ..., at the end) are compositions of these tasks; each returns the id of
// its last task and needs a barrier signal with one INT32 cell per rank.
//
// Errors (bad operands, no comm context) are thrown at submission as std::exception with a clear message.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <stdexcept>
#include <string>

#include "pto_orchestration_api.h"

#define PTO_SIM_COMM_API_VERSION 1

constexpr int32_t COMM_LOCAL = -1;

enum class CommKind : int32_t { NOTIFY = 1, WAIT = 2, COPY = 3, BARRIER = 4 };
enum class CommNotifyOp : int32_t { SET = 0, ATOMIC_ADD = 1 };
enum class CommWaitCmp : int32_t { EQ = 0, GE = 1 };
// How COPY combines into dst: NONE stores; ADD (upstream AtomicType::Add) and MAX / MIN / MUL (what the
// collective helpers below reduce with) update each element atomically.
enum class CommAtomic : int32_t { NONE = 0, ADD = 1, MAX = 2, MIN = 3, MUL = 4 };

// One built-in comm task (see the table above for which fields each kind reads).
struct CommTaskDesc {
    CommKind kind = CommKind::NOTIFY;
    int32_t op = 0;          // CommNotifyOp (NOTIFY), CommWaitCmp (WAIT), CommAtomic (COPY)
    int32_t peer = 0;        // NOTIFY: the rank whose cell is written
    int32_t value = 0;       // NOTIFY: value written / added; WAIT: expected value
    int32_t dst_rank = COMM_LOCAL;  // COPY
    int32_t src_rank = COMM_LOCAL;  // COPY
    uint32_t ndims = 0;      // NOTIFY/WAIT: number of entries of `offsets` (must equal the signal's ndims)
    uint32_t offsets[MAX_TENSOR_DIMS] = {};  // NOTIFY/WAIT: element index of the cell inside the signal view
    int64_t timeout_ms = 0;  // WAIT/BARRIER: 0 = the comm context's wait timeout
};

// This chip process's place in the distributed run.
struct PTO2CommInfo {
    int32_t rank;
    int32_t nranks;
    uint64_t arena_base;
    uint64_t region_bytes;
};

// ---- context ------------------------------------------------------------------------------------

inline PTO2CommInfo rt_comm_info() {
    PTO2Runtime* rt = framework_current_runtime();
    PTO2CommInfo info{};
    if (!rt->ops->comm_info(rt, &info))
        throw std::logic_error(
            "rt_comm_rank/rt_comm_nranks: this program runs without a comm context; distributed programs run "
            "in rank processes (pypto.runtime.distributed.run_ranks) on a ChipWorker given a CommContext");
    return info;
}

inline int32_t rt_comm_rank() { return rt_comm_info().rank; }
inline int32_t rt_comm_nranks() { return rt_comm_info().nranks; }

// ---- submission ---------------------------------------------------------------------------------

// Submits a built-in comm task; the operand tensors come first in `args` (see the table above).
inline PTO2TaskId rt_submit_comm_task(const CommTaskDesc& desc, const CoreTaskArgs& args) {
    PTO2Runtime* rt = framework_current_runtime();
    return rt->ops->submit_comm_task(rt, desc, args);
}

// Ordering-only extras for the helpers below: tensors read before / written after, and task ids.
struct CommOrder {
    std::initializer_list<ChipTensor> inputs{};  // added as INPUT (the task runs after their producers)
    std::initializer_list<ChipTensor> inouts{};  // added as INOUT (later readers run after the task)
    std::initializer_list<PTO2TaskId> deps{};    // explicit dependencies
};

namespace pto_comm_detail {
inline void add_order(CoreTaskArgsWithDeps<16>& a, const CommOrder& o) {
    for (const ChipTensor& t : o.inputs) a.add_input(t);
    for (const ChipTensor& t : o.inouts) a.add_inout(t);
    for (PTO2TaskId id : o.deps) a.add_dep(id);
}
inline void set_cell(CommTaskDesc& d, std::initializer_list<uint32_t> offsets) {
    if (offsets.size() > MAX_TENSOR_DIMS) throw std::invalid_argument("comm task: more than 5 offsets");
    d.ndims = uint32_t(offsets.size());
    uint32_t i = 0;
    for (uint32_t o : offsets) d.offsets[i++] = o;
}
// NOTIFY, WAIT and BARRIER: the signal window is the task's one operand (inout), then the ordering tensors.
inline PTO2TaskId submit_on_signal(const CommTaskDesc& d, const ChipTensor& signal, const CommOrder& order) {
    CoreTaskArgsWithDeps<16> a;
    a.add_inout(signal);
    add_order(a, order);
    return rt_submit_comm_task(d, a);
}
}  // namespace pto_comm_detail

inline PTO2TaskId rt_comm_notify(const ChipTensor& signal, int32_t peer, std::initializer_list<uint32_t> offsets,
                                 int32_t value, CommNotifyOp op, const CommOrder& order = {}) {
    CommTaskDesc d;
    d.kind = CommKind::NOTIFY;
    d.op = int32_t(op);
    d.peer = peer;
    d.value = value;
    pto_comm_detail::set_cell(d, offsets);
    return pto_comm_detail::submit_on_signal(d, signal, order);
}

inline PTO2TaskId rt_comm_wait(const ChipTensor& signal, std::initializer_list<uint32_t> offsets, int32_t expected,
                               CommWaitCmp cmp, const CommOrder& order = {}, int64_t timeout_ms = 0) {
    CommTaskDesc d;
    d.kind = CommKind::WAIT;
    d.op = int32_t(cmp);
    d.value = expected;
    d.timeout_ms = timeout_ms;
    pto_comm_detail::set_cell(d, offsets);
    return pto_comm_detail::submit_on_signal(d, signal, order);
}

// dst (on dst_rank, or local) <- src (on src_rank, or local); atomic ADD accumulates into dst.
inline PTO2TaskId rt_comm_copy(const ChipTensor& dst, int32_t dst_rank, const ChipTensor& src, int32_t src_rank,
                               CommAtomic atomic = CommAtomic::NONE, const CommOrder& order = {}) {
    CommTaskDesc d;
    d.kind = CommKind::COPY;
    d.op = int32_t(atomic);
    d.dst_rank = dst_rank;
    d.src_rank = src_rank;
    CoreTaskArgsWithDeps<16> a;
    a.add_inout(dst);
    a.add_input(src);
    pto_comm_detail::add_order(a, order);
    return rt_submit_comm_task(d, a);
}

inline PTO2TaskId rt_comm_barrier(const ChipTensor& signal, const CommOrder& order = {}, int64_t timeout_ms = 0) {
    CommTaskDesc d;
    d.kind = CommKind::BARRIER;
    d.timeout_ms = timeout_ms;
    return pto_comm_detail::submit_on_signal(d, signal, order);
}

// ---- collectives (compositions of the tasks above) ---------------------------------------------
//
// Every rank must call the same collective with the same shapes. `signal` is a barrier signal (one INT32
// cell per rank); one signal serves any number of collectives and barriers (generation counting).
// Window tensors are this rank's copies; row views select dim 0 (which must have nranks entries).

namespace pto_comm_detail {
inline ChipTensor row(const ChipTensor& t, int32_t i) {
    if (t.ndims < 1) throw std::invalid_argument("collective: a tensor with at least one dim is needed");
    uint32_t shapes[MAX_TENSOR_DIMS], offs[MAX_TENSOR_DIMS] = {};
    for (uint32_t d = 0; d < t.ndims; ++d) shapes[d] = t.shapes[d];
    shapes[0] = 1;
    offs[0] = uint32_t(i);
    return t.view(shapes, offs);
}
inline void check_rows(const ChipTensor& t, int32_t n, const char* what) {
    if (t.ndims < 1 || t.shapes[0] != uint32_t(n))
        throw std::invalid_argument(std::string(what) + ": dim 0 must have one row per rank (" + std::to_string(n) +
                                    "), got " + (t.ndims ? std::to_string(t.shapes[0]) : std::string("a 0-d tensor")));
}
inline const ChipTensor& scratch_like(const ChipTensor& t) {
    TensorCreateInfo ci(t.shapes, t.ndims, t.data_type());
    return alloc_tensors(ci).get_ref(0);
}
// acc <- t on this rank (op) t on every other rank, between two barriers; then t <- acc.
inline PTO2TaskId reduce_into(const ChipTensor& t, const ChipTensor& signal, CommAtomic op, int32_t me, int32_t n) {
    const ChipTensor& acc = scratch_like(t);
    rt_comm_barrier(signal, CommOrder{{}, {t}});  // every rank's input is ready
    rt_comm_copy(acc, COMM_LOCAL, t, COMM_LOCAL);
    for (int32_t p = 1; p < n; ++p) rt_comm_copy(acc, COMM_LOCAL, t, (me + p) % n, op);
    const PTO2TaskId read = rt_comm_barrier(signal, CommOrder{{acc}});  // every rank has read every input
    return rt_comm_copy(t, COMM_LOCAL, acc, COMM_LOCAL, CommAtomic::NONE, CommOrder{{}, {}, {read}});
}
}  // namespace pto_comm_detail

// data (a window tensor) <- op over every rank's data; op is ADD (Sum), MAX, MIN or MUL (Prod).
inline PTO2TaskId rt_comm_allreduce(const ChipTensor& data, const ChipTensor& signal, CommAtomic op) {
    if (op == CommAtomic::NONE) throw std::invalid_argument("rt_comm_allreduce: op must be ADD, MAX, MIN or MUL");
    const PTO2CommInfo c = rt_comm_info();
    return pto_comm_detail::reduce_into(data, signal, op, c.rank, c.nranks);
}

// data <- root's data on every rank.
inline PTO2TaskId rt_comm_broadcast(const ChipTensor& data, const ChipTensor& signal, int32_t root) {
    const PTO2CommInfo c = rt_comm_info();
    if (root < 0 || root >= c.nranks)
        throw std::invalid_argument("rt_comm_broadcast: root " + std::to_string(root) + " is not a rank of this run");
    rt_comm_barrier(signal, CommOrder{{}, {data}});  // root's data is ready
    if (c.rank != root) rt_comm_copy(data, COMM_LOCAL, data, root);
    return rt_comm_barrier(signal, CommOrder{{}, {data}});  // later writers of root's data wait for this
}

// data[src] <- stage of rank src, on every rank (push; stage and data are different windows).
inline PTO2TaskId rt_comm_allgather(const ChipTensor& stage, const ChipTensor& data, const ChipTensor& signal) {
    const PTO2CommInfo c = rt_comm_info();
    pto_comm_detail::check_rows(data, c.nranks, "rt_comm_allgather: data");
    rt_comm_barrier(signal, CommOrder{{}, {stage, data}});
    const ChipTensor mine = pto_comm_detail::row(data, c.rank);
    for (int32_t p = 0; p < c.nranks; ++p) rt_comm_copy(mine, (c.rank + p) % c.nranks, stage, COMM_LOCAL);
    return rt_comm_barrier(signal, CommOrder{{}, {data, stage}});  // after every push (they read stage)
}

// data[rank] <- op over every rank's data[rank] (each rank staged all nranks rows of data).
inline PTO2TaskId rt_comm_reduce_scatter(const ChipTensor& data, const ChipTensor& signal, CommAtomic op) {
    if (op == CommAtomic::NONE) throw std::invalid_argument("rt_comm_reduce_scatter: op must be ADD, MAX, MIN or MUL");
    const PTO2CommInfo c = rt_comm_info();
    pto_comm_detail::check_rows(data, c.nranks, "rt_comm_reduce_scatter: data");
    return pto_comm_detail::reduce_into(pto_comm_detail::row(data, c.rank), signal, op, c.rank, c.nranks);
}

// data[src] <- stage[rank] of rank src, on every rank (stage and data are different windows).
inline PTO2TaskId rt_comm_all_to_all(const ChipTensor& stage, const ChipTensor& data, const ChipTensor& signal) {
    const PTO2CommInfo c = rt_comm_info();
    pto_comm_detail::check_rows(stage, c.nranks, "rt_comm_all_to_all: stage");
    pto_comm_detail::check_rows(data, c.nranks, "rt_comm_all_to_all: data");
    rt_comm_barrier(signal, CommOrder{{}, {stage, data}});
    const ChipTensor mine = pto_comm_detail::row(data, c.rank);
    for (int32_t p = 0; p < c.nranks; ++p) {
        const int32_t q = (c.rank + p) % c.nranks;
        rt_comm_copy(mine, q, pto_comm_detail::row(stage, q), COMM_LOCAL);
    }
    return rt_comm_barrier(signal, CommOrder{{}, {data, stage}});  // after every push (they read stage)
}
