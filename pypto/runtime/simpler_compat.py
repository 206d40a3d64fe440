"""The ``Worker`` of pypto's stand-in for upstream's runtime package ``simpler`` (see :mod:`pypto.simpler_fallback`).

Upstream programs may drive a chip by hand with ``from simpler.worker import Worker``
(``Worker(level=2, platform=..., device_id=..., runtime=...)``, ``init()``, ``register(chip_callable)``,
``run(handle, orch_args, config)``, ``unregister(handle)``, ``close()``). When no real ``simpler`` is
installed, that import gives this level-2 :class:`Worker` over a :class:`~pypto.runtime.ChipWorker`. It
refuses what it cannot do: hardware platforms, levels above 2, targets that are not a pypto ChipCallable.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pypto.errors import UserError

SIM_ONLY = ("a2a3sim", "a5sim")


class StandInRefusal(UserError, NotImplementedError):
    """What the stand-in cannot do (a level or platform only the real ``simpler`` runs).

    A :class:`~pypto.errors.UserError` with a hint, and still a ``NotImplementedError`` (for a level) or a
    ``RuntimeError`` (its base) for code written against the real simpler.
    """


@dataclass(eq=False)
class CallableHandle:
    """What :meth:`Worker.register` returns: an opaque handle :meth:`Worker.run` and ``unregister`` take."""

    handle_id: int
    registration: Any


class Worker:
    """``simpler.worker.Worker`` at level 2 (one simulated chip) for ``a2a3sim`` / ``a5sim``."""

    def __init__(self, level: int, **config: Any) -> None:
        if level != 2:
            raise StandInRefusal(
                f"simpler.worker.Worker(level={level}): pypto's simulator stand-in for simpler runs one chip "
                "(level=2)", hint="for multi-chip runs use pypto.runtime.DistributedWorker, or install the real "
                "simpler (hw-native-sys/simpler)")
        platform = config.get("platform", "a2a3sim")
        if platform not in SIM_ONLY:
            raise StandInRefusal(
                f"simpler.worker.Worker(platform={platform!r}): pypto's stand-in for simpler runs only the "
                f"simulators ({', '.join(SIM_ONLY)})", hint=f"running on {platform!r} needs the real simpler "
                "runtime (hw-native-sys/simpler) installed, which then takes precedence")
        self.level = level
        self.platform = platform
        self.device_id = int(config.get("device_id", 0))
        self.runtime = config.get("runtime", "tensormap_and_ringbuffer")
        self._chip: Any = None
        self._handles: dict[int, CallableHandle] = {}
        self._next_id = 0

    def init(self) -> None:
        """Start the simulated chip (its core threads)."""
        from pypto.runtime.config import RunConfig
        from pypto.runtime.worker import ChipWorker

        if self._chip is None:
            self._chip = ChipWorker(RunConfig(platform=self.platform, device_id=self.device_id),
                                    runtime=self.runtime)

    def _ready(self, op: str) -> Any:
        if self._chip is None or not self._chip.initialized:
            raise RuntimeError(f"simpler.worker.Worker.{op}(): call init() first (or the worker was closed)")
        return self._chip

    def register(self, target: Any) -> CallableHandle:
        """Load ``target`` (``CompiledProgram.chip_callable``) and return its handle."""
        from pypto.runtime.device_runner import ChipCallable

        if not isinstance(target, ChipCallable):
            raise TypeError(f"simpler.worker.Worker.register: level 2 takes a ChipCallable "
                            f"(CompiledProgram.chip_callable), got {type(target).__name__}")
        reg = self._ready("register").register(target)
        self._next_id += 1
        handle = CallableHandle(self._next_id, reg)
        self._handles[handle.handle_id] = handle
        return handle

    def run(self, callable: CallableHandle, args: Any = None, config: Any = None) -> None:
        """Run a registered program with ``args`` (``build_orch_args``' list; outputs written in place)."""
        self._ready("run")
        if not isinstance(callable, CallableHandle) or self._handles.get(callable.handle_id) is not callable:
            raise KeyError(f"simpler.worker.Worker.run: {callable!r} is not registered on this worker")
        callable.registration(*(args or ()), config=config)

    def unregister(self, handle: CallableHandle) -> None:
        """Forget a handle (KeyError if it was never registered)."""
        if self._handles.pop(getattr(handle, "handle_id", None), None) is None:
            raise KeyError(f"simpler.worker.Worker.unregister: {handle!r} was never registered")
        handle.registration.unregister()

    def close(self) -> None:
        """Stop the chip and drop every handle (idempotent)."""
        if self._chip is not None:
            self._chip.close()
            self._chip = None
        self._handles.clear()


__all__ = ["CallableHandle", "Worker"]
