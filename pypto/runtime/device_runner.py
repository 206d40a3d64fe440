"""Upstream's ``pypto.runtime.device_runner``: build an artifact directory, then run it on a chip.

:func:`compile_and_assemble` builds the kernels and the orchestration of ``work_dir`` for a platform
(cached by content) and returns ``(chip_callable, runtime_name, runtime_config)``; the callable is the
built :class:`ChipCallable` (the artifact plus its objects), which :func:`execute_on_device` runs. A
``with ChipWorker(...)`` block of the same platform and runtime is reused, as upstream's is.
:func:`build_orch_args_from_inputs` turns named ``(name, value)`` pairs into the run's argument list and
:func:`validate_golden` compares outputs with expected tensors (NaN in the expected tensor: not compared).
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


OrchArgs = tuple[list[Any], dict[str, Any], dict[str, Any], dict[str, Any]]


def build_orch_args_from_inputs(inputs: list[tuple[str, Any]], output_names: set[str]) -> OrchArgs:
    """``(orch_args, all_values, inputs, outputs)`` from ordered ``(name, tensor or ctypes scalar)`` pairs.

    Tensors are made contiguous CPU tensors (``orch_args`` holds the same objects, so a run writes the
    ``outputs`` entries in place); a name in ``output_names`` or starting with ``out`` is an output.
    ``all_values`` maps every name to its tensor or its scalar's Python value. Anything else is a TypeError.
    """
    import ctypes

    import torch

    orch_args: list[Any] = []
    values: dict[str, Any] = {}
    ins: dict[str, Any] = {}
    outs: dict[str, Any] = {}
    for name, value in inputs:
        if isinstance(value, torch.Tensor):
            value = value.cpu().contiguous()
            (outs if name in output_names or name.startswith("out") else ins)[name] = value
            values[name] = value
        elif isinstance(value, ctypes._SimpleCData):
            values[name] = value.value
        else:
            raise TypeError(f"build_orch_args_from_inputs: '{name}' is a {type(value).__name__}; pass a "
                            "torch.Tensor or a ctypes scalar (ctypes.c_int32(...), ctypes.c_float(...))")
        orch_args.append(value)
    return orch_args, values, ins, outs


def validate_golden(outputs: dict[str, Any], golden: dict[str, Any], rtol: float = 1e-5, atol: float = 1e-5) -> None:
    """AssertionError unless every output is within ``rtol``/``atol`` of ``golden`` (NaN there: don't care).

    The message names the output, how many elements differ and the first ones (flat index, actual,
    expected); an output without a golden of its name is a KeyError naming the goldens there are.
    """
    import torch

    for name, actual in outputs.items():
        if name not in golden:
            raise KeyError(f"validate_golden: no golden for output '{name}' (goldens: {sorted(golden)})")
        got, want = actual.cpu(), golden[name].cpu()
        care = ~torch.isnan(want) if want.is_floating_point() else torch.ones_like(want, dtype=torch.bool)
        close = torch.isclose(got, want.to(got.dtype), rtol=rtol, atol=atol) | ~care
        if bool(close.all()):
            continue
        bad = torch.nonzero(~close.flatten()).flatten()
        shown = "\n".join(f"    [{int(i)}] actual={got.flatten()[i].item()}, expected={want.flatten()[i].item()}"
                           for i in bad[:20])
        skipped = int((~care).sum())
        note = f" ({skipped} don't-care skipped)" if skipped else ""
        raise AssertionError(f"Output '{name}' does not match golden.\nMismatched elements: {bad.numel()}/"
                             f"{got.numel()}{note}\nrtol={rtol}, atol={atol}\nFirst {min(20, bad.numel())} "
                             f"mismatches:\n{shown}")


__all__ = ["ChipCallable", "build_orch_args_from_inputs", "compile_and_assemble", "execute_on_device",
           "validate_golden"]
