// Orchestration API: what generated orchestration C++ includes and calls.
//
// Every runtime service goes through the PTO2Runtime ops table that the simulation runtime installs with
// framework_bind_runtime() before it calls aicpu_orchestration_entry(). Errors are reported by throwing
// std::exception; the runtime catches them and fails the run with the message.
#pragma once

#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>

#include "pto_task_args.h"
#include "tensor.h"

#ifndef SIMPLER_ORCH_PROFILING
#define SIMPLER_ORCH_PROFILING 0
#endif

// 2: the ops table gained comm_info and submit_comm_task (pto_comm_api.h); the runtime refuses other versions.
#define PTO_SIM_ORCH_ABI_VERSION 2

struct PTO2OrchestrationConfig {
    uint32_t expected_arg_count;
};

// Arguments of the orchestration entry: tensors in parameter order, then scalars.
struct ChipTaskArgs {
    const ChipTensor* tensors;
    uint32_t tensor_count;
    const uint64_t* scalars;
    uint32_t scalar_count;

    const ChipTensor& tensor(uint32_t i) const {
        if (i >= tensor_count)
            throw std::out_of_range("orch_args.tensor(" + std::to_string(i) + "): only " +
                                    std::to_string(tensor_count) + " tensor argument(s) were passed");
        return tensors[i];
    }
    uint64_t scalar(uint32_t i) const {
        if (i >= scalar_count)
            throw std::out_of_range("orch_args.scalar(" + std::to_string(i) + "): only " +
                                    std::to_string(scalar_count) + " scalar argument(s) were passed");
        return scalars[i];
    }
    uint32_t tensor_num() const { return tensor_count; }
    uint32_t scalar_num() const { return scalar_count; }
};

enum PTO2LogLevel : int { PTO2_LOG_ERROR = 0, PTO2_LOG_WARN, PTO2_LOG_INFO, PTO2_LOG_DEBUG, PTO2_LOG_TIMING };

struct PTO2Runtime;
struct CommTaskDesc;
struct PTO2CommInfo;

struct PTO2RuntimeOps {
    TaskOutputTensors (*submit_task)(PTO2Runtime*, const MixedKernels&, const CoreTaskArgs&);
    void (*scope_begin)(PTO2Runtime*, PTO2ScopeMode);
    void (*scope_end)(PTO2Runtime*);
    void (*orchestration_done)(PTO2Runtime*);
    bool (*is_fatal)(PTO2Runtime*);
    void (*report_fatal)(PTO2Runtime*, int32_t code, const char* msg);
    void (*log_error)(PTO2Runtime*, const char* msg);
    void (*log_warn)(PTO2Runtime*, const char* msg);
    void (*log_timing)(PTO2Runtime*, const char* msg);
    void (*log_info)(PTO2Runtime*, const char* msg);
    void (*log_debug)(PTO2Runtime*, const char* msg);
    void (*get_tensor_data)(PTO2Runtime*, const ChipTensor&, uint32_t ndims, const uint32_t idx[], void* out);
    void (*set_tensor_data)(PTO2Runtime*, const ChipTensor&, uint32_t ndims, const uint32_t idx[], const void* in);
    TaskOutputTensors (*alloc_tensors)(PTO2Runtime*, const TensorCreateInfo* infos, uint32_t n);
    PTO2TaskId (*submit_dummy_task)(PTO2Runtime*, const CoreTaskArgs&);
    int32_t (*available_cluster_count)(PTO2Runtime*);
    int32_t (*available_aiv_count)(PTO2Runtime*);
    void (*scope_set_site)(PTO2Runtime*, const char* file, int32_t line);
    // ABI 2 (pto_comm_api.h): false when the run has no comm context.
    bool (*comm_info)(PTO2Runtime*, PTO2CommInfo* out);
    PTO2TaskId (*submit_comm_task)(PTO2Runtime*, const CommTaskDesc&, const CoreTaskArgs&);
};

struct PTO2Runtime {
    const PTO2RuntimeOps* ops;
    PTO2ScopeMode pending_scope_mode;
};

inline PTO2Runtime*& framework_runtime_slot() {
    static thread_local PTO2Runtime* rt = nullptr;
    return rt;
}

inline PTO2Runtime* framework_current_runtime() {
    PTO2Runtime* rt = framework_runtime_slot();
    if (rt == nullptr) throw std::logic_error("orchestration API used outside a runtime-driven run");
    return rt;
}

extern "C" __attribute__((weak, visibility("default"))) void framework_bind_runtime(PTO2Runtime* rt) {
    framework_runtime_slot() = rt;
}

extern "C" __attribute__((weak, visibility("default"))) int pto_sim_orch_abi_version() {
    return PTO_SIM_ORCH_ABI_VERSION;
}

// ---- submission ---------------------------------------------------------------------------------

inline TaskOutputTensors rt_submit_task(const MixedKernels& kernels, const CoreTaskArgs& args) {
    PTO2Runtime* rt = framework_current_runtime();
    return rt->ops->submit_task(rt, kernels, args);
}

inline TaskOutputTensors rt_submit_aic_task(int32_t kernel_id, const CoreTaskArgs& args) {
    return rt_submit_task(MixedKernels{kernel_id, INVALID_KERNEL_ID, INVALID_KERNEL_ID}, args);
}

inline TaskOutputTensors rt_submit_aiv_task(int32_t kernel_id, const CoreTaskArgs& args) {
    return rt_submit_task(MixedKernels{INVALID_KERNEL_ID, kernel_id, INVALID_KERNEL_ID}, args);
}

inline PTO2TaskId rt_submit_dummy_task(const CoreTaskArgs& args) {
    PTO2Runtime* rt = framework_current_runtime();
    return rt->ops->submit_dummy_task(rt, args);
}

template <typename... Infos>
inline TaskOutputTensors alloc_tensors(const Infos&... infos) {
    static_assert(sizeof...(Infos) > 0, "alloc_tensors needs at least one TensorCreateInfo");
    const TensorCreateInfo arr[] = {infos...};
    PTO2Runtime* rt = framework_current_runtime();
    return rt->ops->alloc_tensors(rt, arr, uint32_t(sizeof...(Infos)));
}

inline int32_t rt_available_cluster_count() {
    PTO2Runtime* rt = framework_current_runtime();
    return rt->ops->available_cluster_count(rt);
}

inline int32_t rt_available_aiv_count() {
    PTO2Runtime* rt = framework_current_runtime();
    return rt->ops->available_aiv_count(rt);
}

inline bool rt_is_fatal() {
    PTO2Runtime* rt = framework_current_runtime();
    return rt->ops->is_fatal(rt);
}

inline void rt_report_fatal(int32_t code, const char* msg) {
    PTO2Runtime* rt = framework_current_runtime();
    rt->ops->report_fatal(rt, code, msg);
}

// ---- scopes -------------------------------------------------------------------------------------

inline void rt_scope_begin(PTO2ScopeMode mode = PTO2ScopeMode::AUTO) {
    PTO2Runtime* rt = framework_current_runtime();
    rt->ops->scope_begin(rt, mode);
}

inline void rt_scope_end() {
    PTO2Runtime* rt = framework_current_runtime();
    rt->ops->scope_end(rt);
}

class PTO2ScopeGuard {
public:
    explicit PTO2ScopeGuard(PTO2ScopeMode mode = PTO2ScopeMode::AUTO) { rt_scope_begin(mode); }
    // PTO2_SCOPE passes its source site (scope statistics name scopes by it).
    PTO2ScopeGuard(const char* file, int32_t line, PTO2ScopeMode mode = PTO2ScopeMode::AUTO) {
        PTO2Runtime* rt = framework_current_runtime();
        rt->ops->scope_set_site(rt, file, line);
        rt->ops->scope_begin(rt, mode);
    }
    ~PTO2ScopeGuard() {
        PTO2Runtime* rt = framework_runtime_slot();
        if (rt != nullptr) rt->ops->scope_end(rt);  // scope_end never throws
    }
    PTO2ScopeGuard(const PTO2ScopeGuard&) = delete;
    PTO2ScopeGuard& operator=(const PTO2ScopeGuard&) = delete;
    explicit operator bool() const { return true; }
};

#define PTO2_SCOPE(...) if (PTO2ScopeGuard pto2_scope_guard_{__FILE__, __LINE__, ##__VA_ARGS__})

// ---- tensor element access ----------------------------------------------------------------------

template <typename T, typename I>
inline T get_tensor_data(const ChipTensor& t, uint32_t ndims, const I idx[]) {
    uint32_t u[MAX_TENSOR_DIMS] = {};
    for (uint32_t i = 0; i < ndims && i < MAX_TENSOR_DIMS; ++i) u[i] = uint32_t(idx[i]);
    T out{};
    if (sizeof(T) != t.element_size())
        throw std::invalid_argument("get_tensor_data: sizeof(T) does not match the tensor dtype " +
                                    std::string(get_dtype_name(t.data_type())));
    PTO2Runtime* rt = framework_current_runtime();
    rt->ops->get_tensor_data(rt, t, ndims, u, &out);
    return out;
}

template <typename T, typename I>
inline void set_tensor_data(const ChipTensor& t, uint32_t ndims, const I idx[], T value) {
    uint32_t u[MAX_TENSOR_DIMS] = {};
    for (uint32_t i = 0; i < ndims && i < MAX_TENSOR_DIMS; ++i) u[i] = uint32_t(idx[i]);
    if (sizeof(T) != t.element_size())
        throw std::invalid_argument("set_tensor_data: sizeof(T) does not match the tensor dtype " +
                                    std::string(get_dtype_name(t.data_type())));
    PTO2Runtime* rt = framework_current_runtime();
    rt->ops->set_tensor_data(rt, t, ndims, u, &value);
}

// ---- logging ------------------------------------------------------------------------------------

inline void pto2_log(int level, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
inline void pto2_log(int level, const char* fmt, ...) {
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    PTO2Runtime* rt = framework_runtime_slot();
    if (rt == nullptr) {
        fprintf(stderr, "%s\n", buf);
        return;
    }
    switch (level) {
        case PTO2_LOG_ERROR: rt->ops->log_error(rt, buf); break;
        case PTO2_LOG_WARN: rt->ops->log_warn(rt, buf); break;
        case PTO2_LOG_INFO: rt->ops->log_info(rt, buf); break;
        case PTO2_LOG_TIMING: rt->ops->log_timing(rt, buf); break;
        default: rt->ops->log_debug(rt, buf); break;
    }
}

#define LOG_ERROR(...) pto2_log(PTO2_LOG_ERROR, __VA_ARGS__)
#define LOG_WARN(...) pto2_log(PTO2_LOG_WARN, __VA_ARGS__)
#define LOG_INFO(...) pto2_log(PTO2_LOG_INFO, __VA_ARGS__)
#define LOG_DEBUG(...) pto2_log(PTO2_LOG_DEBUG, __VA_ARGS__)
#define LOG_TIMING(...) pto2_log(PTO2_LOG_TIMING, __VA_ARGS__)

inline uint64_t rt_orch_profile_now() { return 0; }
inline void rt_orch_profile_add_dynamic_dep_vector(...) {}

#include "pto_comm_api.h"  // the comm tasks of distributed programs (needs the definitions above)
