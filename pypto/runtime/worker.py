"""ChipWorker: one simulated chip (8 clusters = 8 AIC + 16 AIV core threads) that runs compiled programs."""

from __future__ import annotations

import atexit
import ctypes
import itertools
import os
import time
import weakref
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from pypto.artifact.directory import ArtifactInfo
from pypto.runtime import build, dtypes, native
from pypto.runtime.config import RunConfig
from pypto.runtime.dispatch import (
    CallPlan,
    DeviceTensor,
    artifact_of,
    bind_args,
    bind_planned,
    plan_of,
    platform_of,
)
from pypto.runtime.log_config import sim_log_level
from pypto.runtime.runtime_base import Worker
from pypto.toolchain.platforms import HARDWARE_PLATFORMS

RUNTIMES = ("tensormap_and_ringbuffer", "host_build_graph")
NUM_CLUSTERS = 8
CORE_TYPES = {"aic": 0, "aiv": 1}

_ACTIVE: ContextVar[tuple[ChipWorker, ...]] = ContextVar("pypto_active_chip_workers", default=())
_IMPLICIT: dict[tuple[str, str], ChipWorker] = {}
_CIDS = itertools.count(1)
_LIVE: weakref.WeakSet[ChipWorker] = weakref.WeakSet()  # initialized workers (fork safety)


def live_worker_count() -> int:
    """Initialized ChipWorkers of this process (their core threads run until close())."""
    return sum(1 for w in list(_LIVE) if w.initialized)


@dataclass
class LoadedProgram:
    """An artifact loaded into a worker: the native program handle and source mtimes it was built from."""

    info: ArtifactInfo
    platform: str
    handle: int
    stamp: tuple[float, ...]
    built: build.BuiltProgram
    plan: CallPlan | None = None  # how the last planned call was packed (dispatch.bind_planned)


@dataclass
class RunStats:
    """Timing of the last run: host wall (whole call) and device wall (orchestration start to last task)."""

    num_tasks: int = 0
    host_s: float = 0.0
    orch_s: float = 0.0
    device_s: float = 0.0


def _stamp(info: ArtifactInfo) -> tuple[float, ...]:
    paths = [info.orchestration, *(k.source for k in info.kernels)]
    return tuple(p.stat().st_mtime if p.exists() else -1.0 for p in paths)


@dataclass(eq=False)
class RegistrationHandle:
    """A program registered on a worker: call it like the program; loading is already done."""

    worker: ChipWorker
    compiled: Any
    program: LoadedProgram
    cid: int = field(default_factory=lambda: next(_CIDS))
    closed: bool = False

    def __call__(self, *args: Any, config: RunConfig | None = None) -> Any:
        if self.closed:
            raise RuntimeError(f"RegistrationHandle {self.cid} was unregistered")
        return self.worker._run_loaded(self.program, args, config)

    def unregister(self) -> None:
        """Forget the handle (the loaded program stays cached in the worker until close)."""
        self.closed = True

    def __enter__(self) -> RegistrationHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.unregister()


class ChipWorker:
    """A simulated device: core threads plus the programs and device tensors loaded into it.

    Args:
        config: RunConfig giving the platform (default ``RunConfig()``, i.e. ``a2a3sim``).
        level: must be 2 (one chip).
        runtime: ``tensormap_and_ringbuffer`` (default) or ``host_build_graph``.
        enable_sdma: accepted for compatibility; the simulator has no SDMA engine.
        auto_init: call :meth:`init` now (default True).
        comm: the :class:`~pypto.runtime.distributed.CommContext` of this rank, for programs that submit
            comm tasks (a rank process of a distributed run); see :meth:`set_comm_context`.
    """

    def __init__(self, config: RunConfig | None = None, *, level: int = 2,
                 runtime: str = "tensormap_and_ringbuffer", enable_sdma: bool = False,
                 auto_init: bool | None = None, comm: Any = None) -> None:
        if level != 2:
            raise ValueError(f"ChipWorker only supports level=2 (one chip), got level={level}")
        if runtime not in RUNTIMES:
            raise ValueError(f"Unknown runtime '{runtime}': expected one of {', '.join(RUNTIMES)}")
        self.config = config or RunConfig()
        self._level = level
        self._runtime = runtime
        self.enable_sdma = enable_sdma
        self._native: native.NativeLib | None = None
        self._handle: int | None = None
        self._programs: dict[tuple[str, str], LoadedProgram] = {}
        self._tensors: dict[int, DeviceTensor] = {}
        self._buffers: set[int] = set()
        self._err = ctypes.create_string_buffer(native.ERR_LEN)
        self._stats = native.RunStatsC()
        self._last_ccfg: tuple[tuple[int, int, int], native.RunConfigC] | None = None
        self.last_run = RunStats()
        self.host_dlopen_count = 0
        self.last_dfx_dir: Any = None  # dfx_outputs/ of the last run that recorded diagnostics
        self.aicpu_dlopen_count = 0
        self.comm = comm
        self.dfx_location: tuple[Any, str] | None = None
        self._dfx_runs = 0
        if auto_init is None or auto_init:
            self.init()

    # -- identity -----------------------------------------------------------------------------------
    level = property(lambda self: self._level)
    platform = property(lambda self: self.config.platform)
    device_id = property(lambda self: self.config.device_id)
    runtime = property(lambda self: self._runtime)
    initialized = property(lambda self: self._handle is not None)

    def binding(self) -> tuple[int, str, int, str]:
        """(level, platform, device_id, runtime)."""
        return (self._level, self.platform, self.device_id, self._runtime)

    @classmethod
    def current(cls, level: int = 2, platform: str | None = None, device_id: int = 0, runtime: str | None = None,
                require_sdma: bool = False) -> ChipWorker | None:
        """The innermost active (``with``) worker matching the given binding, if any."""
        for w in reversed(_ACTIVE.get()):
            if (w.level == level and platform in (None, w.platform) and w.device_id == device_id
                    and runtime in (None, w.runtime) and (w.enable_sdma or not require_sdma)):
                return w
        return None

    # -- lifecycle ----------------------------------------------------------------------------------
    def _load_runtime(self) -> native.NativeLib:
        """Load the runtime library (see :func:`_load_healing`)."""
        return _load_healing(lambda: build.runtime_library(self.platform, self._runtime), native.load, OSError,
                             "runtime library")

    def _need_extras(self) -> None:
        """Load the extras (comm tasks, DFX recording) into the runtime library, building them on first need."""
        if not native.has_extras(self._native):
            _load_healing(build.runtime_extras, lambda path: native.load_extras(self._native, path),
                          native.LoadError, "runtime extras library")

    def init(self) -> ChipWorker:
        """Build/load the runtime library and start the core threads (idempotent)."""
        if self._handle is not None:
            return self
        self._native = self._load_runtime()
        handle = self._native.lib.pto_sim_worker_create(NUM_CLUSTERS, self._err, native.ERR_LEN)
        if not handle:
            raise native.SimRuntimeError(f"cannot create a simulated chip: {self._err.value.decode()}")
        self._handle = handle
        _LIVE.add(self)
        if self.comm is not None:
            self.set_comm_context(self.comm)
        return self

    def set_comm_context(self, ctx: Any) -> None:
        """Use ``ctx`` (a CommContext, or None to clear it) for the runs that follow on this worker.

        Comm tasks of a run need it: their window tensors must lie in the context's arena, and
        ``rt_comm_rank()`` / ``rt_comm_nranks()`` read it.
        """
        self.comm = ctx
        if self._handle is None:
            return
        if ctx is None:
            args = (-1, 0, 0, 0, 0, 0)
        else:
            self._need_extras()
            args = (ctx.rank, ctx.nranks, ctx.arena_base, ctx.region_bytes, int(ctx.wait_timeout_s * 1000),
                    ctx.status_address)
        status = self._native.lib.pto_sim_worker_set_comm(self._handle, *args, self._err, native.ERR_LEN)
        native.raise_status(status, self._err, "set_comm_context")

    def close(self) -> None:
        """Free programs, device tensors and buffers, and stop the core threads (idempotent)."""
        if self._handle is None:
            return
        lib = self._native.lib
        for prog in self._programs.values():
            lib.pto_sim_program_free(prog.handle)
        self._programs.clear()
        for t in self._tensors.values():
            t.freed = True
            lib.pto_sim_free(t.data_ptr)
        self._tensors.clear()
        for ptr in self._buffers:
            lib.pto_sim_free(ptr)
        self._buffers.clear()
        lib.pto_sim_worker_destroy(self._handle)
        self._handle = None

    def __enter__(self) -> ChipWorker:
        active = _ACTIVE.get()
        if any(w.binding() == self.binding() for w in active):
            raise ValueError(f"A ChipWorker for {self.binding()} is already active in an enclosing scope; "
                             "reuse it instead of opening a second one.")
        self.init()
        self._token = _ACTIVE.set((*active, self))
        return self

    def __exit__(self, *exc: object) -> None:
        _ACTIVE.reset(self._token)
        self.close()

    def _require_init(self, op: str) -> None:
        if self._handle is None:
            raise RuntimeError(f"ChipWorker.{op}() requires an initialized ChipWorker. Use `with chipworker:` or "
                               "call `chipworker.init()` first.")

    # -- programs -----------------------------------------------------------------------------------
    def _check_binding(self, compiled: Any, info: ArtifactInfo) -> None:
        platform = platform_of(compiled, info)
        runtime = getattr(compiled, "runtime_name", None) or info.runtime
        if platform != self.platform:
            raise ValueError(f"CompiledProgram.platform={platform!r} does not match ChipWorker.platform="
                             f"{self.platform!r}. Compile for the matching platform, or construct "
                             f"ChipWorker(config=RunConfig(platform={platform!r})).")
        if runtime != self._runtime:
            raise ValueError(f"CompiledProgram requires runtime={runtime!r} but ChipWorker was constructed with "
                             f"runtime={self._runtime!r}. Construct ChipWorker(..., runtime={runtime!r}).")
        if info.runtime_config.get("enable_sdma") and not self.enable_sdma:
            raise RuntimeError("ChipWorker was created without enable_sdma=True")

    def _load(self, info: ArtifactInfo) -> LoadedProgram:
        key = (str(info.root), self.platform)
        prog = self._programs.get(key)
        if prog is not None and prog.info is info and prog.stamp == _stamp(info):
            return prog
        from pypto.toolchain.cachefs import dir_lock

        with dir_lock(info.root, shared=True, create=False):  # not while a compile rewrites the dir
            built = build.build_artifact(info, self.platform)
        lib = self._native.lib
        handle = lib.pto_sim_program_load(os.fspath(built.orchestration).encode(), self._err, native.ERR_LEN)
        if not handle:
            native.raise_status(6, self._err, f"loading {info.orchestration}")
        for spec, so in built.kernels:
            status = lib.pto_sim_program_add_kernel(handle, spec.func_id, spec.name.encode(),
                                                    CORE_TYPES.get(spec.core_type, 1), os.fspath(so).encode(),
                                                    self._err, native.ERR_LEN)
            if status:
                lib.pto_sim_program_free(handle)
                native.raise_status(status, self._err, f"loading kernel '{spec.name}'")
        if prog is not None:
            lib.pto_sim_program_free(prog.handle)
        self._count_dlopen()
        self._programs[key] = LoadedProgram(info, self.platform, handle, _stamp(info), built)
        return self._programs[key]

    def _count_dlopen(self) -> None:
        """One more orchestration library opened for a callable, counted where its orchestration runs.

        Under ``tensormap_and_ringbuffer`` the orchestration runs on the (simulated) AICPU
        (``aicpu_dlopen_count``); under ``host_build_graph`` it runs on the host (``host_dlopen_count``).
        A program already loaded and unchanged is not opened again, so repeated runs leave both as is.
        """
        if self._runtime == "host_build_graph":
            self.host_dlopen_count += 1
        else:
            self.aicpu_dlopen_count += 1

    def register(self, compiled: Any) -> RegistrationHandle:
        """Build and load ``compiled`` now; the returned handle runs it with minimal per-call overhead."""
        self._require_init("register")
        info = artifact_of(compiled)
        self._check_binding(compiled, info)
        return RegistrationHandle(self, compiled, self._load(info))

    def run(self, compiled: Any, *args: Any, config: RunConfig | None = None) -> Any:
        """Check the binding, then run like ``compiled(*args)``."""
        self._require_init("run")
        info = artifact_of(compiled)
        self._check_binding(compiled, info)
        return self._run_loaded(self._load(info), args, config)

    def execute(self, info: ArtifactInfo, args: tuple[Any, ...], config: RunConfig | None = None) -> Any:
        """Run an artifact on this worker's platform without the binding check (``compiled(...)`` path)."""
        self._require_init("run")
        if info.runtime != self._runtime:
            self._check_binding(info, info)
        return self._run_loaded(self._load(info), args, config)

    def _run_loaded(self, prog: LoadedProgram, args: tuple[Any, ...], config: RunConfig | None) -> Any:
        self._require_init("run")
        t0 = time.perf_counter()
        bound = bind_planned(prog.plan, args) if prog.plan is not None else None
        if bound is None:
            bound = bind_args(prog.info, args)
            prog.plan = plan_of(args, bound)
        cfg = config or self.config
        dfx_on = cfg.dfx_enabled
        dfx_flags = 0
        if dfx_on:
            dfx_flags = _dfx_flags(cfg)
            self._need_extras()
        ccfg = self._run_config(cfg, dfx_flags)
        status = self._native.lib.pto_sim_run(
            self._handle, prog.handle, ctypes.addressof(bound.tensors), bound.num_tensors,
            ctypes.addressof(bound.scalars), bound.num_scalars, ctypes.byref(ccfg), ctypes.byref(self._stats),
            self._err, native.ERR_LEN)
        st = self._stats
        self.last_run = RunStats(st.num_tasks, time.perf_counter() - t0, st.orch_ns * 1e-9, st.device_ns * 1e-9)
        if dfx_on:
            self._write_dfx(prog, cfg)
        if status:
            native.raise_status(status, self._err, f"running {prog.info.root.name} on {self.platform}")
        return bound.result()

    def _run_config(self, cfg: RunConfig, dfx_flags: int) -> native.RunConfigC:
        """The C run config for ``cfg``; the last one is reused while its values stay the same (never mutated)."""
        key = (int(cfg.deadlock_timeout_s * 1000), cfg.task_window if cfg.ring_task_window else 0, sim_log_level(),
               dfx_flags)
        last = self._last_ccfg
        if last is None or last[0] != key:
            last = self._last_ccfg = (key, native.RunConfigC(*key))
        return last[1]

    def _write_dfx(self, prog: LoadedProgram, cfg: RunConfig) -> None:
        from pypto.runtime import dfx

        text, blob = native.dfx_records(self._native, self._handle)
        names = {k.func_id: k.name for k in prog.info.kernels}
        root, sub = prog.info.root, None
        if self.dfx_location is not None:
            root, sub = self.dfx_location
        elif self.comm is not None:  # ranks of one program: dfx_outputs/rank<r>/d<k>, k = this worker's run
            sub = f"rank{self.comm.rank}/d{self._dfx_runs}"
            self._dfx_runs += 1
        self.last_dfx_dir = dfx.write_outputs(root, names, self.platform, cfg, text, blob, sub)

    def set_dfx_location(self, root: Any, subdir: str) -> None:
        """Write the DFX records of the runs that follow to ``<root>/dfx_outputs/<subdir>/`` (None: default).

        Default: the artifact's ``dfx_outputs/``; with a comm context ``dfx_outputs/rank<r>/d<k>/`` (k counts
        this worker's runs that recorded diagnostics). A distributed program points every rank's dispatch
        ``k`` at its own directory with this.
        """
        self.dfx_location = None if root is None else (Path(root), str(subdir))

    # -- memory -------------------------------------------------------------------------------------
    def alloc_tensor(self, shape: Any, dtype: Any, *, init: Any = None, worker_id: int = 0) -> DeviceTensor:
        """Allocate a device tensor, optionally filled from an array or scalar ``init``."""
        self._require_init("alloc_tensor")
        shape = (int(shape),) if np.isscalar(shape) else tuple(int(s) for s in shape)
        dt = dtypes.coerce(dtype)
        nbytes = int(np.prod(shape, dtype=np.int64)) * dt.itemsize
        ptr = self._native.lib.pto_sim_malloc(nbytes)
        if not ptr:
            raise MemoryError(f"cannot allocate {nbytes} bytes of device memory")
        t = DeviceTensor(ptr, shape, dt, buffer=self)
        view = t.numpy()
        view[...] = 0 if init is None else np.asarray(init).astype(view.dtype, copy=False)
        self._tensors[ptr] = t
        return t

    def free_tensor(self, t: DeviceTensor, *, worker_id: int = 0) -> None:
        """Free a device tensor (idempotent)."""
        if self._tensors.pop(t.data_ptr, None) is not None and self._handle is not None:
            self._native.lib.pto_sim_free(t.data_ptr)
        t.freed = True

    def malloc(self, nbytes: int) -> int:
        """Raw device allocation; returns the address."""
        self._require_init("malloc")
        ptr = self._native.lib.pto_sim_malloc(int(nbytes))
        if not ptr:
            raise MemoryError(f"cannot allocate {nbytes} bytes of device memory")
        self._buffers.add(ptr)
        return ptr

    def free(self, ptr: int) -> None:
        """Free a :meth:`malloc` allocation (idempotent)."""
        if ptr in self._buffers:
            self._buffers.discard(ptr)
            self._native.lib.pto_sim_free(ptr)

    def copy_to(self, dst: int, src: Any, nbytes: int) -> None:
        """Host -> device copy; ``src`` is an address or a numpy array."""
        ctypes.memmove(int(dst), _address(src), int(nbytes))

    def copy_from(self, dst: Any, src: int, nbytes: int) -> None:
        """Device -> host copy; ``dst`` is an address or a numpy array."""
        ctypes.memmove(_address(dst), int(src), int(nbytes))


def _load_healing(path_of: Callable[[], Path], load: Callable[[Path], Any], refused: type[Exception],
                  what: str) -> Any:
    """``load(path_of())``; a file the loader refuses is removed, rebuilt and loaded once more."""
    from pypto.errors import ToolchainError
    from pypto.toolchain import cachefs

    path = path_of()
    try:
        return load(path)
    except refused as exc:
        cachefs.discard(path, what, f"cannot be loaded ({exc})")
    path = path_of()
    try:
        return load(path)
    except refused as exc:
        raise ToolchainError(f"the simulation {what} {path} cannot be loaded: {exc}",
                             hint="check the g++ installation (`pypto doctor`)") from exc


def _dfx_flags(cfg: RunConfig) -> int:
    from pypto.runtime.dfx import flags_of

    return flags_of(cfg)


def _address(x: Any) -> int:
    if isinstance(x, np.ndarray):
        return x.__array_interface__["data"][0]
    if hasattr(x, "data_ptr"):
        return int(x.data_ptr() if callable(x.data_ptr) else x.data_ptr)
    return int(x)


def implicit_worker(platform: str, runtime: str) -> ChipWorker:
    """A process-wide worker per (platform, runtime), used when no ``with ChipWorker`` is active."""
    key = (platform, runtime)
    w = _IMPLICIT.get(key)
    if w is None or not w.initialized:
        w = ChipWorker(RunConfig(platform=platform), runtime=runtime)
        _IMPLICIT[key] = w
    return w


@atexit.register
def close_implicit_workers() -> None:
    """Close the process-wide implicit workers (recreated on the next ``compiled(...)`` call)."""
    for w in _IMPLICIT.values():
        w.close()
    _IMPLICIT.clear()


def call_compiled(compiled: Any, args: tuple[Any, ...], config: Any = None) -> Any:
    """Run ``compiled`` with ``args`` on an active matching ChipWorker, or on a cached implicit one.

    ``config.platform`` (if a config is given) selects the platform; kernels are rebuilt for it.
    """
    info = artifact_of(compiled)
    platform = config.platform if config is not None else platform_of(compiled, info)
    if platform in HARDWARE_PLATFORMS:
        build.check_platform(platform, info)  # names CANN, the tools and the commands it would run
    worker = ChipWorker.current(platform=platform, runtime=info.runtime)
    if worker is None:
        implicit = _IMPLICIT.get((platform, info.runtime))
        if implicit is None or not implicit.initialized:  # the process's first call: the runtime loads (or
            build.prebuild_artifact(info.root, platform)  # builds) while the kernels build, not before them
        worker = implicit_worker(platform, info.runtime)
    return worker.execute(info, args, config)


Worker.register(ChipWorker)
