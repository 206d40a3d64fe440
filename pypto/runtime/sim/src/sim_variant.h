// The (platform, runtime) pair a runtime library is built for. Only variant.cpp is compiled per pair
// (with -DPTO_SIM_ARCH_A5 / -DPTO_SIM_RUNTIME_HBG); every other object is shared by all four.
#pragma once

namespace ptosim {

struct Variant {
    const char* identity;   // "<platform>/<runtime>"
    bool arch_a5;           // a5sim (platform rules of comm tasks)
    bool host_build_graph;  // the host_build_graph runtime: dispatch is held until orchestration ends
};

// Hidden: several runtime libraries load into one process (RTLD_GLOBAL), and each must read its own.
extern const Variant kVariant __attribute__((visibility("hidden")));

}  // namespace ptosim
