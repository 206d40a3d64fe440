// TensorMap: latest writers per buffer, with the overlap test of the PTO2 runtime.
#include <algorithm>

#include "sim_internal.h"

namespace ptosim {

namespace {

bool row_major_canonical(const ChipTensor& t) {
    if (t.ndims == 0 || t.strides[t.ndims - 1] != 1) return false;
    for (uint32_t i = 0; i + 1 < t.ndims; ++i) {
        if (t.strides[i + 1] == 0 || t.strides[i] % t.strides[i + 1] != 0 || t.strides[i] < t.strides[i + 1])
            return false;
    }
    return true;
}

// Per-dimension start coordinates of a view inside its row-major parent; false if not representable.
bool coords(const ChipTensor& t, uint64_t out[MAX_TENSOR_DIMS]) {
    uint64_t rem = t.start_offset;
    for (uint32_t i = 0; i < t.ndims; ++i) {
        out[i] = rem / t.strides[i];
        rem %= t.strides[i];
        if (i > 0 && out[i] + t.shapes[i] > t.strides[i - 1] / t.strides[i]) return false;
    }
    return true;
}

}  // namespace

Overlap overlap(const ChipTensor& newer, const ChipTensor& older) {
    if (newer.version != older.version) return Overlap::OTHER;
    const uint64_t en = newer.extent(), eo = older.extent();
    if (en == 0 || eo == 0) return Overlap::NONE;
    const uint64_t sn = newer.element_size(), so = older.element_size();
    const uint64_t n0 = newer.start_offset * sn, n1 = (newer.start_offset + en) * sn;
    const uint64_t o0 = older.start_offset * so, o1 = (older.start_offset + eo) * so;
    if (n1 <= o0 || o1 <= n0) return Overlap::NONE;
    if (newer.dtype != older.dtype || newer.ndims != older.ndims || !row_major_canonical(newer)) return Overlap::OTHER;
    for (uint32_t i = 0; i < newer.ndims; ++i)
        if (newer.strides[i] != older.strides[i]) return Overlap::OTHER;
    uint64_t cn[MAX_TENSOR_DIMS], co[MAX_TENSOR_DIMS];
    if (!coords(newer, cn) || !coords(older, co)) return Overlap::OTHER;
    bool covered = true;
    for (uint32_t i = 0; i < newer.ndims; ++i) {
        const uint64_t a0 = cn[i], a1 = cn[i] + newer.shapes[i];
        const uint64_t b0 = co[i], b1 = co[i] + older.shapes[i];
        if (a1 <= b0 || b1 <= a0) return Overlap::NONE;
        if (!(a0 <= b0 && b1 <= a1)) covered = false;
    }
    return covered ? Overlap::COVERED : Overlap::OTHER;
}

void TensorMap::lookup(const ChipTensor& t, const std::vector<std::unique_ptr<Task>>& tasks,
                       std::vector<uint32_t>& out) {
    auto it = buckets_.find(t.buffer.addr);
    if (it == buckets_.end()) return;
    auto& chain = it->second;
    // Entries of completed producers impose no edge any more; drop them while scanning.
    chain.erase(std::remove_if(chain.begin(), chain.end(),
                               [&](const TensorMapEntry& e) {
                                   return tasks[e.producer]->state == TaskState::COMPLETED;
                               }),
                chain.end());
    for (auto rit = chain.rbegin(); rit != chain.rend(); ++rit) {
        if (overlap(t, rit->view) != Overlap::NONE) out.push_back(rit->producer);
    }
}

void TensorMap::lookup_all(const ChipTensor& t, std::vector<std::pair<const TensorMapEntry*, Overlap>>& out) const {
    auto it = buckets_.find(t.buffer.addr);
    if (it == buckets_.end()) return;
    for (auto rit = it->second.rbegin(); rit != it->second.rend(); ++rit) {
        const Overlap o = overlap(t, rit->view);
        if (o != Overlap::NONE) out.emplace_back(&*rit, o);
    }
}

void TensorMap::insert(const ChipTensor& t, uint32_t producer) {
    buckets_[t.buffer.addr].push_back(TensorMapEntry{producer, t});
}

void TensorMap::remove_covered(const ChipTensor& t) {
    auto it = buckets_.find(t.buffer.addr);
    if (it == buckets_.end()) return;
    auto& chain = it->second;
    chain.erase(std::remove_if(chain.begin(), chain.end(),
                               [&](const TensorMapEntry& e) { return overlap(t, e.view) == Overlap::COVERED; }),
                chain.end());
}

}  // namespace ptosim
