"""DistributedCompiledProgram: the handle on a distributed artifact directory (see :mod:`.build`)."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pypto.jit.distributed.build import HOST_FILE, NEXT_LEVELS, ParamSpec, read_meta
from pypto.runtime.dispatch import DeviceTensor


class DistributedCompiledProgram:
    """A compiled HOST-level program: a host orchestrator plus one chip sub-build per chip program.

    ``compiled(*args)`` runs it once (all parameters in place, or inputs only: the Out tensors are
    allocated and returned); ``compiled.prepare(callbacks=..., extra_compiled=...)`` gives a
    :class:`~pypto.jit.distributed.worker.DistributedWorker` for many dispatches and resident tensors.
    """

    def __init__(self, output_dir: str | os.PathLike[str], meta: dict[str, Any], *, program: Any = None,
                 platform: str | None = None, distributed_config: Any = None) -> None:
        from pypto.ir.distributed_compiled_program import DistributedConfig

        self._output_dir = Path(output_dir).resolve()
        self._meta = meta
        self._program = program
        self._platform = platform or meta["platform"]
        dc = meta["distributed_config"]
        self.distributed_config = distributed_config or DistributedConfig(
            device_ids=list(dc["device_ids"]), num_sub_workers=dc["num_sub_workers"], runtime=dc["runtime"],
            aicpu_thread_num=dc["aicpu_thread_num"])
        self._host: Callable[..., Any] | None = None
        self._chips: dict[tuple[str, str], Any] = {}

    @classmethod
    def from_dir(cls, output_dir: str | os.PathLike[str], *, platform: str | None = None,
                 backend_type: Any = None, distributed_config: Any = None) -> DistributedCompiledProgram:
        """Reopen a distributed artifact (``distributed_meta.json``) without recompiling."""
        return cls(output_dir, read_meta(Path(output_dir)), platform=platform, distributed_config=distributed_config)

    # -- metadata -------------------------------------------------------------------------------
    output_dir = property(lambda self: self._output_dir)
    program = property(lambda self: self._program)
    platform = property(lambda self: self._platform)
    device_ids = property(lambda self: list(self.distributed_config.device_ids))
    chip_names = property(lambda self: list(self._meta["chip_programs"]))
    sub_workers = property(lambda self: list(self._meta.get("sub_workers", [])))

    @property
    def params(self) -> list[ParamSpec]:
        return [ParamSpec.from_dict(p) for p in self._meta["params"]]

    @property
    def param_names(self) -> list[str]:
        return [p.name for p in self.params]

    @property
    def output_indices(self) -> list[int]:
        return [i for i, p in enumerate(self.params) if p.direction == "Out"]

    def _get_metadata(self) -> tuple[list[ParamSpec], list[int], list[Any]]:
        """Upstream's ``(param infos, output indices, return types)``; harnesses (pypto-lib's ``golden``)
        order their arguments by the infos' ``name``."""
        return self.params, self.output_indices, [None] * int(self._meta.get("num_return_types", 0))

    def __fspath__(self) -> str:
        return str(self._output_dir)

    def __str__(self) -> str:
        return str(self._output_dir)

    def __repr__(self) -> str:
        return f"DistributedCompiledProgram('{self._output_dir}', ranks={len(self.device_ids)})"

    # -- parts ----------------------------------------------------------------------------------
    def host_callable(self) -> Callable[..., Any]:
        if self._host is None:
            from pypto.jit.distributed.worker import host_function

            self._host = host_function(self._output_dir / HOST_FILE, self._meta["host_function"])
        return self._host

    def chip_program(self, name: str, platform: str | None = None) -> Any:
        """The chip-level sub-build ``next_levels/<name>/`` as a CompiledProgram."""
        from pypto.compiled import CompiledProgram

        plat = platform or self._platform
        hit = self._chips.get((name, plat))
        if hit is None:
            hit = self._chips[(name, plat)] = CompiledProgram.from_dir(self._output_dir / NEXT_LEVELS / name,
                                                                       platform=plat)
        return hit

    def chip_outputs(self) -> dict[str, list[int]]:
        """Per chip program, the argument positions it writes (what a host dispatch returns)."""
        return {n: [i for i, p in enumerate(self.chip_program(n).params) if p.direction in ("Out", "InOut")]
                for n in self.chip_names}

    # -- running --------------------------------------------------------------------------------
    def __call__(self, *args: Any, config: Any = None) -> Any:
        """Run once: all parameters (in place) -> None; inputs only -> the allocated Out tensor(s)."""
        if any(isinstance(a, DeviceTensor) for a in args):
            raise TypeError("a one-shot call takes host torch tensors only; for resident DeviceTensors use "
                            "`with compiled.prepare() as rt:` with rt.alloc_tensor(...) and rt.run(...)")
        params, outs = self.params, self.output_indices
        full = list(args)
        if len(args) == len(params) - len(outs) and outs and self._meta.get("num_return_types", 0):
            full = _with_outputs(list(args), params, outs)
        elif len(args) != len(params):
            raise TypeError(f"DistributedCompiledProgram expects {len(params)} arguments (in place), got "
                            f"{len(args)}. Parameters: {[p.name for p in params]}")
        with self.prepare(config) as rt:
            rt.run(self, *full, config=config)
        if len(full) == len(args):
            return None
        ret = [full[i] for i in outs]
        return ret[0] if len(ret) == 1 else tuple(ret)

    def prepare(self, config: Any = None, *, extra_compiled: Sequence[DistributedCompiledProgram] = (),
                callbacks: dict[str, Callable[..., Any]] | None = None,
                sub_worker_overrides: dict[str, Callable[..., Any]] | None = None, **options: Any) -> Any:
        """A DistributedWorker on this program (and ``extra_compiled``); a SubWorker declared with a
        ``...`` body must be bound in ``callbacks`` (ValueError otherwise)."""
        from pypto.jit.distributed.worker import DistributedWorker

        return DistributedWorker([self, *extra_compiled], config, callbacks=callbacks,
                                 sub_worker_overrides=sub_worker_overrides, **options)


def execute_distributed_compiled(output_dir: str | os.PathLike[str], args: Sequence[Any], config: Any = None, *,
                                 platform: str | None = None, distributed_config: Any = None) -> Any:
    """Reopen the distributed artifact in ``output_dir`` (no compile) and run it once with ``args``.

    ``platform``/``distributed_config`` override what the artifact recorded. Returns what the call
    returns: None for an in-place call, the allocated output(s) for a return-style one.
    """
    prog = DistributedCompiledProgram.from_dir(output_dir, platform=platform, distributed_config=distributed_config)
    return prog(*args, config=config)


def _with_outputs(inputs: list[Any], params: list[ParamSpec], outs: list[int]) -> list[Any]:
    import torch

    from pypto.runtime import dtypes

    full: list[Any] = []
    it = iter(inputs)
    for i, p in enumerate(params):
        if i in outs:
            if p.shape is None or any(d is None for d in p.shape):
                raise ValueError(f"cannot allocate output tensor '{p.name}': its shape is dynamic; pass it in")
            rt = dtypes.coerce(p.dtype.lower())
            full.append(torch.zeros(p.shape, dtype=getattr(torch, rt.torch)).share_memory_())
        else:
            full.append(next(it))
    return full
