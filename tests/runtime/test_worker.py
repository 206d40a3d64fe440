"""ChipWorker end to end with hand-written kernels: dispatch styles, DAGs, both runtimes, errors."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest
import simkit as sk
from rt_marks import needs_gxx

from pypto.runtime import ChipWorker, DeviceTensor, RunConfig
from pypto.runtime.dispatch import bind_args, bind_planned
from pypto.runtime.native import DeadlockError, KernelFaultError, OrchestrationError, SimRuntimeError

pytestmark = [needs_gxx, pytest.mark.sim]
N = [64, 64]

ADD_BODY = """\
    const ChipTensor& ext_a = orch_args.tensor(0).ref();
    const ChipTensor& ext_b = orch_args.tensor(1).ref();
    const ChipTensor& ext_out = orch_args.tensor(2).ref();
    PTO2_SCOPE() {
        CoreTaskArgs params_t0;
        params_t0.add_input(ext_a);
        params_t0.add_input(ext_b);
        params_t0.add_output(ext_out);
        params_t0.add_scalar((uint64_t)0);
        rt_submit_aiv_task(0, params_t0);
    }
"""

# t1 = a + b (slow producer); t2 = t1 * s; out = t1 * t2 on the cube core. Intermediates from alloc_tensors.
DAG_BODY = """\
    const ChipTensor& ext_a = orch_args.tensor(0).ref();
    const ChipTensor& ext_b = orch_args.tensor(1).ref();
    const ChipTensor& ext_out = orch_args.tensor(2).ref();
    union { uint64_t u64; float val; } s_conv;
    s_conv.u64 = orch_args.scalar(0);
    float s = s_conv.val;
    PTO2_SCOPE() {
        uint32_t t1_ci_shapes[2] = {64, 64};
        TensorCreateInfo t1_ci(t1_ci_shapes, 2, DataType::FLOAT32);
        uint32_t t2_ci_shapes[2] = {64, 64};
        TensorCreateInfo t2_ci(t2_ci_shapes, 2, DataType::FLOAT32);
        TaskOutputTensors alloc_0 = alloc_tensors(t1_ci, t2_ci);
        const ChipTensor& t1 = alloc_0.get_ref(0);
        const ChipTensor& t2 = alloc_0.get_ref(1);

        CoreTaskArgs params_t0;
        params_t0.add_input(ext_a);
        params_t0.add_input(ext_b);
        params_t0.add_output(t1);
        params_t0.add_scalar((uint64_t)20000);
        rt_submit_aiv_task(0, params_t0);

        CoreTaskArgs params_t1;
        params_t1.add_input(t1);
        params_t1.add_output(t2);
        params_t1.add_scalar(to_u64(s));
        rt_submit_aiv_task(1, params_t1);

        CoreTaskArgs params_t2;
        params_t2.add_input(t1);
        params_t2.add_input(t2);
        params_t2.add_output(ext_out);
        rt_submit_aic_task(2, params_t2);
    }
"""

DAG_KERNELS = [sk.Kernel(0, "add_k", "aiv", sk.ADD_KERNEL), sk.Kernel(1, "scale_k", "aiv", sk.SCALE_KERNEL),
               sk.Kernel(2, "mul_k", "aic", sk.MUL_KERNEL)]
ABO = [sk.tensor_param("a", "In", N), sk.tensor_param("b", "In", N), sk.tensor_param("out", "Out", N)]


def _rand(*shape: int) -> np.ndarray:
    return np.random.default_rng(len(shape) + shape[0]).random(shape, dtype=np.float32)


@pytest.fixture(scope="module")
def arts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("arts")
    out = {"add": sk.write_artifact(base / "add", "add", sk.orchestration(3, ADD_BODY),
                                    [sk.Kernel(0, "add_k", "aiv", sk.ADD_KERNEL)], ABO)}
    dag_params = [*ABO, {"name": "s", "direction": "In", "shape": None, "dtype": "fp32"}]
    for rt in ("tensormap_and_ringbuffer", "host_build_graph"):
        out[f"dag-{rt}"] = sk.write_artifact(base / f"dag-{rt}", "dag", sk.orchestration(4, DAG_BODY), DAG_KERNELS,
                                             dag_params, runtime=rt)
    out["add-a5"] = sk.write_artifact(base / "add-a5", "add", sk.orchestration(3, ADD_BODY),
                                      [sk.Kernel(0, "add_k", "aiv", sk.ADD_KERNEL)], ABO, platform="a5sim")
    return out


@pytest.fixture(scope="module")
def worker() -> ChipWorker:
    w = ChipWorker()
    yield w
    w.close()


def test_in_place_and_return_style(worker: ChipWorker, arts: dict[str, Path]) -> None:
    a, b = _rand(64, 64), _rand(64, 64) + 1
    out = np.zeros_like(a)
    assert worker.run(arts["add"], a, b, out) is None
    np.testing.assert_allclose(out, a + b, rtol=1e-6, atol=0)
    got = worker.run(arts["add"], a, b)
    assert isinstance(got, np.ndarray) and got.shape == (64, 64)
    np.testing.assert_allclose(got, a + b, rtol=1e-6, atol=0)


def test_registered_handle_hot_loop(worker: ChipWorker, arts: dict[str, Path]) -> None:
    a, b, out = _rand(64, 64), _rand(64, 64), np.zeros((64, 64), np.float32)
    handle = worker.register(arts["add"])
    for _ in range(50):
        handle(a, b, out)
    np.testing.assert_allclose(out, a + b, rtol=1e-6, atol=0)
    assert worker.last_run.num_tasks == 1 and worker.last_run.device_s > 0
    with handle:
        pass
    with pytest.raises(RuntimeError, match="unregistered"):
        handle(a, b, out)


def test_planned_calls_repack_only_addresses_and_fall_back_on_anything_else(worker: ChipWorker,
                                                                             arts: dict[str, Path]) -> None:
    handle = worker.register(arts["add"])
    a, b, out = _rand(64, 64), _rand(64, 64), np.zeros((64, 64), np.float32)
    handle(a, b, out)
    plan = handle.program.plan
    assert plan is not None and plan.shapes == ((64, 64),) * 3
    planned = bind_planned(plan, (b, a, out))
    assert planned is not None
    addresses = [int.from_bytes(bytes(planned.tensors)[k * 128:k * 128 + 8], "little") for k in range(3)]
    assert addresses == [x.__array_interface__["data"][0] for x in (b, a, out)]
    assert bytes(planned.tensors) == bytes(bind_args(handle.program.info, (b, a, out)).tensors)
    a2, b2, out2 = _rand(64, 64) + 2, _rand(64, 64), np.zeros((64, 64), np.float32)
    handle(a2, b2, out2)  # other arrays of the same kind: planned, and the kernel sees them
    np.testing.assert_allclose(out2, a2 + b2, rtol=1e-6, atol=0)
    frozen = a2.copy()
    frozen.flags.writeable = False
    for odd in [(np.asfortranarray(a2), b2, out2), (a2, b2[:32], out2), (a2, b2.astype(np.float16), out2),
                (frozen, b2, out2), (a2, b2), (a2, b2, [1])]:
        assert bind_planned(plan, odd) is None  # the full checks decide
    with pytest.raises(ValueError, match="Tensor at position 0 is not contiguous"):
        handle(np.asfortranarray(a2), b2, out2)
    with pytest.raises(ValueError, match=r"shape \(32, 64\) does not match"):
        handle(a2, b2[:32], out2)
    handle(frozen, b2, out2)  # a read-only input is fine on the full path, and is never planned
    np.testing.assert_allclose(out2, a2 + b2, rtol=1e-6, atol=0)
    assert handle.program.plan is None
    np.testing.assert_allclose(handle(a, b), a + b, rtol=1e-6, atol=0)  # return style: never planned
    assert handle.program.plan is None


def test_the_c_run_config_is_reused_only_while_the_python_config_is_unchanged(worker: ChipWorker,
                                                                               arts: dict[str, Path]) -> None:
    a, b, out = _rand(64, 64), _rand(64, 64), np.zeros((64, 64), np.float32)
    cfg = RunConfig(deadlock_timeout_s=5.0)
    worker.run(arts["add"], a, b, out, config=cfg)
    first = worker._last_ccfg[1]
    worker.run(arts["add"], a, b, out, config=cfg)
    assert worker._last_ccfg[1] is first and first.timeout_ms == 5000
    cfg.deadlock_timeout_s = 7.0
    cfg.ring_task_window = [0, 64, 0, 0]
    worker.run(arts["add"], a, b, out, config=cfg)
    assert (worker._last_ccfg[1].timeout_ms, worker._last_ccfg[1].ring_task_window) == (7000, 64)
    np.testing.assert_allclose(out, a + b, rtol=1e-6, atol=0)


@pytest.mark.parametrize("runtime", ["tensormap_and_ringbuffer", "host_build_graph"])
def test_three_kernel_dag_with_intermediates(arts: dict[str, Path], runtime: str) -> None:
    a, b = _rand(64, 64), _rand(64, 64)
    with ChipWorker(runtime=runtime) as w:
        out = np.zeros_like(a)
        w.run(arts[f"dag-{runtime}"], a, b, out, 3.0)
        assert w.last_run.num_tasks == 4  # alloc_tensors + 3 kernels
    t1 = a + b
    np.testing.assert_allclose(out, t1 * (t1 * 3.0), rtol=1e-6, atol=1e-6)


def test_a5sim_platform(arts: dict[str, Path]) -> None:
    a, b = _rand(64, 64), _rand(64, 64)
    with ChipWorker(RunConfig(platform="a5sim")) as w:
        np.testing.assert_allclose(w.run(arts["add-a5"], a, b), a + b, rtol=1e-6, atol=0)


def test_binding_mismatch_errors(worker: ChipWorker, arts: dict[str, Path]) -> None:
    with pytest.raises(ValueError, match="platform") as exc:
        worker.run(arts["add-a5"], _rand(64, 64), _rand(64, 64))
    assert str(exc.value) == ("CompiledProgram.platform='a5sim' does not match ChipWorker.platform='a2a3sim'. "
                              "Compile for the matching platform, or construct "
                              "ChipWorker(config=RunConfig(platform='a5sim')).")
    with pytest.raises(ValueError, match="runtime") as exc:
        worker.register(arts["dag-host_build_graph"])
    assert str(exc.value) == ("CompiledProgram requires runtime='host_build_graph' but ChipWorker was constructed "
                              "with runtime='tensormap_and_ringbuffer'. "
                              "Construct ChipWorker(..., runtime='host_build_graph').")


def test_worker_lifecycle_errors(arts: dict[str, Path]) -> None:
    w = ChipWorker(auto_init=False)
    with pytest.raises(RuntimeError, match=r"ChipWorker.run\(\) requires an initialized ChipWorker"):
        w.run(arts["add"], _rand(64, 64), _rand(64, 64))
    with pytest.raises(ValueError, match="level=2"):
        ChipWorker(level=3)
    with pytest.raises(ValueError, match="Unknown runtime 'x'"):
        ChipWorker(runtime="x", auto_init=False)
    with ChipWorker() as outer:
        assert ChipWorker.current() is outer
        with pytest.raises(ValueError, match="already active in an enclosing scope"), ChipWorker() as _:
            pass
    assert ChipWorker.current() is None


def test_argument_errors(worker: ChipWorker, arts: dict[str, Path]) -> None:
    a = _rand(64, 64)
    with pytest.raises(ValueError, match="Tensor at position 0 is not contiguous"):
        worker.run(arts["add"], np.asfortranarray(_rand(64, 64)), a)
    with pytest.raises(ValueError, match=r"shape \(32, 64\) does not match the compiled shape \(64, 64\)"):
        worker.run(arts["add"], a, _rand(32, 64))
    with pytest.raises(TypeError, match="dtype fp16 does not match the compiled dtype fp32"):
        worker.run(arts["add"], a, a.astype(np.float16))
    with pytest.raises(TypeError, match=r"takes 3 arguments \(a, b, out\) .* or 2 inputs .* got 1"):
        worker.run(arts["add"], a)
    with pytest.raises(TypeError, match="unsupported type list"):
        worker.run(arts["add"], a, a, [1, 2])


def test_device_tensors_and_raw_memory(worker: ChipWorker, arts: dict[str, Path]) -> None:
    a, b = _rand(64, 64), _rand(64, 64)
    da = worker.alloc_tensor((64, 64), np.float32, init=a)
    db = worker.alloc_tensor([64, 64], "fp32", init=b)
    dout = worker.alloc_tensor((64, 64), np.float32)
    assert isinstance(da, DeviceTensor) and da.nbytes == a.nbytes
    worker.run(arts["add"], da, db, dout)
    host = np.zeros_like(a)
    worker.copy_from(host, dout.data_ptr, host.nbytes)
    np.testing.assert_allclose(host, a + b, rtol=1e-6, atol=0)
    ptr = worker.malloc(a.nbytes)
    worker.copy_to(ptr, a, a.nbytes)
    back = np.empty_like(a)
    worker.copy_from(back, ptr, a.nbytes)
    np.testing.assert_array_equal(back, a)
    worker.free(ptr)
    worker.free_tensor(dout)
    worker.free_tensor(dout)  # idempotent
    with pytest.raises(ValueError, match="already freed"):
        worker.run(arts["add"], da, db, dout)


def test_compiled_call_uses_active_or_implicit_worker(arts: dict[str, Path]) -> None:
    from pypto.compiled import CompiledProgram

    compiled = CompiledProgram.from_dir(arts["add"])
    a, b = _rand(64, 64), _rand(64, 64)
    np.testing.assert_allclose(compiled(a, b), a + b, rtol=1e-6, atol=0)
    with ChipWorker() as w:
        out = np.zeros_like(a)
        assert compiled(a, b, out) is None
        assert w.last_run.num_tasks == 1
    np.testing.assert_allclose(out, a + b, rtol=1e-6, atol=0)


def test_kernel_fault_reports_task_and_kernel(tmp_path: Path) -> None:
    body = """\
    const ChipTensor& x = orch_args.tensor(0).ref();
    PTO2_SCOPE() {
        CoreTaskArgs p;
        p.add_inout(x);
        rt_submit_aiv_task(7, p);
    }
"""
    art = sk.write_artifact(tmp_path / "fault", "fault", sk.orchestration(1, body),
                            [sk.Kernel(7, "overflowing_kernel", "aiv", sk.FAULT_KERNEL)],
                            [sk.tensor_param("x", "InOut", [4])])
    with ChipWorker() as w:
        with pytest.raises(KernelFaultError) as exc:
            w.run(art, np.zeros(4, np.float32))
        msg = str(exc.value)
        assert "kernel fault in task 0 (kernel 'overflowing_kernel', func_id 7)" in msg
        assert "TASSIGN overflow" in msg
        with pytest.raises(KernelFaultError):  # the worker stays usable after a fault
            w.run(art, np.zeros(4, np.float32))


def test_orchestration_errors(tmp_path: Path) -> None:
    body = """\
    const ChipTensor& x = orch_args.tensor(5).ref();
    (void)x;
"""
    art = sk.write_artifact(tmp_path / "bad", "bad", sk.orchestration(1, body), [], [sk.tensor_param("x", "In", [4])])
    unknown = """\
    PTO2_SCOPE() {
        CoreTaskArgs p;
        p.add_input(orch_args.tensor(0).ref());
        rt_submit_aiv_task(3, p);
    }
"""
    art2 = sk.write_artifact(tmp_path / "unk", "unk", sk.orchestration(2, unknown),
                             [sk.Kernel(0, "add_k", "aiv", sk.ADD_KERNEL)], [])
    with ChipWorker() as w:
        with pytest.raises(OrchestrationError, match=r"orch_args.tensor\(5\): only 1 tensor argument"):
            w.run(art, np.zeros(4, np.float32))
        with pytest.raises(SimRuntimeError, match="arg_count 1 < expected 2"):
            w.run(art2, np.zeros(4, np.float32))
        with pytest.raises(OrchestrationError, match="func_id 3 .* is not a kernel of this program; known: 0=add_k"):
            w.run(art2, np.zeros(4, np.float32), 1)


def test_deadlock_is_reported_not_hung(tmp_path: Path) -> None:
    body = """\
    const ChipTensor& flag = orch_args.tensor(0).ref();
    PTO2_SCOPE() {
        CoreTaskArgs p;
        p.add_input(flag);
        rt_submit_aiv_task(0, p);
        CoreTaskArgs q;
        q.add_inout(flag);
        rt_submit_aiv_task(0, q);
    }
"""
    art = sk.write_artifact(tmp_path / "wait", "wait", sk.orchestration(1, body),
                            [sk.Kernel(0, "wait_for_flag", "aiv", sk.WAIT_KERNEL)],
                            [sk.tensor_param("flag", "InOut", [1], "int32")])
    with ChipWorker(RunConfig(deadlock_timeout_s=0.3)) as w:
        flag = w.alloc_tensor((1,), np.int32)
        t0 = time.monotonic()
        with pytest.raises(DeadlockError) as exc:
            w.run(art, flag)
        assert time.monotonic() - t0 < 5
        msg = str(exc.value)
        assert "no task finished for 300 ms" in msg and "kernel 'wait_for_flag'" in msg and "running on AIV" in msg
        with pytest.raises(SimRuntimeError, match="never returned"):
            w.run(art, flag)
        flag.numpy()[0] = 1  # release the stuck kernel; the worker recovers
        deadline = time.monotonic() + 5
        while True:
            try:
                w.run(art, flag)
                break
            except SimRuntimeError:
                assert time.monotonic() < deadline
                time.sleep(0.05)


def test_flow_control_deadlock(tmp_path: Path) -> None:
    body = """\
    const ChipTensor& x = orch_args.tensor(0).ref();
    PTO2_SCOPE() {
        for (int i = 0; i < 8; ++i) {
            CoreTaskArgs p;
            p.add_inout(x);
            rt_submit_aiv_task(0, p);
        }
    }
"""
    noop = sk.PLAIN_KERNEL_HEADER + 'extern "C" void kernel_entry(int64_t* args) { (void)args; }\n'
    art = sk.write_artifact(tmp_path / "ring", "ring", sk.orchestration(1, body),
                            [sk.Kernel(0, "noop", "aiv", noop)], [sk.tensor_param("x", "InOut", [4])])
    with ChipWorker() as w:
        w.run(art, np.zeros(4, np.float32))
        with pytest.raises(DeadlockError, match="Flow Control Deadlock Detected! ring 1 is full"):
            w.run(art, np.zeros(4, np.float32), config=RunConfig(ring_task_window=4))
        w.run(art, np.zeros(4, np.float32), config=RunConfig(ring_task_window=16))
    with ChipWorker(runtime="host_build_graph") as w:
        hbg = sk.write_artifact(tmp_path / "ring-hbg", "ring", sk.orchestration(1, body),
                                [sk.Kernel(0, "noop", "aiv", noop)], [sk.tensor_param("x", "InOut", [4])],
                                runtime="host_build_graph")
        with pytest.raises(OrchestrationError, match="host_build_graph: the graph needs more than 3"):
            w.run(hbg, np.zeros(4, np.float32), config=RunConfig(ring_task_window=4))


@pytest.mark.parametrize("runtime", ["tensormap_and_ringbuffer", "host_build_graph"])
def test_dlopen_counters_count_one_open_per_registered_program(arts: dict[str, Path], runtime: str) -> None:
    a, b = _rand(64, 64), _rand(64, 64)
    s = np.float32(0.5)
    with ChipWorker(runtime=runtime) as w:
        assert (w.aicpu_dlopen_count, w.host_dlopen_count) == (0, 0)
        handle = w.register(arts[f"dag-{runtime}"])
        for _ in range(3):
            handle(a, b, np.zeros_like(a), s)
        w.register(arts[f"dag-{runtime}"])  # already loaded and unchanged: no second open
        opened = (0, 1) if runtime == "host_build_graph" else (1, 0)
        assert (w.aicpu_dlopen_count, w.host_dlopen_count) == opened
