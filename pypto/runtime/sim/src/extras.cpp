// The extras library's table (sim_extras.h): what a runtime library calls for comm tasks and DFX.
#include "sim_internal.h"

namespace ptosim {
namespace {

const Extras kExtras = {
    PTO_SIM_EXTRAS_VERSION, dfx_new, dfx_task_args, dfx_edge,        dfx_dump,   dfx_unit,
    dfx_scope,              dfx_json, check_comm_task, comm_label, comm_loop,
};

}  // namespace
}  // namespace ptosim

extern "C" const ptosim::Extras* pto_sim_extras(int32_t version) {
    return version == PTO_SIM_EXTRAS_VERSION ? &ptosim::kExtras : nullptr;
}
