// CPU simulator of the PTO tile instruction API, as used by code that ptoas 0.1.1 emits
// (`#include "common/pto_instr.hpp"` + `using namespace pto;`). Header-only; see pto/sim/.
#pragma once

#include "pto/sim/config.hpp"
#include "pto/sim/error.hpp"
#include "pto/sim/core.hpp"
#include "pto/sim/memory.hpp"
#include "pto/sim/tile.hpp"
#include "pto/sim/global.hpp"
#include "pto/sim/ops_mem.hpp"
#include "pto/sim/ops_elem.hpp"
#include "pto/sim/ops_reduce.hpp"
#include "pto/sim/ops_cvt.hpp"
#include "pto/sim/ops_matmul.hpp"
#include "pto/sim/ops_sort.hpp"
