"""A task graph of three kernels: one edge inferred from data, one declared with ``deps=``.

``scale`` writes the intermediate ``tmp``; ``combine`` reads it, so the runtime's tensor map orders
``combine`` after ``scale`` by itself (an inferred edge). ``offset`` shares no tensor with
``scale``, but it is declared to run after it: ``with pl.at(...) as t_scale`` names the task and
``deps=[t_scale]`` adds the edge. ``name_hint`` names the outlined kernels.

    python examples/intermediate/07_task_graph.py [a2a3sim|a5sim]
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _common import check, platform_from_argv, rand  # noqa: E402

import pypto.language as pl  # noqa: E402
from pypto.runtime import ChipWorker, RunConfig  # noqa: E402


@pl.jit
def task_graph(a: pl.Tensor, b: pl.Tensor, out1: pl.Out[pl.Tensor], out2: pl.Out[pl.Tensor]):
    tmp = pl.create_tensor([64, 64], dtype=pl.FP32)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="scale") as t_scale:
        tmp[:] = pl.mul(a, 2.0)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="combine"):
        out1[:] = pl.add(tmp, b)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="offset", deps=[t_scale]):
        out2[:] = pl.add(b, 1.0)
    return out1, out2


# Sample shapes (the CLI's `pypto compile FILE::NAME` and tests/roundtrip use them).
SHAPES = {"task_graph": {"a": "64x64:f32", "b": "64x64:f32", "out1": "64x64:f32", "out2": "64x64:f32"}}


def main(platform: str) -> None:
    cfg = RunConfig(platform=platform)
    a, b = rand(64, 64, seed=1), rand(64, 64, seed=2)
    out1, out2 = np.zeros_like(a), np.zeros_like(a)
    compiled = task_graph.compile(a, b, out1, out2, config=cfg)
    kernels = sorted(k.stem for k in compiled.output_dir.joinpath("kernels").rglob("*.cpp"))
    assert kernels == ["combine", "offset", "scale"], kernels  # named by name_hint
    orchestration = compiled.output_dir.joinpath("orchestration", "task_graph.cpp").read_text()
    assert orchestration.count("set_dependencies(") == 1, "the declared edge is the only explicit one"
    with ChipWorker(cfg) as worker:
        worker.run(compiled, a, b, out1, out2)
        tasks = worker.last_run.num_tasks
    assert tasks == 4, f"expected 4 tasks (the tmp allocation and 3 kernels), the runtime ran {tasks}"
    check(f"task graph inferred edge (scale -> combine) on {platform}", out1, a * 2.0 + b)
    check(f"task graph declared edge (scale -> offset) on {platform}", out2, b + 1.0)


if __name__ == "__main__":
    main(platform_from_argv())
