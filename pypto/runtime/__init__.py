"""Running compiled programs on the CPU simulation platforms ``a2a3sim`` / ``a5sim``.

``ChipWorker`` owns one simulated chip; ``compiled(*args)`` and :func:`run` use an active or implicit
worker; :func:`benchmark` times registered calls; :func:`run_pto` runs a hand-written ``.pto`` kernel.
"""

from pypto.runtime.config import RunConfig
from pypto.runtime.dispatch import DeviceTensor
from pypto.runtime.harness import BenchmarkResult, RunResult, benchmark, run
from pypto.runtime.native import DeadlockError, KernelFaultError, OrchestrationError, SimRuntimeError
from pypto.runtime.pto_runner import PreparedPto, prepare_pto, run_pto
from pypto.runtime.worker import ChipWorker, RegistrationHandle

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
