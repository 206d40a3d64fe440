"""Running compiled programs on the CPU simulation platforms ``a2a3sim`` / ``a5sim``.

Floor: above ``artifact``, ``ir``, ``toolchain`` and ``errors``; it reads artifact directories, builds
and runs them, and never compiles. ``ChipWorker`` owns one simulated chip; ``compiled(*args)`` uses an
active or implicit worker. :func:`run` (compile if needed, run, compare), :func:`benchmark` and
:func:`run_pto` (a hand-written ``.pto`` kernel) live in :mod:`pypto.flows`, above both the driver and
the runtime, and are re-exported here through ``_LAZY`` (the one declared upward reach), as is
:class:`DistributedWorker` (from :mod:`pypto.jit.distributed`, which compiles and runs).
"""

from __future__ import annotations

import importlib
from typing import Any

from pypto.runtime.config import RunConfig
from pypto.runtime.dispatch import DeviceTensor
from pypto.runtime.native import DeadlockError, KernelFaultError, OrchestrationError, SimRuntimeError
from pypto.runtime.tensor_spec import ScalarSpec, TensorSpec
from pypto.runtime.worker import ChipWorker, RegistrationHandle

# Imported on first use (and declared: these names live above the runtime, in pypto.flows).
_LAZY = {"BenchmarkResult": "pypto.flows.harness", "RunResult": "pypto.flows.harness",
         "benchmark": "pypto.flows.harness", "run": "pypto.flows.harness",
         "PreparedPto": "pypto.flows.pto_runner", "prepare_pto": "pypto.flows.pto_runner",
         "run_pto": "pypto.flows.pto_runner", "DistributedWorker": "pypto.jit.distributed.worker"}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    "BenchmarkResult",
    "ChipWorker",
    "DeadlockError",
    "DeviceTensor",
    "DistributedWorker",
    "KernelFaultError",
    "OrchestrationError",
    "PreparedPto",
    "RegistrationHandle",
    "RunConfig",
    "RunResult",
    "ScalarSpec",
    "SimRuntimeError",
    "TensorSpec",
    "benchmark",
    "prepare_pto",
    "run",
    "run_pto",
]
