// The variant constants (see sim_variant.h); no other source depends on the variant macros.
#include "sim_capi.h"
#include "sim_variant.h"

#ifdef PTO_SIM_ARCH_A5
#define PTO_SIM_PLATFORM "a5sim"
#define PTO_SIM_IS_A5 true
#else
#define PTO_SIM_PLATFORM "a2a3sim"
#define PTO_SIM_IS_A5 false
#endif

#ifdef PTO_SIM_RUNTIME_HBG
#define PTO_SIM_RUNTIME "host_build_graph"
#define PTO_SIM_IS_HBG true
#else
#define PTO_SIM_RUNTIME "tensormap_and_ringbuffer"
#define PTO_SIM_IS_HBG false
#endif

namespace ptosim {
const Variant kVariant = {PTO_SIM_PLATFORM "/" PTO_SIM_RUNTIME, PTO_SIM_IS_A5, PTO_SIM_IS_HBG};
}  // namespace ptosim

extern "C" const char* pto_sim_identity(void) { return ptosim::kVariant.identity; }
