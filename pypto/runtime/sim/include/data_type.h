// Element data types shared by orchestration code, kernels and the simulation runtime.
#pragma once

#include <cstddef>
#include <cstdint>

// Order and element sizes are part of the ABI (ChipTensor::dtype stores the enum value).
enum class DataType : uint8_t {
    FLOAT32 = 0,
    FLOAT16,
    INT32,
    INT16,
    INT8,
    UINT8,
    BFLOAT16,
    INT64,
    UINT64,
    UINT16,
    UINT32,
    BOOL,
    FP8E4M3FN,
    FP8E8M0,
    FP4E2M1,
    DATA_TYPE_COUNT,
};

// Bytes per element; FP4E2M1 packs two values in one byte and reports 1.
inline constexpr size_t get_element_size(DataType dt) {
    constexpr uint8_t kSizes[] = {4, 2, 4, 2, 1, 1, 2, 8, 8, 2, 4, 1, 1, 1, 1};
    return static_cast<uint8_t>(dt) < static_cast<uint8_t>(DataType::DATA_TYPE_COUNT)
               ? kSizes[static_cast<uint8_t>(dt)]
               : 0;
}

inline const char* get_dtype_name(DataType dt) {
    static const char* const kNames[] = {"FLOAT32", "FLOAT16", "INT32",  "INT16",     "INT8",
                                         "UINT8",   "BFLOAT16", "INT64", "UINT64",    "UINT16",
                                         "UINT32",  "BOOL",    "FP8E4M3FN", "FP8E8M0", "FP4E2M1"};
    return static_cast<uint8_t>(dt) < static_cast<uint8_t>(DataType::DATA_TYPE_COUNT)
               ? kNames[static_cast<uint8_t>(dt)]
               : "UNKNOWN";
}
