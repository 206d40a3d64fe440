"""Running compiled programs on the CPU simulation platforms ``a2a3sim`` / ``a5sim``.

``ChipWorker`` owns one simulated chip; ``compiled(*args)`` and :func:`run` use an active or implicit
worker; :func:`benchmark` times registered calls; :func:`run_pto` runs a hand-written ``.pto`` kernel.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from pypto.runtime.config import RunConfig
from pypto.runtime.dispatch import DeviceTensor
from pypto.runtime.native import DeadlockError, KernelFaultError, OrchestrationError, SimRuntimeError
from pypto.runtime.worker import ChipWorker, RegistrationHandle

if TYPE_CHECKING:
    from pypto.runtime.harness import BenchmarkResult, RunResult, benchmark, run
    from pypto.runtime.pto_runner import PreparedPto, prepare_pto, run_pto

# Imported on first use: a process that only calls compiled programs does not pay for them.
_LAZY = {"BenchmarkResult": "harness", "RunResult": "harness", "benchmark": "harness", "run": "harness",
         "PreparedPto": "pto_runner", "prepare_pto": "pto_runner", "run_pto": "pto_runner"}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"pypto.runtime.{module}"), name)
    globals()[name] = value
    return value


__all__ = [
    "BenchmarkResult",
    "ChipWorker",
    "DeadlockError",
    "DeviceTensor",
    "KernelFaultError",
    "OrchestrationError",
    "PreparedPto",
    "RegistrationHandle",
    "RunConfig",
    "RunResult",
    "SimRuntimeError",
    "benchmark",
    "prepare_pto",
    "run",
    "run_pto",
]
