"""Upstream's ``pypto.runtime.runner``: :class:`RunConfig`, :func:`execute_compiled` and the compile-run entries.

:func:`execute_compiled` runs an artifact directory with ordered arguments (host tensors are written in
place) on the simulation platforms; :func:`compile_program`, :func:`run` and :class:`RunResult` live in
:mod:`pypto.flows.harness` (they compile) and are re-exported through ``_LAZY``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from pypto.lazy import lazy_getattr
from pypto.runtime.config import RunConfig
from pypto.runtime.worker import call_compiled

_LAZY = {"run": "pypto.flows.harness", "RunResult": "pypto.flows.harness",
         "compile_program": "pypto.flows.harness", "validate_persisted_outputs": "pypto.flows.device_run",
         "_execute_on_device": "pypto.flows.device_run"}  # the harness entries upstream's tests/st import


__getattr__ = lazy_getattr(__name__, _LAZY, globals())


@dataclass(frozen=True)
class _DfxOpts:
    """The five run-time diagnostics switches of :func:`execute_compiled` (upstream's ``_DfxOpts``)."""

    enable_chip_swimlane: int | bool = 0
    enable_dump_args: int = 0
    enable_pmu: int = 0
    enable_dep_gen: bool = False
    enable_scope_stats: bool = False

    def __post_init__(self) -> None:
        if self.enable_chip_swimlane is True:
            object.__setattr__(self, "enable_chip_swimlane", 4)

    def any(self) -> bool:
        """True when some diagnostic is requested (its outputs go to ``<work_dir>/dfx_outputs/``)."""
        return bool(self.enable_chip_swimlane or self.enable_dump_args or self.enable_pmu or self.enable_dep_gen
                    or self.enable_scope_stats)

    @classmethod
    def from_run_config(cls, cfg: RunConfig) -> _DfxOpts:
        return cls(cfg.enable_chip_swimlane, cfg.enable_dump_args, cfg.enable_pmu, cfg.enable_dep_gen,
                   cfg.enable_scope_stats)


def execute_compiled(
    work_dir: str | os.PathLike[str],
    args: list[Any],
    *,
    platform: str,
    device_id: int,
    dfx: _DfxOpts = _DfxOpts(),  # noqa: B008 - frozen, shared safely
    level: int = 2,
    aicpu_thread_num: int | None = None,
    analyze_auto_scopes_for_deps: bool = False,
) -> None:
    """Run the compiled artifact in ``work_dir`` with ``args`` in orchestration parameter order.

    ``args`` holds host tensors (torch CPU tensors or numpy arrays, outputs written in place),
    :class:`DeviceTensor` s and scalars (Python numbers or ``ctypes`` values such as ``c_float``).
    Kernels are built (cached) for ``platform``; a hardware platform (``a2a3``, ``a5``) needs CANN and
    fails with a :class:`~pypto.errors.ToolchainError` naming what is missing. ``dfx`` writes the
    requested diagnostics under ``<work_dir>/dfx_outputs/``. Only ``level=2`` (one chip) exists, as
    upstream; ``analyze_auto_scopes_for_deps`` is a compile option and is accepted and ignored here,
    as upstream does. Returns None.
    """
    del analyze_auto_scopes_for_deps
    if level != 2:
        raise ValueError(f"execute_compiled: only level=2 (one chip) is supported, got level={level}")
    if not isinstance(dfx, _DfxOpts):
        raise TypeError(f"execute_compiled: dfx must be a _DfxOpts, got {type(dfx).__name__}")
    config = RunConfig(platform=platform, device_id=device_id, aicpu_thread_num=aicpu_thread_num,
                       enable_chip_swimlane=dfx.enable_chip_swimlane, enable_dump_args=dfx.enable_dump_args,
                       enable_pmu=dfx.enable_pmu, enable_dep_gen=dfx.enable_dep_gen,
                       enable_scope_stats=dfx.enable_scope_stats)
    call_compiled(os.fspath(work_dir), tuple(args), config)


__all__ = ["RunConfig", "RunResult", "compile_program", "execute_compiled", "run"]  # noqa: F822 - the _LAZY names load on first use
