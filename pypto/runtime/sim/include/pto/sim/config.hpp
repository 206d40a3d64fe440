// CPU simulator of the PTO tile ISA: platform constants, CCE qualifiers and element types.
//
// Platform selection: a2a3 (default) or a5 with -DPTO_SIM_ARCH_A5. Region capacities can be
// overridden with -DPTO_SIM_{UB,L1,L0A,L0B,L0C,BIAS,SCALE}_BYTES=N.
#pragma once

#include <cstddef>
#include <cstdint>

// CCE address-space and function qualifiers are meaningless on the CPU.
#ifndef __gm__
#define __gm__
#endif
#ifndef __ub__
#define __ub__
#endif
#ifndef __ubuf__
#define __ubuf__
#endif
#ifndef __cbuf__
#define __cbuf__
#endif
#ifndef __ca__
#define __ca__
#endif
#ifndef __cb__
#define __cb__
#endif
#ifndef __cc__
#define __cc__
#endif
#ifndef __fbuf__
#define __fbuf__
#endif
#ifndef __aicore__
#define __aicore__
#endif
#ifndef __tf__
#define __tf__
#endif
#ifndef AICORE
#define AICORE
#endif
#ifndef __global__
#define __global__
#endif

typedef _Float16 half;

#if defined(__STDCPP_BFLOAT16_T__)
#include <stdfloat>
typedef std::bfloat16_t bfloat16_t;
#else
#include <cstring>
// Minimal bf16 for pre-C++23 compilers: storage plus round-to-nearest-even conversion.
struct bfloat16_t {
    uint16_t bits = 0;
    bfloat16_t() = default;
    bfloat16_t(float f) {  // NOLINT(google-explicit-constructor)
        uint32_t u;
        std::memcpy(&u, &f, 4);
        if ((u & 0x7fffffffu) > 0x7f800000u) {
            bits = static_cast<uint16_t>((u >> 16) | 0x40u);
        } else {
            bits = static_cast<uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
        }
    }
    bfloat16_t(double d) : bfloat16_t(static_cast<float>(d)) {}  // NOLINT
    bfloat16_t(int v) : bfloat16_t(static_cast<float>(v)) {}     // NOLINT
    bfloat16_t(half h) : bfloat16_t(static_cast<float>(h)) {}    // NOLINT
    operator float() const {  // NOLINT(google-explicit-constructor)
        uint32_t u = static_cast<uint32_t>(bits) << 16;
        float f;
        std::memcpy(&f, &u, 4);
        return f;
    }
};
#endif

namespace pto {

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wliteral-suffix"
// ptoas 0.1.1 prints integral-valued float constants as `2f`; make that spelling a float.
constexpr float operator""f(unsigned long long v) { return static_cast<float>(v); }
#pragma GCC diagnostic pop

constexpr int DYNAMIC = -1;

namespace sim {

#if defined(PTO_SIM_ARCH_A5)
constexpr const char* kArchName = "a5";
constexpr std::size_t kDefaultUB = 256 * 1024;
constexpr std::size_t kDefaultL0C = 256 * 1024;
constexpr std::size_t kDefaultBias = 4 * 1024;
constexpr std::size_t kDefaultScale = 4 * 1024;
#else
constexpr const char* kArchName = "a2a3";
constexpr std::size_t kDefaultUB = 192 * 1024;
constexpr std::size_t kDefaultL0C = 128 * 1024;
constexpr std::size_t kDefaultBias = 1024;
constexpr std::size_t kDefaultScale = 0;
#endif

#ifndef PTO_SIM_UB_BYTES
#define PTO_SIM_UB_BYTES ::pto::sim::kDefaultUB
#endif
#ifndef PTO_SIM_L1_BYTES
#define PTO_SIM_L1_BYTES (512 * 1024)
#endif
#ifndef PTO_SIM_L0A_BYTES
#define PTO_SIM_L0A_BYTES (64 * 1024)
#endif
#ifndef PTO_SIM_L0B_BYTES
#define PTO_SIM_L0B_BYTES (64 * 1024)
#endif
#ifndef PTO_SIM_L0C_BYTES
#define PTO_SIM_L0C_BYTES ::pto::sim::kDefaultL0C
#endif
#ifndef PTO_SIM_BIAS_BYTES
#define PTO_SIM_BIAS_BYTES ::pto::sim::kDefaultBias
#endif
#ifndef PTO_SIM_SCALE_BYTES
#define PTO_SIM_SCALE_BYTES ::pto::sim::kDefaultScale
#endif

}  // namespace sim
}  // namespace pto
