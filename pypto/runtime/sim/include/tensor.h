// ChipTensor: the tensor descriptor that orchestration code builds and kernels read.
//
// Layout is ABI: two 64-byte cache lines, fields in this exact order. Kernels compute a data pointer as
// (T*)buffer.addr + start_offset; shapes/strides are in elements.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>

#include "data_type.h"

#ifndef __gm__
#define __gm__
#endif

constexpr uint32_t MAX_TENSOR_DIMS = 5;
constexpr uint64_t CHIP_TENSOR_NO_OWNER = ~0ULL;

enum class AddressSpace : uint8_t { HOST = 0, DEVICE = 1 };

struct ChipBuffer {
    uint64_t addr;
    uint64_t size;  // bytes
};

struct alignas(64) ChipTensor {
    // cache line 1
    ChipBuffer buffer;
    uint64_t owner_task_id;
    uint64_t start_offset;  // elements
    int32_t version;
    uint32_t ndims;
    uint8_t dtype;
    bool manual_dep;
    bool is_contiguous;
    uint8_t address_space;
    uint32_t shapes[MAX_TENSOR_DIMS];
    // cache line 2
    uint64_t extent_elem_cache;
    uint32_t strides[MAX_TENSOR_DIMS];
    uint8_t reserved_[36];

    const ChipTensor& ref() const { return *this; }
    DataType data_type() const { return static_cast<DataType>(dtype); }
    size_t element_size() const { return get_element_size(data_type()); }

    uint64_t numel() const {
        uint64_t n = 1;
        for (uint32_t i = 0; i < ndims; ++i) n *= shapes[i];
        return n;
    }

    // One past the last element touched, relative to start_offset (0 for an empty view).
    uint64_t extent() const {
        uint64_t e = 1;
        for (uint32_t i = 0; i < ndims; ++i) {
            if (shapes[i] == 0) return 0;
            e += uint64_t(shapes[i] - 1) * strides[i];
        }
        return e;
    }

    template <typename T>
    T* data() const {
        return reinterpret_cast<T*>(buffer.addr) + start_offset;
    }

    void refresh() {
        uint64_t expect = 1;
        is_contiguous = true;
        for (int i = int(ndims) - 1; i >= 0; --i) {
            if (shapes[i] != 1 && strides[i] != expect) is_contiguous = false;
            expect *= shapes[i];
        }
        extent_elem_cache = extent();
    }

    void set_row_major_strides() {
        uint32_t s = 1;
        for (int i = int(ndims) - 1; i >= 0; --i) {
            strides[i] = s;
            s *= shapes[i];
        }
        refresh();
    }

    // Elements of the view that lie inside its buffer, from start_offset: what accesses are checked
    // against. A view may reach past its buffer (see view()); reading or writing that part is a fault.
    uint64_t reach() const {
        const uint64_t esize = element_size();
        const uint64_t elems = esize ? buffer.size / esize : 0;
        if (start_offset >= elems) return 0;
        const uint64_t e = extent_elem_cache;
        return e < elems - start_offset ? e : elems - start_offset;
    }

    // Zero-copy sub-window: new shapes, per-dimension element offsets. As in upstream's release runtime,
    // the window may run past the parent's extent along the first dimension (a view is metadata:
    // programs slice a fixed-size window at a data-dependent offset and touch only its first rows);
    // accesses are checked against the buffer instead (reach(), element_ptr, the kernels' GM guard).
    // Past any other dimension the window would alias the next rows: an error, unless it is empty.
    ChipTensor view(const uint32_t new_shapes[], const uint32_t offsets[]) const {
        ChipTensor t = *this;
        bool empty = false;
        for (uint32_t i = 0; i < ndims; ++i) empty = empty || new_shapes[i] == 0;
        for (uint32_t i = 0; i < ndims; ++i) {
            if (i > 0 && !empty && uint64_t(offsets[i]) + new_shapes[i] > shapes[i])
                throw std::out_of_range("ChipTensor::view: dim " + std::to_string(i) + " window [" +
                                        std::to_string(offsets[i]) + ", +" + std::to_string(new_shapes[i]) +
                                        ") exceeds extent " + std::to_string(shapes[i]));
            t.start_offset += empty ? 0 : uint64_t(offsets[i]) * strides[i];
            t.shapes[i] = new_shapes[i];
        }
        t.refresh();
        return t;
    }

    ChipTensor view(const uint64_t new_shapes[], const uint64_t offsets[]) const {
        uint32_t s[MAX_TENSOR_DIMS], o[MAX_TENSOR_DIMS];
        for (uint32_t i = 0; i < ndims; ++i) {
            s[i] = uint32_t(new_shapes[i]);
            o[i] = uint32_t(offsets[i]);
        }
        return view(s, o);
    }

    ChipTensor transpose(uint32_t a, uint32_t b) const {
        check_dim(a, "transpose");
        check_dim(b, "transpose");
        ChipTensor t = *this;
        std::swap(t.shapes[a], t.shapes[b]);
        std::swap(t.strides[a], t.strides[b]);
        t.refresh();
        return t;
    }

    ChipTensor permute(const uint32_t order[]) const {
        ChipTensor t = *this;
        for (uint32_t i = 0; i < ndims; ++i) {
            check_dim(order[i], "permute");
            t.shapes[i] = shapes[order[i]];
            t.strides[i] = strides[order[i]];
        }
        t.refresh();
        return t;
    }

    // Contiguous tensors only; the element count must not change.
    ChipTensor reshape(const uint32_t new_shapes[], uint32_t n) const {
        if (!is_contiguous) throw std::invalid_argument("ChipTensor::reshape needs a contiguous tensor");
        if (n == 0 || n > MAX_TENSOR_DIMS) throw std::invalid_argument("ChipTensor::reshape: bad ndims");
        ChipTensor t = *this;
        t.ndims = n;
        for (uint32_t i = 0; i < n; ++i) t.shapes[i] = new_shapes[i];
        if (t.numel() != numel()) throw std::invalid_argument("ChipTensor::reshape changes the element count");
        t.set_row_major_strides();
        return t;
    }

    ChipTensor reshape(const uint64_t new_shapes[], uint32_t n) const {
        uint32_t s[MAX_TENSOR_DIMS] = {};
        for (uint32_t i = 0; i < n && i < MAX_TENSOR_DIMS; ++i) s[i] = uint32_t(new_shapes[i]);
        return reshape(s, n);
    }

    ChipTensor slice(uint32_t dim, uint32_t start, uint32_t end, uint32_t step = 1) const {
        check_dim(dim, "slice");
        if (step == 0 || start > end || end > shapes[dim])
            throw std::out_of_range("ChipTensor::slice: bad range on dim " + std::to_string(dim));
        ChipTensor t = *this;
        t.start_offset += uint64_t(start) * strides[dim];
        t.shapes[dim] = (end - start + step - 1) / step;
        t.strides[dim] = strides[dim] * step;
        t.refresh();
        return t;
    }

    // Build a descriptor for raw memory (row-major, contiguous).
    static ChipTensor make(void* ptr, const uint32_t shapes_in[], uint32_t n, DataType dt) {
        ChipTensor t{};
        t.buffer.addr = reinterpret_cast<uint64_t>(ptr);
        t.owner_task_id = CHIP_TENSOR_NO_OWNER;
        t.ndims = n;
        t.dtype = static_cast<uint8_t>(dt);
        t.address_space = static_cast<uint8_t>(AddressSpace::DEVICE);
        for (uint32_t i = 0; i < n; ++i) t.shapes[i] = shapes_in[i];
        t.set_row_major_strides();
        t.buffer.size = t.numel() * get_element_size(dt);
        return t;
    }

private:
    void check_dim(uint32_t d, const char* op) const {
        if (d >= ndims)
            throw std::out_of_range(std::string("ChipTensor::") + op + ": dim " + std::to_string(d) +
                                    " out of range for ndims " + std::to_string(ndims));
    }
};

static_assert(sizeof(ChipTensor) == 128, "ChipTensor must be two cache lines");
static_assert(offsetof(ChipTensor, start_offset) == 24, "ChipTensor layout");
static_assert(offsetof(ChipTensor, shapes) == 44, "ChipTensor layout");
static_assert(offsetof(ChipTensor, extent_elem_cache) == 64, "ChipTensor layout");
static_assert(offsetof(ChipTensor, strides) == 72, "ChipTensor layout");

inline ChipTensor make_tensor_external(void* ptr, const uint32_t shapes[], uint32_t ndims, DataType dt) {
    return ChipTensor::make(ptr, shapes, ndims, dt);
}
