// Task descriptions passed from orchestration code to the runtime: ids, kernels, arguments, outputs.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "tensor.h"

constexpr uint32_t CORE_MAX_TENSOR_ARGS = 32;
constexpr uint32_t CORE_MAX_SCALAR_ARGS = 16;
constexpr int32_t INVALID_KERNEL_ID = -1;

// (ring_id << 32) | local_id.
struct PTO2TaskId {
    uint64_t raw;

    static constexpr PTO2TaskId invalid() { return PTO2TaskId{~0ULL}; }
    constexpr bool is_valid() const { return raw != ~0ULL; }
    constexpr uint32_t ring_id() const { return uint32_t(raw >> 32); }
    constexpr uint32_t local_id() const { return uint32_t(raw); }
    constexpr bool operator==(const PTO2TaskId& o) const { return raw == o.raw; }
    constexpr bool operator!=(const PTO2TaskId& o) const { return raw != o.raw; }
};

enum class PTO2ScopeMode : uint8_t { AUTO = 0, MANUAL = 1 };

struct MixedKernels {
    int32_t aic_kernel_id;
    int32_t aiv0_kernel_id;
    int32_t aiv1_kernel_id;
};

enum class TensorArgType : uint8_t { INPUT = 0, OUTPUT, INOUT, OUTPUT_EXISTING, NO_DEP };

template <typename T>
inline uint64_t to_u64(T v) {
    static_assert(sizeof(T) <= 8 && std::is_trivially_copyable<T>::value, "to_u64: scalar of at most 8 bytes");
    uint64_t u = 0;
    std::memcpy(&u, &v, sizeof(T));
    return u;
}

template <typename T>
inline T from_u64(uint64_t u) {
    static_assert(sizeof(T) <= 8 && std::is_trivially_copyable<T>::value, "from_u64: scalar of at most 8 bytes");
    T v;
    std::memcpy(&v, &u, sizeof(T));
    return v;
}

// Shape and dtype of a runtime-allocated tensor.
struct TensorCreateInfo {
    uint32_t shapes[MAX_TENSOR_DIMS];
    uint32_t ndims;
    DataType dtype;
    bool has_initial_value;
    uint64_t initial_value;  // element bit pattern

    template <typename S>
    TensorCreateInfo(const S shapes_in[], uint32_t n, DataType dt)
        : shapes{}, ndims(n), dtype(dt), has_initial_value(false), initial_value(0) {
        if (n == 0 || n > MAX_TENSOR_DIMS)
            throw std::invalid_argument("TensorCreateInfo: ndims must be in [1, 5], got " + std::to_string(n));
        for (uint32_t i = 0; i < n; ++i) shapes[i] = uint32_t(shapes_in[i]);
    }

    template <typename T>
    TensorCreateInfo& set_initial_value(T v) {
        has_initial_value = true;
        initial_value = to_u64(v);
        return *this;
    }
};

struct LaunchSpec {
    int16_t block_num = 1;
    bool require_sync_start = false;

    void set_block_num(int32_t n) {
        if (n < 1 || n > INT16_MAX) throw std::invalid_argument("launch_spec: block_num must be >= 1");
        block_num = int16_t(n);
    }
    void set_core_num(int32_t n) { set_block_num(n); }
    void set_require_sync_start(bool b) { require_sync_start = b; }
};

enum class PredicateOp : uint8_t { EQ = 0, NE, LT, LE, GT, GE };

struct CoreTaskPredicateOperand {
    const ChipTensor* tensor = nullptr;
    uint32_t ndims = 0;
    uint32_t indices[MAX_TENSOR_DIMS] = {};
};

struct CoreTaskPredicate {
    CoreTaskPredicateOperand operand;
    PredicateOp op = PredicateOp::NE;
    int64_t target = 0;
};

// Arguments of one task: tensors first, then scalars; plus optional explicit dependencies.
struct CoreTaskArgs {
    ChipTensor tensors[CORE_MAX_TENSOR_ARGS];
    TensorArgType kinds[CORE_MAX_TENSOR_ARGS];
    bool has_initial[CORE_MAX_TENSOR_ARGS];        // OUTPUT (TensorCreateInfo) slots only
    uint64_t initial_values[CORE_MAX_TENSOR_ARGS];  // OUTPUT (TensorCreateInfo) slots only
    uint64_t scalars[CORE_MAX_SCALAR_ARGS];
    uint32_t tensor_count = 0;
    uint32_t scalar_count = 0;
    const PTO2TaskId* deps = nullptr;  // must stay valid until the task is submitted
    uint32_t dep_count = 0;
    bool deps_set = false;
    bool has_predicate = false;
    bool allow_early_resolve = false;
    int32_t timing_slot = -1;
    uint32_t dump_mask = 0;  // tensor slots marked by dump() (selective argument dump)
    LaunchSpec launch_spec;
    CoreTaskPredicate predicate;

    CoreTaskArgs() {}

    void add_input(const ChipTensor& t) { push(t, TensorArgType::INPUT); }
    void add_inout(const ChipTensor& t) { push(t, TensorArgType::INOUT); }
    void add_output(const ChipTensor& t) { push(t, TensorArgType::OUTPUT_EXISTING); }
    void add_no_dep(const ChipTensor& t) { push(t, TensorArgType::NO_DEP); }

    void add_output(const TensorCreateInfo& ci) {
        ChipTensor t{};
        t.owner_task_id = CHIP_TENSOR_NO_OWNER;
        t.ndims = ci.ndims;
        t.dtype = static_cast<uint8_t>(ci.dtype);
        t.address_space = static_cast<uint8_t>(AddressSpace::DEVICE);
        for (uint32_t i = 0; i < ci.ndims; ++i) t.shapes[i] = ci.shapes[i];
        t.set_row_major_strides();
        t.buffer.size = t.numel() * get_element_size(ci.dtype);
        push(t, TensorArgType::OUTPUT);
        has_initial[tensor_count - 1] = ci.has_initial_value;
        initial_values[tensor_count - 1] = ci.initial_value;
    }

    void add_scalar(uint64_t v) {
        if (scalar_count >= CORE_MAX_SCALAR_ARGS)
            throw std::length_error("CoreTaskArgs: more than " + std::to_string(CORE_MAX_SCALAR_ARGS) + " scalars");
        scalars[scalar_count++] = v;
    }
    template <typename T, typename = typename std::enable_if<!std::is_same<T, uint64_t>::value>::type>
    void add_scalar(T v) {
        add_scalar(to_u64(v));
    }

    void set_dependencies(const PTO2TaskId* ids, uint32_t n) {
        if (deps_set && n != 0) throw std::logic_error("CoreTaskArgs::set_dependencies called twice");
        deps = n ? ids : nullptr;
        dep_count = n;
        deps_set = n != 0;
    }

    void set_predicate(const CoreTaskPredicate& p) {
        predicate = p;
        has_predicate = true;
    }
    void set_allow_early_resolve(bool b) { allow_early_resolve = b; }

    // Selective argument dump (pl.dump_tag / dumps=): marks the slots already added with these views.
    template <typename... Ts>
    void dump(const Ts&... ts) {
        (mark_dump(ts), ...);
    }
    void mark_dump(const ChipTensor& t) {
        bool found = false;
        for (uint32_t i = 0; i < tensor_count; ++i) {
            const ChipTensor& s = tensors[i];
            if (s.buffer.addr == t.buffer.addr && s.start_offset == t.start_offset && s.ndims == t.ndims &&
                std::equal(s.shapes, s.shapes + s.ndims, t.shapes)) {
                dump_mask |= 1u << i;
                found = true;
            }
        }
        if (!found) throw std::invalid_argument("CoreTaskArgs::dump: the tensor is not an argument of this task");
    }
    void set_task_timing_slot(int32_t slot) { timing_slot = slot; }

private:
    void push(const ChipTensor& t, TensorArgType kind) {
        if (scalar_count != 0) throw std::logic_error("CoreTaskArgs: tensors must be added before scalars");
        if (tensor_count >= CORE_MAX_TENSOR_ARGS)
            throw std::length_error("CoreTaskArgs: more than " + std::to_string(CORE_MAX_TENSOR_ARGS) + " tensors");
        tensors[tensor_count] = t;
        kinds[tensor_count] = kind;
        has_initial[tensor_count] = false;
        ++tensor_count;
    }
};

template <uint32_t N>
struct CoreTaskArgsWithDeps : CoreTaskArgs {
    PTO2TaskId dep_storage[N];
    uint32_t dep_fill = 0;

    void add_dep(PTO2TaskId id) {
        if (!id.is_valid()) return;
        if (dep_fill >= N) throw std::length_error("CoreTaskArgsWithDeps: too many dependencies");
        dep_storage[dep_fill++] = id;
        deps = dep_storage;
        dep_count = dep_fill;
        deps_set = true;
    }
};

// Runtime-created outputs of one task; references stay valid until the run ends.
struct TaskOutputTensors {
    PTO2TaskId id = PTO2TaskId::invalid();
    const ChipTensor* outputs = nullptr;
    uint32_t count = 0;

    PTO2TaskId task_id() const { return id; }
    uint32_t size() const { return count; }
    const ChipTensor& get_ref(uint32_t i) const {
        if (i >= count)
            throw std::out_of_range("TaskOutputTensors::get_ref(" + std::to_string(i) + "): task has " +
                                    std::to_string(count) + " runtime-allocated output(s)");
        return outputs[i];
    }
};
