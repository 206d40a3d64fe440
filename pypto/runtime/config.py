"""``RunConfig``: how to build, run and check a compiled program."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pypto.ir import MemoryPlanner, OptimizationStrategy
from pypto.ir.options import backend_for_platform

_INT32_MAX = 2**31 - 1


def _ring_values(name: str, value: int | list[int] | tuple[int, ...] | None) -> None:
    if value is None:
        return
    values = list(value) if isinstance(value, list | tuple) else [value]
    if isinstance(value, list | tuple) and len(values) != 4:
        raise ValueError(f"{name} must be a scalar or a list of 4 (one per ring), got {len(values)} values")
    for v in values:
        if not isinstance(v, int) or isinstance(v, bool) or v < 0:
            raise ValueError(f"{name} values must be non-negative integers, got {v!r}")
        if v == 0:
            continue
        if name == "ring_task_window" and (v < 4 or v & (v - 1)):
            raise ValueError(f"ring_task_window must be a power of 2 >= 4 (0 = default), got {v}")
        if name == "ring_heap" and (v < 1024 or v & (v - 1)):
            raise ValueError(f"ring_heap must be a power of 2 >= 1024 bytes (0 = default), got {v}")
        if name == "ring_dep_pool" and not 4 <= v <= _INT32_MAX:
            raise ValueError(f"ring_dep_pool must be in [4, {_INT32_MAX}] (0 = default), got {v}")


def _default_platform() -> str:
    """a2a3sim (upstream's default), or the ``run_platform`` setting (env ``PYPTO_RUN_PLATFORM``)."""
    from pypto.toolchain import settings

    return settings.run_platform() or "a2a3sim"


class HardwareOnSimWarning(UserWarning):
    """A run configured for a hardware platform goes to its simulator (setting ``run_hw_on_sim``)."""


@dataclass
class RunConfig:
    """Run-time settings; field names and defaults follow upstream pypto's ``RunConfig``.

    ``platform`` defaults to ``a2a3sim``, or to the ``run_platform`` setting (env ``PYPTO_RUN_PLATFORM``)
    when set. ``backend_type`` is derived from ``platform`` (``a5*`` -> Ascend950, else Ascend910B). With the
    ``run_hw_on_sim`` setting on (env ``PYPTO_RUN_HW_ON_SIM=1`` or ``run_hw_on_sim = true`` in the
    config file), a hardware ``platform`` (``a2a3``, ``a5``) is replaced by the simulator of the same
    architecture (``a2a3sim``, ``a5sim``) and a ``HardwareOnSimWarning`` says so; off (the default),
    the platform is kept as given.
    ``dump_passes=None`` (the default) keeps ``ir.compile``'s default, so a jit ``compile()`` writes
    ``passes_dump/`` as the compile page describes; ``False`` turns the dumps off. Any DFX flag
    forces ``save_kernels``. ``deadlock_timeout_s`` (ours) bounds how long a simulated run may go without a
    task finishing before it is reported as a deadlock. ``jit_cache`` (ours) turns the on-disk ``@pl.jit``
    compile cache on or off for this config (None: the ``jit_cache`` setting, env ``PYPTO_JIT_CACHE``,
    default on).
    """

    platform: str = field(default_factory=lambda: _default_platform())
    device_id: int = 0
    rtol: float = 1e-5
    atol: float = 1e-5
    strategy: OptimizationStrategy = OptimizationStrategy.Default
    backend_type: str = "Ascend910B"
    dump_passes: Any = None
    save_kernels: bool = False
    save_kernels_dir: str | Path | None = None
    codegen_only: bool = False
    enable_chip_swimlane: int | bool = 0
    enable_dump_args: int = 0
    enable_pmu: int = 0
    enable_dep_gen: bool = False
    enable_scope_stats: bool = False
    compile_profiling: bool = False
    diagnostic_phase: Any = None
    disabled_diagnostics: Any = None
    golden_data_dir: str | Path | None = None
    aicpu_thread_num: int | None = None
    ring_task_window: int | list[int] | None = None
    ring_heap: int | list[int] | None = None
    ring_dep_pool: int | list[int] | None = None
    distributed_config: Any = None
    analyze_auto_scopes_for_deps: bool = False
    memory_planner: MemoryPlanner | None = None
    dump_ptoas_passes: bool = False
    deadlock_timeout_s: float = 30.0
    jit_cache: bool | None = None
    enable_l2_swimlane: int | bool | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        self._run_hw_on_sim()
        self.backend_type = backend_for_platform(self.platform).value  # ValueError naming the platforms
        if self.enable_l2_swimlane is not None:
            warnings.warn("enable_l2_swimlane is deprecated; use enable_chip_swimlane", DeprecationWarning,
                          stacklevel=3)
            self.enable_chip_swimlane = self.enable_l2_swimlane
            self.enable_l2_swimlane = None
        if self.enable_chip_swimlane is True:
            self.enable_chip_swimlane = 4
        self._validate()
        if self.dfx_enabled:
            self.save_kernels = True

    def _run_hw_on_sim(self) -> None:
        """Under the ``run_hw_on_sim`` setting, a hardware platform becomes its simulator (with a warning)."""
        from pypto.toolchain import platforms, settings

        info = platforms.PLATFORMS.get(self.platform)
        if info is None or info.simulated or not settings.run_hw_on_sim():  # an unknown one: error below
            return
        sim = platforms.sim_twin(self.platform)
        warnings.warn(f"RunConfig(platform={self.platform!r}) runs on {sim!r}: the run_hw_on_sim setting "
                      f"(env PYPTO_RUN_HW_ON_SIM) is on", HardwareOnSimWarning, stacklevel=4)
        self.platform = sim

    def _validate(self) -> None:
        if not 0 <= int(self.enable_chip_swimlane) <= 4:
            raise ValueError(f"enable_chip_swimlane must be 0-4 or a bool, got {self.enable_chip_swimlane!r}")
        if self.enable_dump_args not in (0, 1, 2):
            raise ValueError(f"enable_dump_args must be 0, 1 or 2, got {self.enable_dump_args!r}")
        if self.aicpu_thread_num not in (None, 0) and not 2 <= self.aicpu_thread_num <= 5:
            raise ValueError(f"aicpu_thread_num must be 0 (auto) or in range [2, 5], got {self.aicpu_thread_num}")
        if not (0 <= self.rtol < float("inf") and 0 <= self.atol < float("inf")):  # NaN fails both
            raise ValueError(f"rtol and atol must be finite numbers >= 0, got rtol={self.rtol}, atol={self.atol}")
        if self.deadlock_timeout_s <= 0:
            raise ValueError(f"deadlock_timeout_s must be > 0, got {self.deadlock_timeout_s}")
        for name in ("ring_task_window", "ring_heap", "ring_dep_pool"):
            _ring_values(name, getattr(self, name))

    @property
    def dfx_enabled(self) -> bool:
        """True if any diagnostic output is requested."""
        return bool(self.enable_chip_swimlane or self.enable_dump_args or self.enable_pmu or self.enable_dep_gen
                    or self.enable_scope_stats)

    def any_dfx_enabled(self) -> bool:
        """:attr:`dfx_enabled` under upstream's method name."""
        return self.dfx_enabled

    @property
    def task_window(self) -> int:
        """The simulator's live-task limit per ring (largest non-zero ring value, 0 = default)."""
        value = self.ring_task_window
        values = list(value) if isinstance(value, list | tuple) else [value or 0]
        return max(values)
