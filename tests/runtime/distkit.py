"""Distributed test programs: hand-written orchestrations that submit comm tasks, run on forked ranks."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import simkit as sk

from pypto.artifact import load_artifact
from pypto.runtime import ChipWorker, RunConfig, build
from pypto.runtime.distributed import CommContext, RankArena, run_ranks

# out = x * s (fp32), s a float scalar in args[2]; with args[3] = microseconds to sleep first.
SLOW_SCALE_KERNEL = sk.PLAIN_KERNEL_HEADER + """\
extern "C" void kernel_entry(int64_t* args) {
    auto* x = reinterpret_cast<ChipTensor*>(args[0]);
    auto* o = reinterpret_cast<ChipTensor*>(args[1]);
    union { uint64_t u; float f; } s; s.u = static_cast<uint64_t>(args[2]);
    if (args[3] > 0) usleep(static_cast<useconds_t>(args[3]));
    const uint64_t n = o->numel();
    for (uint64_t i = 0; i < n; ++i) o->data<float>()[i] = x->data<float>()[i] * s.f;
}
"""


def artifact(root: Path, name: str, body: str, params: list[dict], kernels: list[sk.Kernel] | None = None,
             *, platform: str = "a2a3sim", runtime: str = "tensormap_and_ringbuffer") -> Path:
    """Write the artifact and build it (and the runtime) here, before any fork: the ranks only load."""
    n_args = len(params)
    path = sk.write_artifact(root / f"{name}-{platform}-{runtime}", name, sk.orchestration(n_args, body),
                             kernels or [], params, runtime=runtime, platform=platform)
    build.runtime_library(platform, runtime)
    build.runtime_extras()  # comm tasks need it
    build.build_artifact(load_artifact(path), platform)
    return path


def run_program(path: Path, arena: RankArena, args_of: Any, *, platform: str = "a2a3sim",
                runtime: str = "tensormap_and_ringbuffer", wait_timeout_s: float = 5.0, timeout_s: float = 30.0,
                repeat: int = 1) -> list[Any]:
    """Run ``path`` on every rank of ``arena`` with ``args_of(rank)`` (``repeat`` times per rank)."""

    def rank_main(rank: int) -> int:
        ctx = CommContext.for_rank(arena, rank, wait_timeout_s=wait_timeout_s)
        with ChipWorker(RunConfig(platform=platform), runtime=runtime, comm=ctx) as w:
            for _ in range(repeat):
                w.run(path, *args_of(rank))
        return rank

    return run_ranks(arena.nranks, rank_main, timeout_s=timeout_s, label=path.name, arena=arena)


def window(name: str, shape: list[int], dtype: str = "fp32", direction: str = "InOut") -> dict:
    return sk.tensor_param(name, direction, shape, dtype)
