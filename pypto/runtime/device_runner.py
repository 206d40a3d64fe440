"""Upstream's ``pypto.runtime.device_runner``: build an artifact directory, then run it on a chip.

:func:`compile_and_assemble` builds the kernels and the orchestration of ``work_dir`` for a platform
(cached by content) and returns ``(chip_callable, runtime_name, runtime_config)``; the callable is the
built :class:`ChipCallable` (the artifact plus its objects), which :func:`execute_on_device` runs. A
``with ChipWorker(...)`` block of the same platform and runtime is reused, as upstream's is.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pypto.artifact.directory import ArtifactInfo, load_artifact
from pypto.runtime import build
from pypto.runtime.config import RunConfig
from pypto.runtime.worker import call_compiled


@dataclass(frozen=True)
class ChipCallable:
    """A built artifact: what it is (``info``), the loadable objects (``built``) and their ``platform``."""

    info: ArtifactInfo
    built: build.BuiltProgram
    platform: str = ""


def compile_and_assemble(work_dir: str | os.PathLike[str], platform: str) -> tuple[ChipCallable, str, dict[str, Any]]:
    """Build ``work_dir`` for ``platform``; FileNotFoundError naming ``kernel_config.py`` when it was not assembled."""
    info = load_artifact(Path(work_dir))
    return ChipCallable(info, build.build_artifact(info, platform), platform), info.runtime, dict(info.runtime_config)


def execute_on_device(chip_callable: ChipCallable, orch_args: list[Any], platform: str, runtime_name: str,
                      device_id: int, *, level: int = 2, aicpu_thread_num: int | None = None,
                      enable_sdma: bool = False, output_prefix: str | None = None,
                      enable_chip_swimlane: int | bool = 0, enable_dump_args: int = 0, enable_pmu: int = 0,
                      enable_dep_gen: bool = False, enable_scope_stats: bool = False,
                      runtime_env: dict[str, str] | None = None) -> None:
    """Run ``chip_callable`` with ``orch_args`` (outputs written in place); ``level`` must be 2 (one chip).

    Diagnostics go to the artifact's ``dfx_outputs/`` (``output_prefix``, ``enable_sdma`` and
    ``runtime_env`` are device-runtime settings the simulator has no use for and are ignored).
    """
    if level != 2:
        raise ValueError(f"execute_on_device: only level=2 (one chip) is supported, got {level}")
    if runtime_name != chip_callable.info.runtime:
        raise ValueError(f"execute_on_device: runtime {runtime_name!r} does not match the artifact's "
                         f"{chip_callable.info.runtime!r}")
    config = RunConfig(platform=platform, device_id=device_id, aicpu_thread_num=aicpu_thread_num,
                       enable_chip_swimlane=enable_chip_swimlane, enable_dump_args=enable_dump_args,
                       enable_pmu=enable_pmu, enable_dep_gen=enable_dep_gen, enable_scope_stats=enable_scope_stats)
    call_compiled(chip_callable.info, tuple(orch_args), config)


__all__ = ["ChipCallable", "compile_and_assemble", "execute_on_device"]
