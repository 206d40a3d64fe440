"""ctypes view of the simulation runtime library (``pypto/runtime/sim/src/sim_capi.h``)."""

from __future__ import annotations

import ctypes
import os
from dataclasses import dataclass
from pathlib import Path

from pypto.errors import InternalError, PyptoError

MAX_DIMS = 5
NO_OWNER = (1 << 64) - 1
ERR_LEN = 8192
CAPI_VERSION = 4


class ChipTensor(ctypes.Structure):
    """Mirror of the C++ ``ChipTensor`` (128 bytes, two cache lines)."""

    _fields_ = [
        ("buffer_addr", ctypes.c_uint64),
        ("buffer_size", ctypes.c_uint64),
        ("owner_task_id", ctypes.c_uint64),
        ("start_offset", ctypes.c_uint64),
        ("version", ctypes.c_int32),
        ("ndims", ctypes.c_uint32),
        ("dtype", ctypes.c_uint8),
        ("manual_dep", ctypes.c_uint8),
        ("is_contiguous", ctypes.c_uint8),
        ("address_space", ctypes.c_uint8),
        ("shapes", ctypes.c_uint32 * MAX_DIMS),
        ("extent_elem_cache", ctypes.c_uint64),
        ("strides", ctypes.c_uint32 * MAX_DIMS),
        ("reserved", ctypes.c_uint8 * 36),
    ]


# Bits of PtoSimRunConfig.dfx (src/dfx.h).
DFX_SWIMLANE_MASK = 0x7
DFX_DEPS = 1 << 3
DFX_ARGS = 1 << 4
DFX_TASKS = 1 << 5
DFX_SCOPES = 1 << 6
DFX_ARGS_TAGGED = 1 << 7


class RunConfigC(ctypes.Structure):
    """Mirror of ``PtoSimRunConfig``."""

    _fields_ = [
        ("timeout_ms", ctypes.c_int64),
        ("ring_task_window", ctypes.c_uint64),
        ("log_level", ctypes.c_int32),
        ("dfx", ctypes.c_int32),
    ]


class RunStatsC(ctypes.Structure):
    """Mirror of ``PtoSimRunStats``."""

    _fields_ = [("num_tasks", ctypes.c_uint64), ("orch_ns", ctypes.c_uint64), ("device_ns", ctypes.c_uint64)]


assert ctypes.sizeof(ChipTensor) == 128


class SimRuntimeError(PyptoError, RuntimeError):
    """A simulated run failed; ``status`` is the C status code."""

    def __init__(self, message: str, status: int = 0) -> None:
        self.status = status
        super().__init__(message)


class KernelFaultError(SimRuntimeError):
    """A kernel raised (for example ``pto::SimError`` on a buffer overflow)."""


class DeadlockError(SimRuntimeError):
    """Tasks stopped making progress; the message lists the pending tasks."""


class OrchestrationError(SimRuntimeError):
    """The orchestration function threw or reported a fatal error."""


class WorkerBrokenError(SimRuntimeError):
    """A kernel of an earlier run never returned; the worker must be recreated."""


class LoadError(SimRuntimeError):
    """A kernel or orchestration ``.so`` could not be loaded (or was built for another orchestration ABI)."""


class CommTimeoutError(DeadlockError):
    """A comm WAIT/BARRIER did not see its value in time; the message names rank, cell, expected and last value."""


STATUS_ERRORS: dict[int, type[SimRuntimeError]] = {
    1: SimRuntimeError,
    2: OrchestrationError,
    3: KernelFaultError,
    4: DeadlockError,
    5: WorkerBrokenError,
    6: LoadError,
    7: CommTimeoutError,
}


def raise_status(status: int, err: ctypes.Array, context: str) -> None:
    """Raise the exception class for a non-zero status with the C message."""
    if status:
        text = err.value.decode(errors="replace")
        raise STATUS_ERRORS.get(status, SimRuntimeError)(f"{context}: {text}", status)


_P = ctypes.c_void_p
_S = ctypes.c_char_p
_SIGS: dict[str, tuple[object, list[object]]] = {
    "pto_sim_capi_version": (ctypes.c_int32, []),
    "pto_sim_identity": (_S, []),
    "pto_sim_chip_tensor_size": (ctypes.c_uint32, []),
    "pto_sim_worker_create": (_P, [ctypes.c_int32, _S, ctypes.c_size_t]),
    "pto_sim_worker_destroy": (None, [_P]),
    "pto_sim_worker_set_comm": (ctypes.c_int32, [_P, ctypes.c_int32, ctypes.c_int32, ctypes.c_uint64, ctypes.c_uint64,
                                                 ctypes.c_int64, ctypes.c_uint64, _S, ctypes.c_size_t]),
    "pto_sim_load_extras": (ctypes.c_int32, [_S, _S, ctypes.c_size_t]),
    "pto_sim_program_load": (_P, [_S, _S, ctypes.c_size_t]),
    "pto_sim_program_add_kernel": (ctypes.c_int32, [_P, ctypes.c_int32, _S, ctypes.c_int32, _S, _S, ctypes.c_size_t]),
    "pto_sim_program_free": (None, [_P]),
    "pto_sim_run": (ctypes.c_int32, [_P, _P, _P, ctypes.c_uint32, _P, ctypes.c_uint32, _P, _P, _S, ctypes.c_size_t]),
    "pto_sim_dfx_records": (None, [_P, ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_uint64),
                                   ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_uint64)]),
    "pto_sim_malloc": (_P, [ctypes.c_uint64]),
    "pto_sim_free": (None, [_P]),
}


@dataclass(frozen=True, slots=True)
class NativeLib:
    """A loaded runtime library and its identity (``<platform>/<runtime>``)."""

    path: Path
    lib: ctypes.CDLL
    identity: str


_LOADED: dict[Path, NativeLib] = {}
_WITH_EXTRAS: set[Path] = set()  # runtime libraries that loaded the extras (comm tasks, DFX recording)


def has_extras(native: NativeLib) -> bool:
    """True once ``native`` loaded the extras library (:func:`load_extras`)."""
    return native.path in _WITH_EXTRAS


def load_extras(native: NativeLib, path: Path) -> None:
    """Have ``native`` dlopen the extras library at ``path`` (once); :class:`LoadError` if it cannot."""
    if native.path in _WITH_EXTRAS:
        return
    err = ctypes.create_string_buffer(ERR_LEN)
    raise_status(native.lib.pto_sim_load_extras(os.fspath(path).encode(), err, ERR_LEN), err,
                 "loading the runtime extras (comm tasks, DFX)")
    _WITH_EXTRAS.add(native.path)


def dfx_records(native: NativeLib, worker: int) -> tuple[bytes, bytes]:
    """(JSON records, argument-dump bytes) of the worker's last run; empty when it recorded nothing."""
    js, jn, bs, bn = ctypes.c_void_p(), ctypes.c_uint64(), ctypes.c_void_p(), ctypes.c_uint64()
    native.lib.pto_sim_dfx_records(worker, ctypes.byref(js), ctypes.byref(jn), ctypes.byref(bs), ctypes.byref(bn))
    text = ctypes.string_at(js.value, jn.value) if jn.value else b""
    blob = ctypes.string_at(bs.value, bn.value) if bn.value else b""
    return text, blob


def load(path: Path) -> NativeLib:
    """Load (once per path) a runtime library built by :func:`pypto.runtime.build.runtime_library`."""
    if path in _LOADED:
        return _LOADED[path]
    lib = ctypes.CDLL(os.fspath(path), mode=ctypes.RTLD_GLOBAL)
    for name, (res, args) in _SIGS.items():
        fn = getattr(lib, name)
        fn.restype = res
        fn.argtypes = args
    if lib.pto_sim_capi_version() != CAPI_VERSION or lib.pto_sim_chip_tensor_size() != 128:
        raise InternalError(f"{path}: runtime library ABI does not match this pypto (rebuild the cache)")
    native = NativeLib(path, lib, lib.pto_sim_identity().decode())
    _LOADED[path] = native
    return native
