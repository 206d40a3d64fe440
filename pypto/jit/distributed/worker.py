"""DistributedWorker: run prepared distributed programs, one forked process per rank.

A dispatch runs the program's host function (``orchestration/host_orch.py``) against a
:class:`~pypto.jit.distributed.plan.HostRecorder`, lays the window buffers out in one shared
:class:`~pypto.runtime.distributed.RankArena`, then runs the plan: each phase forks the ranks
(:func:`~pypto.runtime.distributed.run_ranks`), every rank runs its dispatches in order on its own
ChipWorker with its :class:`~pypto.runtime.distributed.CommContext`; a SubWorker callback runs in this
process between phases. Host tensors are shared memory (a non-shared one is staged through a shared
copy and copied back), so ranks write their outputs in place.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from pypto.errors import UserError
from pypto.jit.distributed.plan import Callback, Dispatch, HostRecorder, Phase, WindowView
from pypto.runtime.device_tensor import StackedDeviceTensor
from pypto.runtime.dispatch import DeviceTensor
from pypto.runtime.distributed_runner import ContinuousTensor, DistributedRunHandle
from pypto.runtime.runtime_base import Worker

RUN_TIMEOUT_S = 600.0


class DistributedWorker:
    """Prepared distributed programs sharing one set of ranks and resident tensors.

    ``DistributedWorker([a, b], callbacks={...})`` or ``a.prepare(extra_compiled=[b])``. ``rt(*args)``
    runs the only program (a TypeError with several: use ``rt.run(compiled, *args)``).
    ``alloc_tensor`` gives a resident tensor (shared memory every rank sees) valid across dispatches
    of any prepared program until ``free_tensor`` or ``close``.
    """

    def __init__(self, programs: Sequence[Any] | Any, config: Any = None, *,
                 callbacks: dict[str, Callable[..., Any]] | None = None,
                 sub_worker_overrides: dict[str, Callable[..., Any]] | None = None,
                 wait_timeout_s: float = 10.0, **_options: Any) -> None:
        progs = list(programs) if isinstance(programs, list | tuple) else [programs]
        if not progs:
            raise ValueError("DistributedWorker needs at least one DistributedCompiledProgram")
        first = progs[0]
        for p in progs[1:]:
            if p.platform != first.platform or p.device_ids != first.device_ids:
                raise ValueError(f"programs prepared on one DistributedWorker must agree on platform and device_ids: "
                                 f"{first.output_dir.name} has {first.platform} {first.device_ids}, "
                                 f"{p.output_dir.name} has {p.platform} {p.device_ids}")
        self.programs = progs
        self.callbacks = _check_callbacks(progs, {**(sub_worker_overrides or {}), **(callbacks or {})})
        self._resident: dict[int, Any] = {}
        self._closed = False
        self.wait_timeout_s = wait_timeout_s  # how long a comm wait may block before the run fails

    # -- lifecycle ------------------------------------------------------------------------------
    def close(self) -> None:
        """Release every resident tensor; the worker cannot dispatch afterwards."""
        self._resident.clear()
        self._closed = True

    def __enter__(self) -> DistributedWorker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- memory ---------------------------------------------------------------------------------
    def alloc_tensor(self, shape: Any, dtype: Any, *, init: Any = None, worker_id: int = 0) -> DeviceTensor:
        """A resident tensor in shared memory (zeroed, or filled from ``init``)."""
        import torch

        from pypto.runtime import dtypes
        from pypto.runtime.distributed import shared_array

        self._check_open("alloc_tensor")
        dt = dtypes.from_torch(dtype) if isinstance(dtype, torch.dtype) else dtypes.coerce(dtype)
        dims = (int(shape),) if np.isscalar(shape) else tuple(int(s) for s in shape)
        arr = shared_array(dims, dtypes.numpy_carrier(dt), None if init is None else np.asarray(init))
        t = DeviceTensor(arr.ctypes.data, dims, dt, buffer=self)
        self._resident[t.data_ptr] = arr
        return t

    def free_tensor(self, t: DeviceTensor, *, worker_id: int = 0) -> None:
        """Free a resident tensor (idempotent)."""
        self._resident.pop(t.data_ptr, None)
        t.freed = True

    def alloc_stacked_tensor(self, init: Any, worker_ids: Sequence[int] | None = None) -> StackedDeviceTensor:
        """A resident ``[B, *tail]`` tensor from host tensor ``init``, shard ``i`` on ``worker_ids[i]`` (default ``i``).

        The shards lie back to back in one shared buffer (every rank shares this host), which a
        program taking the stacked tensor receives whole.
        """
        whole = self.alloc_tensor(tuple(init.shape), init.dtype, init=_host_array(init))
        tail = tuple(whole.shape[1:])
        step = int(np.prod(tail, dtype=np.int64)) * whole.dtype.itemsize
        shards = [DeviceTensor(whole.data_ptr + i * step, tail, whole.dtype, buffer=self)
                  for i in range(whole.shape[0])]
        return StackedDeviceTensor(shards, whole.shape, tuple(worker_ids) if worker_ids is not None
                                   else tuple(range(whole.shape[0])))

    def free_stacked_tensor(self, t: StackedDeviceTensor) -> None:
        """Free a tensor from :meth:`alloc_stacked_tensor` (idempotent)."""
        self._resident.pop(t.shards[0].data_ptr, None)
        for shard in t.shards:
            shard.freed = True

    def copy_stacked_from(self, t: StackedDeviceTensor, dst: Any) -> None:
        """Copy every shard of ``t`` into host tensor ``dst`` (shape ``t.full_shape``)."""
        import torch

        arr = self._resident.get(t.shards[0].data_ptr)
        if arr is None or t.shards[0].freed:
            raise ValueError("copy_stacked_from: the stacked tensor was freed or does not belong to this worker")
        src = torch.from_numpy(arr)
        dst.copy_(src.view(dst.dtype) if src.dtype != dst.dtype and src.element_size() == dst.element_size() else src)

    # -- dispatch -------------------------------------------------------------------------------
    def __call__(self, *args: Any, config: Any = None) -> Any:
        if len(self.programs) > 1:
            raise TypeError("rt(*args) is ambiguous with several prepared programs; use rt.run(compiled, *args)")
        return self.run(self.programs[0], *args, config=config)

    def run(self, compiled: Any, *args: Any, config: Any = None) -> Any:
        """Dispatch ``compiled`` (one of the prepared programs) with ``args``."""
        self._check_open("run")
        if not any(compiled is p or compiled.output_dir == p.output_dir for p in self.programs):
            raise ValueError(f"{compiled.output_dir.name} is not prepared on this DistributedWorker; "
                             "pass it in DistributedWorker([...]) or prepare(extra_compiled=[...])")
        for a in args:
            if isinstance(a, StackedDeviceTensor):
                a = a.shards[0]
            if isinstance(a, DeviceTensor) and (a.freed or a.data_ptr not in self._resident):
                raise ValueError("a DeviceTensor argument was freed or does not belong to this DistributedWorker")
        return execute(compiled, list(args), self.callbacks, config, self.wait_timeout_s)

    def submit(self, compiled: Any, *args: Any, config: Any = None) -> DistributedRunHandle:
        """Run ``compiled`` like :meth:`run` and return its :class:`DistributedRunHandle` (already complete here).

        A dispatch that fails is reported by the handle (``result()``/``wait()`` raise its error).
        """
        try:
            self.run(compiled, *args, config=config)
        except Exception as exc:  # noqa: BLE001 - kept for the handle to raise, as upstream's submit does
            return DistributedRunHandle(exc)
        return DistributedRunHandle()

    def _check_open(self, op: str) -> None:
        if self._closed:
            raise UserError(f"DistributedWorker.{op}(): the worker is closed")


def _check_callbacks(progs: list[Any], given: dict[str, Callable[..., Any]]) -> dict[str, Callable[..., Any]]:
    declared = {s["name"]: s["requires_runtime_binding"] for p in progs for s in p.sub_workers}
    unknown = sorted(set(given) - set(declared))
    if unknown:
        raise ValueError(f"callbacks names {unknown} are not sub-workers of the prepared program(s); "
                         f"declared SubWorkers: {sorted(declared)}")
    missing = sorted(n for n, needs in declared.items() if needs and n not in given)
    if missing:
        raise ValueError(f"SubWorkers {missing} are runtime-bound callbacks (declared with a `...` body) and "
                         "must be supplied via prepare(callbacks={...})")
    for name, fn in given.items():
        if not callable(fn):
            raise TypeError(f"callback for SubWorker '{name}' is not callable: {fn!r}")
    return dict(given)


# -- one dispatch ---------------------------------------------------------------------------------
def execute(prog: Any, args: list[Any], callbacks: dict[str, Callable[..., Any]], config: Any = None,
            wait_timeout_s: float = 10.0) -> None:
    """Run the distributed program ``prog`` once with host arguments ``args`` (see the module docstring)."""
    from pypto.runtime.distributed import RankArena

    _require_torch()
    platform = getattr(config, "platform", None) or prog.platform
    staged = [_stage(a) for a in args]
    rec = HostRecorder(len(prog.device_ids), prog.chip_outputs(), frozenset(callbacks))
    prog.host_callable()(rec, *[s[0] for s in staged])
    chips = {name: prog.chip_program(name, platform) for name in prog.chip_names}
    _build_chips(chips, platform)
    arena = RankArena(len(prog.device_ids), rec.region_bytes)
    try:
        for step in rec.steps:
            if isinstance(step, Phase):
                _run_phase(step, chips, arena, prog, platform, wait_timeout_s)
            else:
                _run_callback(step, callbacks)
    finally:
        arena.close()
    for shared, original in staged:
        if original is not None:
            original.copy_(shared)


def _require_torch() -> None:
    """A run needs torch (the HOST function gets torch views of the shared tensors); say so, not a traceback."""
    try:
        import torch  # noqa: F401
    except ModuleNotFoundError:
        raise UserError("running a distributed program needs torch: its HOST function receives torch views of the "
                        "shared tensors (also for numpy arguments), to slice them per rank",
                        hint="pip install torch==2.13.0 (the CPU wheel; the 'torch' extra pins it)") from None


def _host_array(init: Any) -> np.ndarray:
    """A numpy array of ``init``'s bytes (bf16 torch tensors as raw 16-bit words)."""
    import torch

    if isinstance(init, torch.Tensor):
        t = init.detach().cpu().contiguous()
        return (t.view(torch.int16) if t.dtype == torch.bfloat16 else t).numpy()
    return np.asarray(init)


def _stage(arg: Any) -> tuple[Any, Any]:
    """(what the host function gets, the user's tensor to copy back into, if staged)."""
    import torch

    if isinstance(arg, StackedDeviceTensor):  # shards back to back in one resident buffer: stage it whole
        base = arg.contiguous_base()
        if base is None:
            raise UserError("a StackedDeviceTensor passed to a distributed program must come from "
                            "DistributedWorker.alloc_stacked_tensor (its shards in one buffer)")
        arg = DeviceTensor(base, arg.full_shape, arg.dtype, buffer=arg.shards[0].buffer)
    if isinstance(arg, DeviceTensor):  # resident: shared memory already; a torch view lets host code slice it
        view = torch.from_numpy(arg.numpy())
        return (view if arg.dtype.numpy else view.view(getattr(torch, arg.dtype.torch))), None
    if isinstance(arg, np.ndarray):
        from pypto.runtime.distributed import shared_array

        arr = shared_array(arg.shape, arg.dtype, arg)
        return torch.from_numpy(arr), _NumpyBack(arg)
    if not isinstance(arg, torch.Tensor):
        if isinstance(arg, int | float | bool):
            return arg, None
        raise TypeError(f"a distributed program takes torch tensors, numpy arrays, resident DeviceTensors and "
                        f"scalars, got {type(arg).__name__}")
    if arg.is_shared() and arg.is_contiguous():
        return arg, None
    from pypto.runtime.distributed import shared_array

    arr = shared_array(tuple(arg.shape), np.uint8 if arg.dtype == torch.bfloat16 else arg.numpy().dtype)
    shared = torch.from_numpy(arr)
    shared = shared.view(torch.bfloat16) if arg.dtype == torch.bfloat16 else shared
    shared.copy_(arg)
    return shared, arg


class _NumpyBack:
    """Copy-back target of a staged numpy argument (``copy_`` like a torch tensor)."""

    def __init__(self, arr: np.ndarray) -> None:
        self.arr = arr

    def copy_(self, shared: Any) -> None:
        self.arr[...] = shared.numpy()


def _build_chips(chips: dict[str, Any], platform: str) -> None:
    """Build every chip program's kernels and orchestration, and the runtime with its comm extras, here, so
    the ranks only load them."""
    from pypto.artifact import load_artifact
    from pypto.runtime import build

    for compiled in chips.values():
        build.build_artifact(load_artifact(compiled.output_dir), platform, sidecars=False)
    build.runtime_library(platform, "tensormap_and_ringbuffer")  # the ranks' ChipWorker(cfg) default
    build.runtime_extras()


def _run_phase(phase: Phase, chips: dict[str, Any], arena: Any, prog: Any, platform: str,
               wait_timeout_s: float) -> None:
    from pypto.runtime import ChipWorker, RunConfig
    from pypto.runtime.distributed import CommContext, run_ranks

    def rank_main(rank: int) -> None:
        ctx = CommContext.for_rank(arena, rank, wait_timeout_s)
        cfg = RunConfig(platform=platform, device_id=prog.device_ids[rank])
        with ChipWorker(cfg, comm=ctx) as worker:
            for d in phase.dispatches:
                if d.rank == rank:
                    worker.run(chips[d.program], *_materialize(d, arena, rank))

    run_ranks(len(prog.device_ids), rank_main, timeout_s=RUN_TIMEOUT_S, label=prog.output_dir.name, arena=arena)


def _materialize(d: Dispatch, arena: Any, rank: int) -> list[Any]:
    import torch

    from pypto.runtime import dtypes

    out = []
    for a in d.args:
        if isinstance(a, WindowView):
            rt = dtypes.coerce(a.dtype.value.lower())
            view = arena.view(rank, a.buffer.offset, a.shape, dtypes.numpy_carrier(rt))
            a = torch.from_numpy(view)
        out.append(a)
    return out


def _run_callback(step: Callback, callbacks: dict[str, Callable[..., Any]]) -> None:
    fn = callbacks.get(step.name)
    if fn is None:
        raise UserError(f"SubWorker '{step.name}' was dispatched but no callback is bound to it",
                        hint=f"prepare(callbacks={{'{step.name}': fn}})")
    fn(tuple(ContinuousTensor.of(a) for a in step.args))


def host_function(path: Path, name: str) -> Callable[..., Any]:
    scope: dict[str, Any] = {}
    exec(compile(path.read_text(encoding="utf-8"), str(path), "exec"), scope)  # noqa: S102 - our generated code
    return scope[name]


Worker.register(DistributedWorker)
