// Entry used by generated kernel wrappers (`#include <pto/pto-inst.hpp>`).
#pragma once

#include "common/pto_instr.hpp"
