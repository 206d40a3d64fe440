"""CompiledProgram: a handle on an artifact directory plus what dispatch needs to know about it."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pypto.ir.dtypes import DataType, from_meta
from pypto.ir.function import Program
from pypto.ir.options import BackendType, backend_for_platform, default_sim_platform

META_FILE = "compiled_meta.json"
META_SCHEMA = 1


@dataclass(frozen=True, slots=True)
class ParamInfo:
    """One orchestration parameter as recorded in ``compiled_meta.json``."""

    name: str
    direction: str
    shape: tuple[int, ...] | None
    dtype: DataType | None

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "direction": self.direction,
                "shape": list(self.shape) if self.shape is not None else None,
                "dtype": self.dtype.meta if self.dtype is not None else None}

    @staticmethod
    def from_json(d: dict[str, Any]) -> ParamInfo:
        shape = d.get("shape")
        dtype = d.get("dtype")
        return ParamInfo(str(d["name"]), str(d["direction"]), tuple(shape) if shape is not None else None,
                         from_meta(dtype) if dtype else None)


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
        from pypto.runtime.kernel_config import load_kernel_config

        return dict(load_kernel_config(self.output_dir).runtime_config)

    def meta_json(self) -> dict[str, Any]:
        """The ``compiled_meta.json`` document for this program."""
        return {"schema": META_SCHEMA, "params": [p.to_json() for p in self._params],
                "num_return_types": self.num_return_types, "platform": self.platform,
                "backend_type": self.backend_type.value, "runtime": self.runtime_name,
                "toolchain": self.toolchain}

    @classmethod
    def from_dir(cls, output_dir: str | os.PathLike[str], *, platform: str | None = None,
                 backend_type: BackendType | None = None) -> CompiledProgram:
        """Rebuild the handle from ``compiled_meta.json`` (FileNotFoundError / ValueError if bad)."""
        path = Path(output_dir) / META_FILE
        if not path.is_file():
            raise FileNotFoundError(
                f"{path} not found: '{output_dir}' is not a complete pypto artifact directory "
                "(compile did not finish, or this is not an output dir of ir.compile)")
        try:
            meta = json.loads(path.read_text())
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}: corrupt metadata ({exc}); recompile the program") from exc
        if not isinstance(meta, dict) or meta.get("schema") != META_SCHEMA or "params" not in meta:
            raise ValueError(f"{path}: unsupported metadata schema {meta.get('schema') if isinstance(meta, dict) else meta!r}"
                             f" (expected {META_SCHEMA}); recompile with this pypto version")
        plat = platform or meta.get("platform")
        backend = backend_type or (backend_for_platform(plat) if plat else BackendType(meta["backend_type"]))
        return cls(None, output_dir, backend_type=backend, platform=plat,
                   runtime=meta.get("runtime", "tensormap_and_ringbuffer"),
                   params=[ParamInfo.from_json(p) for p in meta["params"]],
                   num_return_types=int(meta.get("num_return_types", 0)), toolchain=meta.get("toolchain"))

    # -- running --------------------------------------------------------------------------------
    def __call__(self, *args: Any, config: Any = None) -> Any:
        """Run on the sim platform: in place (all args) -> None; inputs only -> outputs."""
        if self.orchestration_names:
            raise TypeError("this artifact has several orchestration programs; call compiled['name'](...)")
        from pypto.runtime.dispatch import call_compiled

        return call_compiled(self, args, config)

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
