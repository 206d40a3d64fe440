"""A task graph that can never finish is reported as a DeadlockError naming the waiting tasks, not a
hang: task 0 spins until a flag is set, and the only task that sets it depends on task 0."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
import pytest
from relkit import REPO, needs_gxx

from pypto.runtime import ChipWorker, DeadlockError, RunConfig
from pypto.runtime.native import SimRuntimeError

sys.path.insert(0, str(REPO / "tests" / "runtime"))
import simkit as sk  # noqa: E402

pytestmark = [needs_gxx, pytest.mark.sim]

SET_KERNEL = sk.PLAIN_KERNEL_HEADER + """\
extern "C" void kernel_entry(int64_t* args) {
    auto* f = reinterpret_cast<ChipTensor*>(args[0]);
    __atomic_store_n(f->data<int32_t>(), 1, __ATOMIC_RELEASE);
}
"""

CYCLE = """\
    const ChipTensor& flag = orch_args.tensor(0).ref();
    PTO2_SCOPE() {
        CoreTaskArgs waiter;
        waiter.add_inout(flag);           // task 0: spins until flag != 0
        rt_submit_aiv_task(0, waiter);
        CoreTaskArgs setter;
        setter.add_inout(flag);           // task 1: sets flag, but TensorMap orders it after task 0
        rt_submit_aiv_task(1, setter);
    }
"""


def test_cyclic_wait_is_a_deadlock_error_naming_the_waiting_tasks(tmp_path: Path) -> None:
    art = sk.write_artifact(tmp_path / "cycle", "cycle", sk.orchestration(1, CYCLE),
                            [sk.Kernel(0, "wait_for_flag", "aiv", sk.WAIT_KERNEL),
                             sk.Kernel(1, "set_flag", "aiv", SET_KERNEL)],
                            [sk.tensor_param("flag", "InOut", [1], "int32")])
    with ChipWorker(RunConfig(deadlock_timeout_s=0.5)) as w:
        flag = w.alloc_tensor((1,), np.int32)
        t0 = time.monotonic()
        with pytest.raises(DeadlockError) as exc:
            w.run(art, flag)
        assert time.monotonic() - t0 < 10
        msg = str(exc.value)
        assert "deadlock: no task finished for 500 ms" in msg, msg
        assert "task 0 (aiv0 kernel 'wait_for_flag' func_id 0): running on AIV core" in msg, msg
        assert "task 1 (aiv0 kernel 'set_flag' func_id 1): waiting for task 0" in msg, msg
        flag.numpy()[0] = 1  # break the cycle from the host: the stuck kernel returns, the worker recovers
        deadline = time.monotonic() + 10
        while True:
            try:
                w.run(art, flag)
                break
            except SimRuntimeError:
                assert time.monotonic() < deadline
                time.sleep(0.05)
        assert flag.numpy()[0] == 1
