// Element combines of comm COPY (CommAtomic ADD/MAX/MIN/MUL): atomic on the destination element, f16/bf16
// computed in f32 and rounded to nearest even.
#include <cmath>
#include <cstring>

#include "sim_internal.h"

namespace ptosim {

namespace {

float half_to_float(uint16_t h) {
    const uint32_t sign = uint32_t(h >> 15) << 31, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
    float v;
    if (exp == 0) v = std::ldexp(float(man), -24);
    else if (exp == 31) v = man ? NAN : INFINITY;
    else v = std::ldexp(float(man | 0x400), int(exp) - 25);
    return sign ? -v : v;
}

uint16_t float_to_half(float f) {  // round to nearest even
    uint32_t x;
    std::memcpy(&x, &f, 4);
    const uint16_t sign = uint16_t((x >> 16) & 0x8000);
    const int32_t exp = int32_t((x >> 23) & 0xff) - 127 + 15;
    uint32_t man = x & 0x7fffff;
    if (((x >> 23) & 0xff) == 0xff) return uint16_t(sign | 0x7c00 | (man ? 0x200 : 0));
    if (exp >= 31) return uint16_t(sign | 0x7c00);
    if (exp <= 0) {
        if (exp < -10) return sign;
        man |= 0x800000;
        const int sh = 14 - exp;
        uint32_t h = man >> sh;
        const uint32_t rem = man & ((1u << sh) - 1), half = 1u << (sh - 1);
        if (rem > half || (rem == half && (h & 1))) ++h;
        return uint16_t(sign | h);
    }
    uint32_t h = (uint32_t(exp) << 10) | (man >> 13);
    const uint32_t rem = man & 0x1fff;
    if (rem > 0x1000 || (rem == 0x1000 && (h & 1))) ++h;
    return uint16_t(sign | h);
}

float bf16_to_float(uint16_t b) {
    const uint32_t x = uint32_t(b) << 16;
    float f;
    std::memcpy(&f, &x, 4);
    return f;
}

uint16_t float_to_bf16(float f) {
    uint32_t x;
    std::memcpy(&x, &f, 4);
    if ((x & 0x7fffffff) > 0x7f800000) return uint16_t((x >> 16) | 0x40);
    return uint16_t((x + 0x7fff + ((x >> 16) & 1)) >> 16);
}

template <typename Bits, typename F>
void cas_update(void* p, F f) {
    Bits* q = static_cast<Bits*>(p);
    Bits old = __atomic_load_n(q, __ATOMIC_RELAXED);
    while (!__atomic_compare_exchange_n(q, &old, f(old), true, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {
    }
}

template <typename T>
T apply(int32_t op, T a, T b) {
    switch (static_cast<CommAtomic>(op)) {
        case CommAtomic::MAX: return a < b ? b : a;
        case CommAtomic::MIN: return b < a ? b : a;
        case CommAtomic::MUL: return T(a * b);
        default: return T(a + b);
    }
}

// dst = dst (op) src, atomically (a CAS loop on the element's bits; integer ADD is one fetch-add).
template <typename T, typename Bits>
void combine_int(int32_t op, void* dst, const void* src) {
    const T v = *static_cast<const T*>(src);
    if (op == int32_t(CommAtomic::ADD)) {
        __atomic_fetch_add(static_cast<T*>(dst), v, __ATOMIC_ACQ_REL);
        return;
    }
    cas_update<Bits>(dst, [op, v](Bits old) {
        T cur;
        std::memcpy(&cur, &old, sizeof(T));
        const T out = apply<T>(op, cur, v);
        Bits bits;
        std::memcpy(&bits, &out, sizeof(T));
        return bits;
    });
}

template <float (*Load)(uint16_t), uint16_t (*Store)(float)>
void combine_half(int32_t op, void* dst, const void* src) {
    const float v = Load(*static_cast<const uint16_t*>(src));
    cas_update<uint16_t>(dst, [op, v](uint16_t old) { return Store(apply<float>(op, Load(old), v)); });
}

}  // namespace

void comm_combine(DataType t, int32_t op, void* dst, const void* src) {
    switch (t) {
        case DataType::INT32: combine_int<int32_t, uint32_t>(op, dst, src); break;
        case DataType::INT16: combine_int<int16_t, uint16_t>(op, dst, src); break;
        case DataType::INT8: combine_int<int8_t, uint8_t>(op, dst, src); break;
        case DataType::FLOAT32: {
            float v;
            std::memcpy(&v, src, 4);
            cas_update<uint32_t>(dst, [op, v](uint32_t old) {
                float f;
                std::memcpy(&f, &old, 4);
                f = apply<float>(op, f, v);
                uint32_t out;
                std::memcpy(&out, &f, 4);
                return out;
            });
            break;
        }
        case DataType::FLOAT16: combine_half<half_to_float, float_to_half>(op, dst, src); break;
        case DataType::BFLOAT16: combine_half<bf16_to_float, float_to_bf16>(op, dst, src); break;
        default: throw std::invalid_argument("atomic combine: unsupported dtype");
    }
}

}  // namespace ptosim
