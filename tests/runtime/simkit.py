"""Hand-written artifact directories for runtime tests (stand-ins for compiler output)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

PLAIN_KERNEL_HEADER = """\
#include <cstdint>
#include <stdexcept>
#include <unistd.h>
#include "tensor.h"
#include "intrinsic.h"
"""

# c = a + b (fp32, element-wise over numel); optional scalar args[3] = microseconds to sleep first,
# so a missing dependency shows up as a consumer reading unwritten data.
ADD_KERNEL = PLAIN_KERNEL_HEADER + """\
extern "C" void kernel_entry(int64_t* args) {
    auto* a = reinterpret_cast<ChipTensor*>(args[0]);
    auto* b = reinterpret_cast<ChipTensor*>(args[1]);
    auto* c = reinterpret_cast<ChipTensor*>(args[2]);
    if (args[3] > 0) usleep(static_cast<useconds_t>(args[3]));
    const uint64_t n = c->numel();
    for (uint64_t i = 0; i < n; ++i) c->data<float>()[i] = a->data<float>()[i] + b->data<float>()[i];
}
"""

# out = x * s, s a float scalar in args[2].
SCALE_KERNEL = PLAIN_KERNEL_HEADER + """\
extern "C" void kernel_entry(int64_t* args) {
    auto* x = reinterpret_cast<ChipTensor*>(args[0]);
    auto* o = reinterpret_cast<ChipTensor*>(args[1]);
    union { uint64_t u; float f; } s; s.u = static_cast<uint64_t>(args[2]);
    const uint64_t n = o->numel();
    for (uint64_t i = 0; i < n; ++i) o->data<float>()[i] = x->data<float>()[i] * s.f;
}
"""

# c = a * b on the cube side.
MUL_KERNEL = PLAIN_KERNEL_HEADER + """\
extern "C" void kernel_entry(int64_t* args) {
    auto* a = reinterpret_cast<ChipTensor*>(args[0]);
    auto* b = reinterpret_cast<ChipTensor*>(args[1]);
    auto* c = reinterpret_cast<ChipTensor*>(args[2]);
    const uint64_t n = c->numel();
    for (uint64_t i = 0; i < n; ++i) c->data<float>()[i] = a->data<float>()[i] * b->data<float>()[i];
}
"""

# Each SPMD block writes its rows: out[row] = block_idx * 1000 + block_num * 10 + sub_block_id.
IDENTITY_KERNEL = PLAIN_KERNEL_HEADER + """\
extern "C" void kernel_entry(int64_t* args) {
    auto* o = reinterpret_cast<ChipTensor*>(args[0]);
    const int32_t b = get_block_idx(args), n = get_block_num(args), s = get_sub_block_id(args);
    const uint32_t rows = o->shapes[0] / static_cast<uint32_t>(n), cols = o->shapes[1];
    const uint32_t row = static_cast<uint32_t>(b) * rows;
    for (uint32_t r = row; r < row + rows; ++r)
        for (uint32_t c = 0; c < cols; ++c)
            o->data<int32_t>()[r * cols + c] = b * 1000 + n * 10 + s;
}
"""

# Records which cluster it ran on into out[slot] (slot = args[1]).
CLUSTER_KERNEL = PLAIN_KERNEL_HEADER + """\
extern "C" void kernel_entry(int64_t* args) {
    auto* o = reinterpret_cast<ChipTensor*>(args[0]);
    o->data<int32_t>()[args[1] + get_sub_block_id(args)] = 100 + get_cluster_id(args);
}
"""

FAULT_KERNEL = PLAIN_KERNEL_HEADER + """\
extern "C" void kernel_entry(int64_t* args) {
    (void)args;
    throw std::runtime_error("TASSIGN overflow: tile of 65536 bytes at offset 196608 exceeds UB (196608 bytes)");
}
"""

# Spins until flag[0] != 0 (a stand-in for a TPOP on an empty pipe).
WAIT_KERNEL = PLAIN_KERNEL_HEADER + """\
extern "C" void kernel_entry(int64_t* args) {
    auto* f = reinterpret_cast<ChipTensor*>(args[0]);
    volatile int32_t* flag = f->data<int32_t>();
    while (__atomic_load_n(flag, __ATOMIC_ACQUIRE) == 0) usleep(500);
}
"""

ORCH_HEAD = """\
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "pto_orchestration_api.h"

extern "C" {

__attribute__((visibility("default")))
PTO2OrchestrationConfig aicpu_orchestration_config(const ChipTaskArgs& orch_args) {
    (void)orch_args;
    return PTO2OrchestrationConfig{
        .expected_arg_count = %d,
    };
}

__attribute__((visibility("default")))
void aicpu_orchestration_entry(const ChipTaskArgs& orch_args) {
"""
ORCH_TAIL = """\
}

}  // extern "C"
"""


def orchestration(n_args: int, body: str) -> str:
    """An orchestration .cpp in the generated layout with ``body`` inside the entry."""
    return ORCH_HEAD % n_args + body + ORCH_TAIL


@dataclass(frozen=True)
class Kernel:
    func_id: int
    name: str
    core_type: str
    source: str


def write_artifact(root: Path, orch_name: str, orch_cpp: str, kernels: list[Kernel], params: list[dict],
                   *, runtime: str = "tensormap_and_ringbuffer", platform: str = "a2a3sim") -> Path:
    """Write kernel_config.py, compiled_meta.json, orchestration/ and kernels/ like the compiler does."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "orchestration").mkdir(exist_ok=True)
    (root / "orchestration" / f"{orch_name}.cpp").write_text(orch_cpp)
    entries = []
    for k in kernels:
        kdir = root / "kernels" / k.core_type
        kdir.mkdir(parents=True, exist_ok=True)
        (kdir / f"{k.name}.cpp").write_text(k.source)
        entries.append(
            f'\t{{"func_id": {k.func_id}, "name": "{k.name}", '
            f'"source": str(_ROOT_DIR / "kernels" / "{k.core_type}" / "{k.name}.cpp"), "core_type": "{k.core_type}"}},'
        )
    sig = ", ".join({"In": "_D.IN", "Out": "_D.OUT", "InOut": "_D.INOUT"}[p["direction"]]
                    for p in params if p.get("shape") is not None)
    (root / "kernel_config.py").write_text(
        "# Kernel and Orchestration Configuration\n\nfrom pathlib import Path\n"
        "from pypto.runtime.kernel_config import ArgDirection as _D\n\n_ROOT_DIR = Path(__file__).parent\n\n"
        f'RUNTIME_CONFIG = {{"runtime": "{runtime}", "aicpu_thread_num": 0}}\n\n'
        f'ORCHESTRATION = {{"source": str(_ROOT_DIR / "orchestration" / "{orch_name}.cpp"), '
        f'"function_name": "aicpu_orchestration_entry", "signature": [{sig}]}}\n\n'
        "KERNELS = [\n" + "\n".join(entries) + "\n]\n"
    )
    backend = "Ascend950" if platform.startswith("a5") else "Ascend910B"
    meta = {"schema": 1, "params": params, "num_return_types": sum(p["direction"] == "Out" for p in params),
            "platform": platform, "backend_type": backend, "runtime": runtime, "toolchain": None}
    (root / "compiled_meta.json").write_text(json.dumps(meta, indent=2))
    return root


def tensor_param(name: str, direction: str, shape: list[int], dtype: str = "fp32") -> dict:
    return {"name": name, "direction": direction, "shape": shape, "dtype": dtype}
