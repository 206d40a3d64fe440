"""Running compiled programs on the CPU simulation platforms ``a2a3sim`` / ``a5sim``.

``ChipWorker`` owns one simulated chip; ``compiled(*args)`` and :func:`run` use an active or implicit
worker; :func:`benchmark` times registered calls.
"""

from pypto.runtime.config import RunConfig
from pypto.runtime.dispatch import DeviceTensor
from pypto.runtime.harness import BenchmarkResult, RunResult, benchmark, run
from pypto.runtime.native import DeadlockError, KernelFaultError, OrchestrationError, SimRuntimeError
from pypto.runtime.worker import ChipWorker, RegistrationHandle

__all__ = [
    "BenchmarkResult",
    "ChipWorker",
    "DeadlockError",
    "DeviceTensor",
    "KernelFaultError",
    "OrchestrationError",
    "RegistrationHandle",
    "RunConfig",
    "RunResult",
    "SimRuntimeError",
    "benchmark",
    "run",
]
