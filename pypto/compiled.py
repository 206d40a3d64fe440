"""CompiledProgram: a handle on an artifact directory plus what dispatch needs to know about it.

Floor: beside the driver, above the runtime (calling a handle runs it) and ``artifact`` (its
metadata record, :class:`~pypto.artifact.ArtifactMeta`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pypto.artifact.meta import ArtifactMeta, ParamInfo
from pypto.ir.function import Program
from pypto.ir.options import BackendType, backend_for_platform, default_sim_platform
from pypto.simpler_fallback import install_fallback

install_fallback()  # ``from simpler.worker import Worker`` drives chip_callable when no real simpler is installed


class CompiledProgram:
    """Handle on a compiled artifact directory; callable to run it on the configured platform.

    It also acts as a path: ``str()``/``os.fspath()`` give the directory, equality is by directory.
    """

    def __init__(
        self,
        program: Program | None,
        output_dir: str | os.PathLike[str],
        *,
        backend_type: BackendType = BackendType.Ascend910B,
        platform: str | None = None,
        runtime: str = "tensormap_and_ringbuffer",
        params: list[ParamInfo] | None = None,
        num_return_types: int = 0,
        toolchain: str | None = None,
        orchestration_names: list[str] | None = None,
    ) -> None:
        self.program = program
        self.output_dir = Path(output_dir).resolve()
        self.backend_type = backend_type
        self.platform = platform or default_sim_platform(backend_type)
        self.runtime_name = runtime
        self._params = list(params or [])
        self.num_return_types = num_return_types
        self.toolchain = toolchain
        self.orchestration_names = sorted(orchestration_names or [])
        self._chip_callable: Any = None

    # -- metadata -------------------------------------------------------------------------------
    @property
    def param_names(self) -> list[str]:
        return [p.name for p in self._params]

    @property
    def params(self) -> list[ParamInfo]:
        return list(self._params)

    @property
    def output_indices(self) -> list[int]:
        """Indices of pure ``Out`` params (auto-allocated in return-style calls)."""
        return [i for i, p in enumerate(self._params) if p.direction == "Out"]

    @property
    def has_return(self) -> bool:
        return self.num_return_types > 0

    @property
    def runtime_config(self) -> dict[str, Any]:
        """RUNTIME_CONFIG from ``kernel_config.py`` (requires an assembled artifact)."""
        from pypto.artifact.directory import load_artifact

        return dict(load_artifact(self.output_dir).runtime_config)

    def meta(self) -> ArtifactMeta:
        """The ``compiled_meta.json`` record of this program."""
        return ArtifactMeta(tuple(self._params), self.num_return_types, self.platform, self.backend_type.value,
                            self.runtime_name, self.toolchain)

    @classmethod
    def from_meta(cls, program: Program | None, output_dir: str | os.PathLike[str], meta: ArtifactMeta, *,
                  platform: str | None = None, backend_type: BackendType | None = None) -> CompiledProgram:
        """The handle on ``output_dir`` described by ``meta`` (``platform``/``backend_type`` override it)."""
        plat = platform or meta.platform
        backend = backend_type or (backend_for_platform(plat) if plat else BackendType(meta.backend_type))
        return cls(program, output_dir, backend_type=backend, platform=plat, runtime=meta.runtime,
                   params=list(meta.params), num_return_types=meta.num_return_types, toolchain=meta.toolchain)

    @classmethod
    def from_dir(cls, output_dir: str | os.PathLike[str], *, platform: str | None = None,
                 backend_type: BackendType | None = None) -> CompiledProgram:
        """Rebuild the handle from ``compiled_meta.json`` (FileNotFoundError / ValueError if bad)."""
        return cls.from_meta(None, output_dir, ArtifactMeta.read(output_dir), platform=platform,
                             backend_type=backend_type)

    # -- running --------------------------------------------------------------------------------
    def __call__(self, *args: Any, config: Any = None) -> Any:
        """Run on the sim platform: in place (all args) -> None; inputs only -> outputs."""
        if self.orchestration_names:
            raise TypeError("this artifact has several orchestration programs; call compiled['name'](...)")
        from pypto.runtime.worker import call_compiled

        return call_compiled(self, args, config)

    # -- built objects (upstream's extraction surface for driving a worker by hand) ---------------
    def load(self) -> None:
        """Build the kernels and orchestration for :attr:`platform` now (else :attr:`chip_callable` does)."""
        if self._chip_callable is None:
            from pypto.runtime.device_runner import compile_and_assemble

            self._chip_callable, _, _ = compile_and_assemble(self.output_dir, self.platform)

    @property
    def chip_callable(self) -> Any:
        """The built artifact (:class:`pypto.runtime.device_runner.ChipCallable`), built once per handle;
        :func:`pypto.runtime.device_runner.execute_on_device` runs it."""
        self.load()
        return self._chip_callable

    def build_orch_args(self, *args: Any, worker: Any = None) -> tuple[list[Any], list[Any], bool]:
        """``(orch_args, coerced, return_style)`` for a call with ``args``: ``coerced`` holds every parameter's
        value (a return-style call, inputs only, gets its outputs allocated at :attr:`output_indices`), and
        ``orch_args`` is what :func:`pypto.runtime.device_runner.execute_on_device` takes. ``worker`` is accepted
        for upstream's signature; the simulator's arguments do not depend on it."""
        from pypto.artifact.directory import load_artifact
        from pypto.runtime.dispatch import full_call_args

        del worker
        full, return_style = full_call_args(load_artifact(self.output_dir), args)
        return list(full), full, return_style

    def build_call_config(self, config: Any = None, *, aicpu_thread_num: int | None = None) -> Any:
        """The :class:`~pypto.runtime.RunConfig` of a run: ``config`` (default: one for :attr:`platform`) with
        ``aicpu_thread_num`` taken from the keyword, else ``config``, else ``RUNTIME_CONFIG``."""
        import dataclasses

        from pypto.runtime.config import RunConfig

        cfg = config if config is not None else RunConfig(platform=self.platform)
        threads = aicpu_thread_num if aicpu_thread_num is not None else cfg.aicpu_thread_num
        if threads is None:
            threads = self.runtime_config.get("aicpu_thread_num")
        return dataclasses.replace(cfg, aicpu_thread_num=threads)

    # -- path behaviour -------------------------------------------------------------------------
    def validate_ir(self, tensors: dict[str, Any], expected: dict[str, Any] | None = None, *,
                    rtol: float = 5e-2, atol: float = 5e-2) -> None:
        """Run every ``passes_dump/`` IR through PyTorch and check ``expected`` after each pass.

        Raises ``FileNotFoundError`` without ``passes_dump/`` and ``AssertionError`` naming the first pass
        whose result diverges (see :func:`pypto.debug.validate_pass_ir_codegen_results`).
        """
        from pypto.debug import validate_ir

        validate_ir(self.output_dir, tensors, expected, rtol=rtol, atol=atol)

    def __fspath__(self) -> str:
        return str(self.output_dir)

    def __str__(self) -> str:
        return str(self.output_dir)

    def __repr__(self) -> str:
        return f"CompiledProgram({self.output_dir})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CompiledProgram) and other.output_dir == self.output_dir

    def __hash__(self) -> int:
        return hash(self.output_dir)
