"""Dependency tracking (TensorMap over views), SPMD blocks, mixed tasks, manual scopes, element access."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import simkit as sk
from rt_marks import needs_gxx

from pypto.runtime import ChipWorker

pytestmark = [needs_gxx, pytest.mark.sim]

# out rows [16i, 16i+16) = a + b chunk by chunk through views; then out2 = out * 2 must wait for all chunks.
VIEWS_BODY = """\
    const ChipTensor& ext_a = orch_args.tensor(0).ref();
    const ChipTensor& ext_b = orch_args.tensor(1).ref();
    const ChipTensor& ext_out = orch_args.tensor(2).ref();
    const ChipTensor& ext_out2 = orch_args.tensor(3).ref();
    PTO2_SCOPE() {
        for (int64_t i = 0; i < 4; i += 1) {
            PTO2_SCOPE() {
                uint32_t shapes[2] = {16, 64};
                uint32_t offsets[2] = {(uint32_t)(i * 16), 0};
                CoreTaskArgs p;
                p.add_input(ext_a.view(shapes, offsets));
                p.add_input(ext_b.view(shapes, offsets));
                p.add_output(ext_out.view(shapes, offsets));
                p.add_scalar((uint64_t)(i == 3 ? 30000 : 0));
                rt_submit_aiv_task(0, p);
            }
        }
        CoreTaskArgs q;
        q.add_input(ext_out);
        q.add_output(ext_out2);
        q.add_scalar(to_u64(2.0f));
        rt_submit_aiv_task(1, q);
        uint32_t idx[2] = {63, 5};
        float v = get_tensor_data<float>(ext_out2, 2, idx);
        uint32_t idx0[2] = {0, 0};
        set_tensor_data(ext_out2, 2, idx0, v);
    }
"""

SPMD_BODY = """\
    const ChipTensor& out = orch_args.tensor(0).ref();
    PTO2_SCOPE() {
        CoreTaskArgs p;
        p.add_output(out);
        p.launch_spec.set_block_num(4);
        p.launch_spec.set_require_sync_start(true);
        rt_submit_aiv_task(0, p);
    }
"""

MIX_BODY = """\
    const ChipTensor& out = orch_args.tensor(0).ref();
    PTO2_SCOPE() {
        CoreTaskArgs p;
        p.add_output(out);
        p.add_scalar((uint64_t)0);
        MixedKernels m = {0, 1, 1};
        rt_submit_task(m, p);
        CoreTaskArgs q;
        q.add_output(out);
        q.add_scalar((uint64_t)4);
        MixedKernels m2 = {INVALID_KERNEL_ID, 1, 1};
        rt_submit_task(m2, q);
    }
"""

# In a MANUAL scope only explicit dependencies order tasks: t1 must wait for the slow t0 via set_dependencies.
MANUAL_BODY = """\
    const ChipTensor& ext_a = orch_args.tensor(0).ref();
    const ChipTensor& ext_b = orch_args.tensor(1).ref();
    const ChipTensor& ext_t = orch_args.tensor(2).ref();
    const ChipTensor& ext_out = orch_args.tensor(3).ref();
    PTO2_SCOPE(PTO2ScopeMode::MANUAL) {
        CoreTaskArgs p0;
        p0.add_input(ext_a);
        p0.add_input(ext_b);
        p0.add_output(ext_t);
        p0.add_scalar((uint64_t)30000);
        TaskOutputTensors t0 = rt_submit_aiv_task(0, p0);
        PTO2TaskId deps[1] = {t0.task_id()};
        CoreTaskArgs p1;
        p1.add_input(ext_t);
        p1.add_output(ext_out);
        p1.add_scalar(to_u64(2.0f));
        p1.set_dependencies(deps, 1);
        rt_submit_aiv_task(1, p1);
    }
"""

ADD_SCALE = [sk.Kernel(0, "add_k", "aiv", sk.ADD_KERNEL), sk.Kernel(1, "scale_k", "aiv", sk.SCALE_KERNEL)]


def _rand(rows: int, cols: int) -> np.ndarray:
    return np.random.default_rng(rows * cols).random((rows, cols), dtype=np.float32)


@pytest.fixture(scope="module")
def worker() -> ChipWorker:
    with ChipWorker() as w:
        yield w


def test_views_track_overlapping_writers(worker: ChipWorker, tmp_path: Path) -> None:
    params = [sk.tensor_param("a", "In", [64, 64]), sk.tensor_param("b", "In", [64, 64]),
              sk.tensor_param("out", "Out", [64, 64]), sk.tensor_param("out2", "Out", [64, 64])]
    art = sk.write_artifact(tmp_path / "views", "views", sk.orchestration(4, VIEWS_BODY), ADD_SCALE, params)
    a, b = _rand(64, 64), _rand(64, 64)
    out, out2 = np.zeros_like(a), np.zeros_like(a)
    worker.run(art, a, b, out, out2)
    np.testing.assert_allclose(out, a + b, rtol=1e-6, atol=0)
    expected = (a + b) * 2
    expected[0, 0] = expected[63, 5]
    np.testing.assert_allclose(out2, expected, rtol=1e-6, atol=0)
    assert worker.last_run.num_tasks == 5


def test_spmd_blocks_with_sync_start(worker: ChipWorker, tmp_path: Path) -> None:
    art = sk.write_artifact(tmp_path / "spmd", "spmd", sk.orchestration(1, SPMD_BODY),
                            [sk.Kernel(0, "ident", "aiv", sk.IDENTITY_KERNEL)],
                            [sk.tensor_param("out", "Out", [8, 4], "int32")])
    out = worker.run(art)
    expected = np.repeat(np.arange(4, dtype=np.int32) * 1000 + 40, 2)[:, None].repeat(4, axis=1)
    np.testing.assert_array_equal(out, expected)


def test_mixed_task_runs_on_one_cluster(worker: ChipWorker, tmp_path: Path) -> None:
    kernels = [sk.Kernel(0, "cube_side", "aic", sk.CLUSTER_KERNEL), sk.Kernel(1, "vec_side", "aiv", sk.CLUSTER_KERNEL)]
    art = sk.write_artifact(tmp_path / "mix", "mix", sk.orchestration(1, MIX_BODY), kernels,
                            [sk.tensor_param("out", "InOut", [8], "int32")])
    out = np.zeros(8, np.int32)
    worker.run(art, out)
    # Task 0: AIC writes out[0]; AIV lanes 0/1 write out[0]/out[1] (lane 0 overwrites the AIC slot, same value).
    assert out[0] == out[1] and 100 <= out[0] < 108
    assert out[4] == out[5] and 100 <= out[4] < 108


def test_manual_scope_uses_explicit_dependencies(worker: ChipWorker, tmp_path: Path) -> None:
    params = [sk.tensor_param("a", "In", [64, 64]), sk.tensor_param("b", "In", [64, 64]),
              sk.tensor_param("t", "InOut", [64, 64]), sk.tensor_param("out", "Out", [64, 64])]
    art = sk.write_artifact(tmp_path / "manual", "manual", sk.orchestration(4, MANUAL_BODY), ADD_SCALE, params)
    a, b = _rand(64, 64), _rand(64, 64)
    t, out = np.zeros_like(a), np.zeros_like(a)
    worker.run(art, a, b, t, out)
    np.testing.assert_allclose(out, (a + b) * 2, rtol=1e-6, atol=0)


def test_results_are_deterministic(worker: ChipWorker, tmp_path: Path) -> None:
    params = [sk.tensor_param("a", "In", [64, 64]), sk.tensor_param("b", "In", [64, 64]),
              sk.tensor_param("out", "Out", [64, 64]), sk.tensor_param("out2", "Out", [64, 64])]
    art = sk.write_artifact(tmp_path / "det", "views", sk.orchestration(4, VIEWS_BODY.replace("30000", "0")),
                            ADD_SCALE, params)
    a, b = _rand(64, 64), _rand(64, 64)
    runs = [worker.run(art, a, b) for _ in range(5)]
    for out, out2 in runs[1:]:
        np.testing.assert_array_equal(out, runs[0][0])
        np.testing.assert_array_equal(out2, runs[0][1])


# Two writers of `out`: t0 (slow) writes a + b, t1 (fast) writes b + b and passes `out` as SECOND_KIND.
WAW_BODY = """\
    const ChipTensor& ext_a = orch_args.tensor(0).ref();
    const ChipTensor& ext_b = orch_args.tensor(1).ref();
    const ChipTensor& ext_out = orch_args.tensor(2).ref();
    PTO2_SCOPE() {
        CoreTaskArgs p;
        p.add_input(ext_a);
        p.add_input(ext_b);
        p.add_output(ext_out);
        p.add_scalar((uint64_t)30000);
        rt_submit_aiv_task(0, p);
        CoreTaskArgs q;
        q.add_input(ext_b);
        q.add_input(ext_b);
        q.SECOND_KIND(ext_out);
        q.add_scalar((uint64_t)0);
        rt_submit_aiv_task(0, q);
    }
"""


@pytest.mark.parametrize("runtime", ["tensormap_and_ringbuffer", "host_build_graph"])
@pytest.mark.parametrize("second", ["add_inout", "add_output"])
def test_write_after_write_is_ordered_only_by_inout(worker: ChipWorker, tmp_path: Path, runtime: str,
                                                    second: str) -> None:
    """runtime.md §2.2 as the runtime code behaves: an existing-tensor output takes no edge on an earlier
    writer; inout does. (The compiler's DeriveCallDirections relies on exactly this.)"""
    params = [sk.tensor_param("a", "In", [64, 64]), sk.tensor_param("b", "In", [64, 64]),
              sk.tensor_param("out", "Out", [64, 64])]
    art = sk.write_artifact(tmp_path / "waw", "waw", sk.orchestration(3, WAW_BODY.replace("SECOND_KIND", second)),
                            [sk.Kernel(0, "add_k", "aiv", sk.ADD_KERNEL)], params, runtime=runtime)
    a, b = _rand(64, 64), _rand(64, 64) + 1.0
    out = np.zeros_like(a)
    if runtime == worker.runtime:
        worker.run(art, a, b, out)
    else:
        with ChipWorker(runtime=runtime) as other:
            other.run(art, a, b, out)
    # inout: t1 waits for t0, so its value is last; output_existing: unordered, the slow t0 finishes last.
    np.testing.assert_allclose(out, b + b if second == "add_inout" else a + b, rtol=1e-6, atol=0)
