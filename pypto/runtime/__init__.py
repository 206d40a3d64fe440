"""Running compiled programs on the CPU simulation platforms ``a2a3sim`` / ``a5sim``.

Floor: above ``artifact``, ``ir``, ``toolchain`` and ``errors``; it reads artifact directories, builds
and runs them, and never compiles. ``ChipWorker`` owns one simulated chip; ``compiled(*args)`` uses an
active or implicit worker. :func:`run` (compile if needed, run, compare), :func:`benchmark` and
:func:`run_pto` (a hand-written ``.pto`` kernel) and :func:`compile_program` live in :mod:`pypto.flows`,
above both the driver and the runtime, and are re-exported here through ``_LAZY`` (the one declared
upward reach), as are :class:`DistributedWorker` and :func:`execute_distributed_compiled` (from
:mod:`pypto.jit.distributed`, which compiles and runs). :func:`execute_compiled` runs an artifact
directory with ordered arguments; the modules of upstream's ``pypto.runtime`` (``runner``, ``bench``,
``log_config``, ``device_tensor``, ``debug``, ``execute_artifact``, ...) exist under the same names.
"""

from __future__ import annotations

from pypto.lazy import lazy_getattr
from pypto.runtime.bench import BenchmarkStats, TraceInvocation, TraceSpan
from pypto.runtime.config import RunConfig
from pypto.runtime.device_tensor import DeviceTensor, StackedDeviceTensor
from pypto.runtime.distributed_runner import DistributedRunHandle
from pypto.runtime.log_config import _ensure_configured as _ensure_log_configured
from pypto.runtime.log_config import configure_log
from pypto.runtime.log_config import current_level as log_level
from pypto.runtime.native import DeadlockError, KernelFaultError, OrchestrationError, SimRuntimeError
from pypto.runtime.pto_isa import ensure_pto_isa_root, pto_isa_include_dir
from pypto.runtime.runner import execute_compiled
from pypto.runtime.runtime_base import Worker
from pypto.runtime.tensor_spec import ScalarSpec, TensorSpec
from pypto.runtime.worker import ChipWorker, RegistrationHandle

# Imported on first use (and declared: these names live above the runtime, in pypto.flows and pypto.jit).
_LAZY = {"BenchmarkResult": "pypto.flows.harness", "RunResult": "pypto.flows.harness",
         "benchmark": "pypto.flows.harness", "run": "pypto.flows.harness",
         "compile_program": "pypto.flows.harness",
         "PreparedPto": "pypto.flows.pto_runner", "prepare_pto": "pypto.flows.pto_runner",
         "run_pto": "pypto.flows.pto_runner", "DistributedWorker": "pypto.jit.distributed.worker",
         "execute_distributed_compiled": "pypto.jit.distributed.program"}

_ensure_log_configured()  # PYPTO_RUNTIME_LOG, before any run


__getattr__ = lazy_getattr(__name__, _LAZY, globals())


__all__ = [
    "BenchmarkResult",
    "BenchmarkStats",
    "ChipWorker",
    "DeadlockError",
    "DeviceTensor",
    "DistributedRunHandle",
    "DistributedWorker",
    "KernelFaultError",
    "OrchestrationError",
    "PreparedPto",
    "RegistrationHandle",
    "RunConfig",
    "RunResult",
    "ScalarSpec",
    "SimRuntimeError",
    "StackedDeviceTensor",
    "TensorSpec",
    "TraceInvocation",
    "TraceSpan",
    "Worker",
    "benchmark",
    "compile_program",
    "configure_log",
    "ensure_pto_isa_root",
    "execute_compiled",
    "execute_distributed_compiled",
    "log_level",
    "prepare_pto",
    "pto_isa_include_dir",
    "run",
    "run_pto",
]
