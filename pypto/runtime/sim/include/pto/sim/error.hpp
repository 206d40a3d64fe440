// Error reporting: every simulator check ends in pto_sim_fail(msg), which throws pto::SimError.
#pragma once

#include <cstdio>
#include <stdexcept>
#include <string>

namespace pto {

// Raised for ISA misuse detected at run time (region overflow, shape mismatch, ...).
class SimError : public std::runtime_error {
   public:
    using std::runtime_error::runtime_error;
};

}  // namespace pto

// Weak and default-visible: a runtime that defines a strong `pto_sim_fail` in the global symbol
// scope replaces this one in every kernel .so. A replacement that returns still ends in a throw.
extern "C" __attribute__((weak, noinline, visibility("default"))) void pto_sim_fail(const char* msg) {
    throw pto::SimError(msg);
}

namespace pto {
namespace sim {

[[noreturn]] inline void fail(const std::string& msg) {
    pto_sim_fail(msg.c_str());
    throw SimError(msg);
}

template <class... Args>
[[noreturn]] inline void failf(const char* fmt, Args... args) {
    char buf[512];
    std::snprintf(buf, sizeof buf, fmt, args...);
    fail(std::string(buf));
}

}  // namespace sim
}  // namespace pto
